// The delivery job: POSTs one event to one endpoint, signed as Standard Webhooks prescribes, and
// records the attempt. A 2xx within WEBHOOK_TIMEOUT_MS is success; 410 Gone disables the endpoint at
// once; anything else is retried on WEBHOOK_RETRY_SCHEDULE until it ends, and an endpoint failing
// for WEBHOOK_DISABLE_AFTER_SECONDS is disabled (`webhook_endpoint.disabled`). The body is the event
// exactly as `GET /v1/events` lists it, and `webhook-id` is the event id, so receivers de-duplicate.
import { Webhook } from 'standardwebhooks';
import type { Selectable } from 'kysely';
import type { Config } from '../../config.ts';
import type { DB, Mode } from '../../db/schema.ts';
import { nowMillis } from '../../platform/clock.ts';
import { nowSeconds } from '../../platform/ids.ts';
import { defineJobKind, PermanentJobError, RetryLater, type JobContext, type JobInfo, type LoadContext } from '../../platform/jobs/kinds.ts';
import { OutboundError } from '../../platform/outbound.ts';
import { rowsByIds, selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { runWrite } from '../../platform/write.ts';
import { toEvent } from '../events/events.store.ts';
import { deliveryRecords, pruneDeliveries, type Attempt } from './deliveries.store.ts';
import { DELIVERY_KIND, DELIVERY_MAX_ATTEMPTS } from './webhooks.fanout.ts';
import { toEndpoint, type EndpointRow } from './webhooks.store.ts';

export interface DeliveryPayload {
  endpoint_id: string;
  event_id: string;
}

/** `v1,<signature>` for the current secret, and for the previous one while it is still honoured. */
export function signatures(endpoint: EndpointRow, eventId: string, at: Date, body: string): string {
  const secrets = [endpoint.secret];
  if (endpoint.previous_secret && Number(endpoint.previous_secret_until) > at.getTime() / 1000) secrets.push(endpoint.previous_secret);
  return secrets.map((s) => new Webhook(s).sign(eventId, at, body)).join(' ');
}

/** The wait before retry `n` (1-based): the schedule's entry, give or take 10%. */
const retryDelayMs = (config: Config, n: number) => Math.round(config.webhookRetrySchedule[n - 1] * 1000 * (0.9 + Math.random() * 0.2));

/** What a delivery reads before it sends: its endpoint, its event and its record so far. */
interface Loaded {
  endpoint: EndpointRow | undefined;
  event: Selectable<DB['events']> | undefined;
  existing: Selectable<DB['webhook_deliveries']> | undefined;
}

/** Reads the endpoints, events and delivery records (of retries) of a claim's deliveries: up to three statements per tenant. */
async function loadDeliveries(jobs: ReadonlyArray<{ payload: DeliveryPayload; job: JobInfo }>, { database }: LoadContext): Promise<Loaded[]> {
  const { db } = database;
  const byId = <R extends { id: string }>(rows: R[]) => new Map(rows.map((r) => [r.id, r]));
  const tenants = Map.groupBy(jobs, ({ job }) => `${job.orgId}/${job.mode}`);
  const found = await Promise.all([...tenants.values()].map(async (some) => {
    const scope: Scope = { orgId: some[0].job.orgId, mode: some[0].job.mode as Mode };
    const [endpoints, events, existing] = await Promise.all([
      rowsByIds(db, 'webhook_endpoints', scope, some.map((j) => j.payload.endpoint_id)),
      rowsByIds(db, 'events', scope, some.map((j) => j.payload.event_id)),
      // Only a retry can have a record: the first attempt writes it, with its outcome.
      rowsByIds(db, 'webhook_deliveries', scope, some.filter(({ job }) => job.ranBefore).map(({ job }) => job.id)),
    ]);
    return { endpoints: byId(endpoints), events: byId(events), existing: byId(existing) };
  }));
  const of = new Map([...tenants.keys()].map((key, i) => [key, found[i]]));
  return jobs.map(({ payload, job }) => {
    const f = of.get(`${job.orgId}/${job.mode}`)!;
    return { endpoint: f.endpoints.get(payload.endpoint_id), event: f.events.get(payload.event_id), existing: f.existing.get(job.id) };
  });
}

export const webhookDelivery = defineJobKind<DeliveryPayload, Loaded>({
  name: DELIVERY_KIND,
  maxAttempts: DELIVERY_MAX_ATTEMPTS,
  load: loadDeliveries,
  async run(payload, ctx) {
    const scope: Scope = { orgId: ctx.job.orgId, mode: ctx.job.mode as Mode };
    const { endpoint, event, existing } = ctx.loaded ?? (await loadDeliveries([{ payload, job: ctx.job }], ctx))[0];
    // Deleted or disabled endpoints get nothing more; an event a sandbox reset removed is not sent.
    if (!endpoint || Number(endpoint.is_active) !== 1 || !event) {
      if (existing?.status === 'pending') ctx.settle((tx) => updateIn(tx, 'webhook_deliveries', scope).set({ status: 'failed', next_attempt_at: null }).where('id', '=', ctx.job.id).execute());
      return;
    }
    const body = JSON.stringify(toEvent(event));
    const at = new Date(); // the real time: the receiver checks it against its own clock
    const headers = {
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signatures(endpoint, event.id, at, body),
    };
    const attempt: Attempt = { attempted_at: nowSeconds(), status_code: null, duration_ms: 0, error: null, response_body: null };
    try {
      const res = await ctx.outbound.post(endpoint.url, body, headers, { timeoutMs: ctx.config.webhookTimeoutMs, signal: ctx.signal });
      Object.assign(attempt, { status_code: res.status, duration_ms: res.durationMs, response_body: res.body });
      if (res.status < 200 || res.status > 299) attempt.error = `The endpoint answered ${res.status}`;
    } catch (error) {
      if (ctx.signal.aborted) throw error; // shutting down: released, not counted
      attempt.error = error instanceof OutboundError ? error.message : 'The delivery could not be made';
      if (error instanceof OutboundError) attempt.duration_ms = error.durationMs;
    }
    // The attempt is recorded with the job's outcome, in its transaction (see JobContext.settle).
    const record = (status: 'pending' | 'succeeded' | 'failed', nextAttemptAt: number | null) =>
      ctx.settle(deliveryRecords, { scope, id: ctx.job.id, existing, outcome: { endpointId: endpoint.id, eventId: event.id, eventType: event.type, status, attempt, nextAttemptAt } });

    if (attempt.error === null) {
      record('succeeded', null);
      if (endpoint.failing_since !== null) ctx.settle((tx) => updateIn(tx, 'webhook_endpoints', scope).set({ failing_since: null }).where('id', '=', endpoint.id).execute());
      return;
    }
    if (attempt.status_code === 410) {
      record('failed', null);
      await disable(ctx, scope, endpoint.id, 'The endpoint answered 410 Gone');
      throw new PermanentJobError(attempt.error);
    }
    const failingSince = endpoint.failing_since === null ? attempt.attempted_at : Number(endpoint.failing_since);
    if (endpoint.failing_since === null) ctx.settle((tx) => updateIn(tx, 'webhook_endpoints', scope).set({ failing_since: failingSince }).where('id', '=', endpoint.id).where('failing_since', 'is', null).execute());
    const retry = ctx.job.attempt <= ctx.config.webhookRetrySchedule.length;
    if (attempt.attempted_at - failingSince >= ctx.config.webhookDisableAfterSeconds) {
      record('failed', null);
      await disable(ctx, scope, endpoint.id, `Deliveries failed for more than ${Math.round(ctx.config.webhookDisableAfterSeconds / 3600)} hours`);
      throw new PermanentJobError(attempt.error);
    }
    if (!retry) {
      record('failed', null);
      throw new PermanentJobError(attempt.error);
    }
    const delay = retryDelayMs(ctx.config, ctx.job.attempt);
    record('pending', Math.ceil((nowMillis() + delay) / 1000));
    throw new RetryLater(attempt.error, delay);
  },
});

/** Disables an endpoint the service gave up on and records `webhook_endpoint.disabled`. */
async function disable(ctx: JobContext, scope: Scope, endpointId: string, reason: string): Promise<void> {
  await runWrite(ctx.database, scope, async (w) => {
    const result = await updateIn(w.tx, 'webhook_endpoints', scope).set({ is_active: 0, disabled_reason: reason, updated_at: w.now })
      .where('id', '=', endpointId).where('is_active', '=', 1).executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return;
    const row = await selectIn(w.tx, 'webhook_endpoints', scope).selectAll().where('id', '=', endpointId).executeTakeFirstOrThrow();
    w.emit('webhook_endpoint.disabled', toEndpoint(row), { is_active: true });
  });
  ctx.log.warn({ endpoint: endpointId, org: scope.orgId }, 'webhook endpoint disabled');
}

/** Deliveries are kept WEBHOOK_DELIVERY_RETENTION_DAYS (30 by default). */
export const pruneWebhookDeliveries = defineJobKind<Record<string, never>>({
  name: 'maintenance.prune_webhook_deliveries',
  async run(_payload, { database, config }) {
    await pruneDeliveries(database.db, nowSeconds() - config.webhookDeliveryRetentionDays * 86_400);
  },
});
