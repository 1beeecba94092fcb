// A call's state, moved forward only, from whatever says what became of it: the provider's status
// callbacks (voice-callbacks.routes.ts), the local driver's played outcome, reconciliation and the
// dialer's own drops (voice.jobs.ts). Callbacks come late, twice and out of order; the call's state
// moves only to a later one (queued → ringing → in-progress → final), and the first final state stays.
// The moves that matter to the session come with the state: an answer by a person connects the call
// to the agent, unless the agent already has one (then this one is dropped, `canceled`, and its
// contact called again later), and drops the session's other calls still ringing; the end of a
// call frees the agent and the line (the dialer is woken). Each call's reconciliation job is moved
// on with every update, and cancelled at the final state.
import { FINAL_STATUSES, type CallStatus, type CallUpdate } from '../../platform/providers/telephony/telephony.ts';
import { presentOne } from '../../platform/resource/store.ts';
import { selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { WriteContext } from '../../platform/write.ts';
import { calls } from './calls.resource.ts';
import { queueContact, wakeDialer } from './sessions.store.ts';
import { HANG_UP, RECONCILE, reconcileKey, type CallPayload, type HangUpPayload } from './voice-kinds.ts';

const RANK: Record<CallStatus, number> = { queued: 0, ringing: 1, 'in-progress': 2, completed: 3, busy: 3, 'no-answer': 3, failed: 3, canceled: 3 };

// How long a call may go unheard of before its provider is asked (CALL_SILENCE_SECONDS, installed by
// the app's builders): ringing ends within minutes, talk may last an hour.
let silence = 120;

export function useCallSilence(seconds: number): void {
  silence = seconds;
}

/** The states a call may be silent in, and for how long (seconds). */
export const silenceOf = (status: string): number | undefined =>
  status === 'queued' || status === 'ringing' ? silence : status === 'in-progress' ? silence * 30 : undefined;

export const DROPPED = 'Dropped: the agent took another call';

/** Reads the call for an update, locked on PostgreSQL (callbacks of one call may arrive at once). */
export async function callForUpdate(w: WriteContext, id: string): Promise<Row | undefined> {
  let read = selectIn(w.tx, 'calls', w.scope).selectAll().where('id', '=', id);
  if (w.dialect === 'postgres') read = read.forUpdate();
  return (await read.executeTakeFirst()) as Row | undefined;
}

/** Watches the call: reconciliation asks the provider if it is silent for too long. */
export const watchCall = (w: WriteContext, id: string, status: string) =>
  void w.schedule(reconcileKey(id), RECONCILE, { call_id: id } satisfies CallPayload, (w.now + (silenceOf(status) ?? silence)) * 1000);

/**
 * Records `update` of the call `row` (read by `callForUpdate`) when it moves the call forward;
 * answers whether it did. Emits `call.completed` at the final state.
 */
export async function recordCallUpdate(w: WriteContext, row: Row, update: CallUpdate): Promise<boolean> {
  const from = row.status as CallStatus;
  if (RANK[update.status] <= RANK[from]) return false;
  const set: Record<string, unknown> = { status: update.status, last_update_at: w.now, updated_at: w.now };
  if (update.status === 'ringing') set.ringing_at = w.now;
  if (update.answeredBy) set.answered_by = update.answeredBy;
  if (update.status === 'in-progress') {
    set.answered_at = w.now;
    if (update.answeredBy !== 'machine' && row.session_id && !(await connect(w, row))) {
      Object.assign(set, { status: 'canceled', error: DROPPED });
      await drop(w, row, 'completed');
    }
  }
  const final = FINAL_STATUSES.has(set.status as CallStatus);
  if (final) {
    set.ended_at = w.now;
    if (update.error && !set.error) set.error = update.error.slice(0, 500);
    const answeredAt = (set.answered_at ?? row.answered_at) as number | null;
    set.duration = update.duration !== undefined ? Math.round(update.duration) : answeredAt !== null && answeredAt !== undefined ? w.now - Number(answeredAt) : 0;
  }
  await updateIn(w.tx, 'calls', w.scope).set(set as never).where('id', '=', row.id).execute();
  Object.assign(row, set);
  if (!final) {
    watchCall(w, row.id, String(set.status));
    return true;
  }
  w.cancel(reconcileKey(row.id));
  await release(w, row);
  w.emit('call.completed', await presentOne(calls, w.tx, w.scope, row));
  return true;
}

/**
 * Connects an answered call to its agent when the agent has no call; then the session's other calls
 * still ringing are dropped. False when the agent is taken (this call is dropped instead).
 */
async function connect(w: WriteContext, row: Row): Promise<boolean> {
  let read = selectIn(w.tx, 'voice_agents', w.scope).select(['id', 'current_call_id']).where('id', '=', String(row.agent_id));
  if (w.dialect === 'postgres') read = read.forUpdate();
  const agent = await read.executeTakeFirst();
  if (!agent || (agent.current_call_id && agent.current_call_id !== row.id)) return false;
  await updateIn(w.tx, 'voice_agents', w.scope).set({ current_call_id: row.id, status: 'busy', updated_at: w.now }).where('id', '=', agent.id).execute();
  const others = await selectIn(w.tx, 'calls', w.scope).selectAll().where('session_id', '=', String(row.session_id))
    .where('status', 'in', ['queued', 'ringing']).where('id', '!=', row.id).execute() as Row[];
  for (const other of others) {
    await updateIn(w.tx, 'calls', w.scope).set({ status: 'canceled', error: DROPPED, ended_at: w.now, duration: 0, last_update_at: w.now, updated_at: w.now }).where('id', '=', other.id).execute();
    w.cancel(reconcileKey(other.id));
    await drop(w, other, 'canceled');
    w.emit('call.completed', await presentOne(calls, w.tx, w.scope, { ...other, status: 'canceled', error: DROPPED, ended_at: w.now, duration: 0 }));
  }
  return true;
}

/** A dropped call: hung up at the provider (once placed) and its contact called again. */
async function drop(w: WriteContext, row: Row, status: HangUpPayload['status']): Promise<void> {
  if (row.provider_call_id) w.enqueue(HANG_UP, { call_id: row.id, status } satisfies HangUpPayload);
  if (row.session_id && row.contact_id) await queueContact(w, String(row.session_id), String(row.contact_id), 'returned', w.now);
}

/** A call that ended frees its agent (when it held them) and its line. */
async function release(w: WriteContext, row: Row): Promise<void> {
  if (row.agent_id) {
    await updateIn(w.tx, 'voice_agents', w.scope).set((eb) => ({ current_call_id: null, status: eb.case().when('status', '=', 'busy').then('available').else(eb.ref('status')).end(), updated_at: w.now }))
      .where('id', '=', String(row.agent_id)).where('current_call_id', '=', row.id).execute();
  }
  if (row.session_id) wakeDialer(w, String(row.session_id));
}
