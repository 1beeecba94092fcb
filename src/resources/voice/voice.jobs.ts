// The voice group's background work (kinds named in voice-kinds.ts):
// - `voice.dial`: a session's dialer run (dialer.ts);
// - `voice.place`: hands one queued call to its number's telephony driver. The call is stamped
//   `placing_at` before the provider is asked: a run that finds it stamped without the provider's id
//   died during the call, and a real provider (which takes no idempotency key) is not asked again,
//   so the call fails rather than ring a person twice; the local driver answers the same id for the
//   same call and is simply asked again;
// - `voice.played`: an update of the local driver's outcome, delivered as a callback would be;
// - `voice.hang_up`: ends a dropped call at the provider;
// - `voice.reconcile`: a call silent for too long (its callbacks lost) is looked up at the provider,
//   and one never placed is failed, so no call stays in a state that is not final.
import type { Mode } from '../../db/schema.ts';
import { AppError } from '../../platform/errors.ts';
import { defineJobKind, type JobContext } from '../../platform/jobs/kinds.ts';
import { PermanentSendError } from '../../platform/providers/refusals.ts';
import { resolveProvider, type Resolved } from '../../platform/providers/registry.ts';
import { FINAL_STATUSES, telephonyKind, type CallStatus, type TelephonyDriver } from '../../platform/providers/telephony/telephony.ts';
import { presentOne } from '../../platform/resource/store.ts';
import { selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { Scope } from '../../platform/scope.ts';
import { secretOf } from '../../platform/secret.ts';
import type { WriteContext } from '../../platform/write.ts';
import { callForUpdate, recordCallUpdate, silenceOf, watchCall } from './call-updates.ts';
import { calls } from './calls.resource.ts';
import { dial } from './dialer.ts';
import { DIAL, HANG_UP, PLACE, PLAYED, RECONCILE, type CallPayload, type DialPayload, type HangUpPayload, type PlayedPayload } from './voice-kinds.ts';

const scopeOf = (job: { orgId: string; mode: string }): Scope => ({ orgId: job.orgId, mode: job.mode as Mode });

/** The driver of the call's number: its connection's, the default, or the operator's; the local one in test mode. */
async function driverOf(context: JobContext, scope: Scope, connectionId: string | null): Promise<Resolved<TelephonyDriver>> {
  const { database, config } = context;
  return resolveProvider(telephonyKind, { db: database.db, scope, secret: await secretOf(database.db, config.secretKey), config }, connectionId);
}

/** Fails a call that was never placed (or may have been, unknowably), with its reason. */
const failCall = (w: WriteContext, row: Row, error: string) => recordCallUpdate(w, row, { status: 'failed', error });

export const voiceDial = defineJobKind<DialPayload>({
  ...DIAL,
  async run({ session_id: id }, { write, job }) {
    await write(scopeOf(job), (w) => dial(w, id));
  },
});

export const voicePlace = defineJobKind<CallPayload>({
  ...PLACE,
  async run({ call_id: id }, context) {
    const scope = scopeOf(context.job);
    const { write } = context;
    // The driver is resolved before the write: its reads must not wait on the write's own lock.
    const call = await selectIn(context.database.db, 'calls', scope).select(['number_id']).where('id', '=', id).executeTakeFirst();
    if (!call) return;
    const number = await selectIn(context.database.db, 'voice_numbers', scope).select('connection_id').where('id', '=', String(call.number_id)).executeTakeFirst();
    let resolved: Resolved<TelephonyDriver> | AppError;
    try {
      resolved = await driverOf(context, scope, number?.connection_id ?? null);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      resolved = error;
    }
    const claimed = await write(scope, async (w) => {
      const row = await callForUpdate(w, id);
      if (!row || row.status !== 'queued' || row.provider_call_id) return undefined;
      if (resolved instanceof AppError) return void await failCall(w, row, resolved.message);
      if (row.placing_at && resolved.provider !== 'local') {
        return void await failCall(w, row, 'The service stopped while the provider was being asked: whether the call was placed is unknown, so it is not placed again');
      }
      await updateIn(w.tx, 'calls', w.scope).set({ placing_at: w.now, provider: resolved.provider, connection_id: resolved.connectionId, updated_at: w.now }).where('id', '=', id).execute();
      const agent = await selectIn(w.tx, 'voice_agents', w.scope).select(['id', 'phone']).where('id', '=', String(row.agent_id)).executeTakeFirst();
      return { row, driver: resolved.driver, agent: { phone: agent?.phone ?? null, client: String(row.agent_id) } };
    });
    if (!claimed) return;
    const { row, driver, agent } = claimed;
    let placed;
    try {
      placed = await driver.place({ reference: id, from: String(row.from_number), to: String(row.to_number), agent });
    } catch (error) {
      if (error instanceof PermanentSendError) return void await write(scope, async (w) => void await failCall(w, (await callForUpdate(w, id))!, error.message));
      // Nothing was placed: the next attempt may ask again.
      await write(scope, async (w) => void await updateIn(w.tx, 'calls', w.scope).set({ placing_at: null }).where('id', '=', id).execute());
      throw error;
    }
    await write(scope, async (w) => {
      const at = w.now;
      await updateIn(w.tx, 'calls', w.scope).set({ provider_call_id: placed.id, last_update_at: at, updated_at: at }).where('id', '=', id).execute();
      const now = await callForUpdate(w, id);
      // Failed meanwhile (not placed in time): the provider's call is ended rather than connected.
      if (FINAL_STATUSES.has(now!.status as CallStatus)) return void w.enqueue(HANG_UP, { call_id: id, status: 'canceled' } satisfies HangUpPayload);
      w.emit('call.started', await presentOne(calls, w.tx, w.scope, now!));
      if (now!.status === 'queued') watchCall(w, id, 'queued');
      for (const { afterMs, ...update } of placed.played ?? []) w.enqueue(PLAYED, { call_id: id, update } satisfies PlayedPayload, { runAt: at * 1000 + afterMs });
    });
  },
});

export const voicePlayed = defineJobKind<PlayedPayload>({
  ...PLAYED,
  async run({ call_id: id, update }, { write, job }) {
    await write(scopeOf(job), async (w) => {
      const row = await callForUpdate(w, id);
      if (row) await recordCallUpdate(w, row, update);
    });
  },
});

export const voiceHangUp = defineJobKind<HangUpPayload>({
  ...HANG_UP,
  async run({ call_id: id, status }, context) {
    const scope = scopeOf(context.job);
    const row = await selectIn(context.database.db, 'calls', scope).select(['provider_call_id', 'connection_id']).where('id', '=', id).executeTakeFirst();
    if (!row?.provider_call_id) return;
    try {
      await (await driverOf(context, scope, row.connection_id)).driver.hangUp(row.provider_call_id, status);
    } catch (error) {
      // The connection is gone or refuses for good: the provider ends the call itself.
      if (error instanceof AppError || error instanceof PermanentSendError) return;
      throw error;
    }
  },
});

export const voiceReconcile = defineJobKind<CallPayload>({
  ...RECONCILE,
  async run({ call_id: id }, context) {
    const scope = scopeOf(context.job);
    const { write } = context;
    const row = await selectIn(context.database.db, 'calls', scope).selectAll().where('id', '=', id).executeTakeFirst();
    if (!row || silenceOf(row.status) === undefined) return;
    if (!row.provider_call_id) {
      // Not handed to a provider in all that time (its placing job gave up, or waits behind others):
      // the contact's moment has passed, and nothing will ever be heard of it.
      return void await write(scope, async (w) => {
        const locked = await callForUpdate(w, id);
        if (locked && !locked.provider_call_id && locked.status === 'queued') await failCall(w, locked, 'The call was not placed in time: the provider could not be reached');
      });
    }
    const found = await (await driverOf(context, scope, row.connection_id)).driver.fetch(row.provider_call_id);
    await write(scope, async (w) => {
      const locked = await callForUpdate(w, id);
      if (!locked || silenceOf(String(locked.status)) === undefined) return;
      // Unknown to the provider: it was never placed there.
      const moved = await recordCallUpdate(w, locked, found ?? { status: 'failed', error: 'The provider does not know the call' });
      if (!moved) watchCall(w, id, String(locked.status));
    });
  },
});

export const VOICE_JOBS = [voiceDial, voicePlace, voicePlayed, voiceHangUp, voiceReconcile] as const;
