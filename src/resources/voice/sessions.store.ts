// What dialer sessions do beyond the kernel's CRUD and lifecycle: the checks of a write, the start
// of a run, and the dialer's wake-ups (dialer.ts runs it) and queue.
import { Type } from 'typebox';
import { newId } from '../../platform/ids.ts';
import { requireProvider } from '../../platform/providers/registry.ts';
import { telephonyKind } from '../../platform/providers/telephony/telephony.ts';
import type { Hooks, Row } from '../../platform/resource/define.ts';
import { deleteIn, selectIn } from '../../platform/resource/tenancy.ts';
import { conflict } from '../../platform/errors.ts';
import { WEEKDAYS, type WeeklyIntervals } from '../../platform/time/windows.ts';
import { fieldError, ianaZone, NOT_A_TIME_ZONE } from '../../platform/time/zones.ts';
import type { WriteContext } from '../../platform/write.ts';
import { requireContactList } from '../lists/lists.store.ts';
import { DIAL, dialKey, type DialPayload } from './voice-kinds.ts';

/** The calls not yet ended: they hold a line. */
export const LIVE_CALLS = ['queued', 'ringing', 'in-progress'] as const;
const hour = (description: string, minimum: number, maximum: number, example: number) => Type.Integer({ minimum, maximum, description, examples: [example] });
export const CallingWindowInput = Type.Object({
  start_hour: hour('The first hour calls may be placed, 0 to 23', 0, 23, 8),
  end_hour: hour('The hour calls stop, 1 to 24 (later than start_hour)', 1, 24, 21),
  timezone: Type.Optional(Type.Union([Type.String({ maxLength: 64, description: 'The zone of contacts with no `timezone` of their own (an IANA name); the agent\'s when omitted', examples: ['America/New_York'] }), Type.Null()])),
}, { additionalProperties: false, description: 'Calling hours in each contact\'s time zone' });
export const CallingWindowOutput = Type.Object({
  start_hour: Type.Integer({ examples: [8] }), end_hour: Type.Integer({ examples: [21] }),
  timezone: Type.Union([Type.String(), Type.Null()], { description: 'The zone of contacts with none of their own; null: the agent\'s', examples: [null] }),
}, { description: 'Calling hours in each contact\'s time zone' });
export const DEFAULT_WINDOW = { start_hour: 8, end_hour: 21, timezone: null };

export type CallingWindow = { start_hour: number; end_hour: number; timezone: string | null };

const hh = (h: number) => `${String(h).padStart(2, '0')}:00`;
/** The calling hours as the week's windows: the same hours every day. */
export const weeklyOf = (window: CallingWindow): WeeklyIntervals =>
  Object.fromEntries(WEEKDAYS.map((d) => [d, [{ start: hh(window.start_hour), end: hh(window.end_hour) }]]));

/** Wakes the session's dialer at `at` (unix seconds; now when omitted), or sooner when it is due sooner. */
export const wakeDialer = (w: WriteContext, sessionId: string, at = w.now) =>
  void w.wake(dialKey(sessionId), DIAL, { session_id: sessionId } satisfies DialPayload, at * 1000);

/** A create's checks: the list holds contacts, the window is sound. */
export const sessionWritten: Hooks['beforeWrite'] = async (w, row, { before, input }) => {
  if (!before && typeof input.list_id === 'string') await requireContactList(w, input.list_id, 'The list a dialer session calls');
  const window = input.calling_window as CallingWindow | undefined;
  if (window) {
    if (window.end_hour <= window.start_hour) throw fieldError('calling_window.end_hour', 'must be later than start_hour');
    if (window.timezone !== undefined && window.timezone !== null && !ianaZone(window.timezone)) throw fieldError('calling_window.timezone', NOT_A_TIME_ZONE, 'value_error.timezone');
    row.calling_window = JSON.stringify({ ...window, timezone: window.timezone ?? null });
  }
  if (!before) row.skipped = '{}';
};

/** A running session is 409 (pause or stop it first); a deleted one's waiting contacts go with it. */
export const sessionDeleted: Hooks['beforeDelete'] = async (w, row) => {
  if (row.status === 'running') throw conflict('A dialer session that is running cannot be deleted: pause or stop it first');
  await deleteIn(w.tx, 'dialer_queue', w.scope).where('session_id', '=', row.id).execute();
  w.cancel(dialKey(row.id));
};

/** Running: a live session needs a provider to call through; its dialer starts now. */
export async function started(w: WriteContext, row: Row): Promise<{ set: Record<string, unknown> }> {
  await requireProvider(telephonyKind, w.tx, w.scope);
  wakeDialer(w, row.id);
  return { set: row.started_at ? {} : { started_at: w.now } };
}

/** An agent who became available wakes the running sessions dialing for them. */
export const agentWritten: Hooks['afterWrite'] = async (w, row, { before }) => {
  if (row.status !== 'available' || before?.status === 'available') return;
  const running = await selectIn(w.tx, 'dialer_sessions', w.scope).select('id').where('agent_id', '=', row.id).where('status', '=', 'running').execute();
  for (const s of running) wakeDialer(w, s.id);
};

/** Puts a contact in the session's queue, due at `at` (its hours, or now to be called again). */
export async function queueContact(w: WriteContext, sessionId: string, contactId: string, reason: 'returned' | 'window', at: number): Promise<void> {
  const row = { org_id: w.scope.orgId, mode: w.scope.mode, id: newId('dlq'), session_id: sessionId, contact_id: contactId, reason, due_at: at, created_at: w.now, updated_at: w.now };
  await w.tx.insertInto('dialer_queue').values(row).onConflict((oc) => oc.columns(['org_id', 'mode', 'session_id', 'contact_id']).doUpdateSet({ reason, due_at: at, updated_at: w.now })).execute();
  wakeDialer(w, sessionId, at);
}

