// Enqueues the webhook deliveries of a write's events with one set-based statement, queued with
// the write's final statement (on PostgreSQL in the same round trip): one delivery job for each
// event and each active endpoint of the tenant subscribed to its type. A tenant without endpoints
// pays one index probe of webhook_endpoints and no job. The job id is the delivery id, made from the
// event and the endpoint, so a delivery is never enqueued twice for one event and endpoint.
import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import { nowMillis } from '../../platform/clock.ts';
import { fansOut } from '../../platform/event-types.ts';
import type { DeferredStatement, EventWrite, PendingEvent } from '../../platform/write.ts';

export const DELIVERY_KIND = 'webhook.deliver';
/** A safety net only: a delivery gives up when its retry schedule (WEBHOOK_RETRY_SCHEDULE) ends. */
export const DELIVERY_MAX_ATTEMPTS = 1000;

/** A raw statement bound to a transaction, so it can run alone or join the write's final statement. */
export function deferred(raw: RawBuilder<unknown>, w: EventWrite): DeferredStatement {
  return { compile: () => raw.compile(w.tx), execute: () => raw.execute(w.tx) } as DeferredStatement;
}

/** The rows `(id, type)` of a JSON array of events, as a table `ev`. */
export function eventRows(dialect: Dialect, events: string) {
  return dialect === 'postgres'
    ? sql`jsonb_to_recordset(cast(${events} as jsonb)) as ev(id text, type text)`
    : sql`(select json_extract(value, '$.id') as id, json_extract(value, '$.type') as type from json_each(${events})) as ev`;
}

export function subscribed(dialect: Dialect) {
  return dialect === 'postgres'
    ? sql`(we.all_events = 1 or we.event_types @> jsonb_build_array(ev.type))`
    : sql`(we.all_events = 1 or exists (select 1 from json_each(we.event_types) t where t.value = ev.type))`;
}

/**
 * Delivery jobs for the events of `source` (a table `ev` of `id, type`) to the tenant's active
 * endpoints that subscribe to them, or only to `endpointId`. `suffix` makes the ids of a resend
 * differ from the first delivery's.
 */
export function deliveryJobs(w: EventWrite, source: RawBuilder<unknown>, options: { endpointId?: string; suffix?: string } = {}): RawBuilder<unknown> {
  const now = nowMillis();
  const { orgId, mode } = w.scope;
  const id = options.suffix ? sql`'dlv_' || substr(ev.id, 5) || ${options.suffix}` : sql`'dlv_' || substr(ev.id, 5) || substr(we.id, 5)`;
  const only = options.endpointId ? sql`and we.id = ${options.endpointId}` : sql``;
  return sql`insert into jobs (org_id, mode, id, kind, payload, concurrency_key, status, run_at, attempts, max_attempts, created_at, updated_at)
    select we.org_id, we.mode, ${id}, ${DELIVERY_KIND}, '{"endpoint_id":"' || we.id || '","event_id":"' || ev.id || '"}', we.id,
      'queued', ${now}, 0, ${DELIVERY_MAX_ATTEMPTS}, ${now}, ${now}
    from webhook_endpoints we cross join ${source}
    where we.org_id = ${orgId} and we.mode = ${mode} and we.is_active = 1 ${only} and ${subscribed(w.dialect)}`;
}

/**
 * The statement that enqueues the deliveries of a write's events, if any event is delivered: the
 * first consumer of the platform's event fan-out (registered in event-consumers.ts).
 */
export function webhookFanout(w: EventWrite, events: readonly PendingEvent[]): DeferredStatement | undefined {
  const delivered = events.filter((e) => fansOut(e.type));
  if (delivered.length === 0) return undefined;
  return deferred(deliveryJobs(w, eventRows(w.dialect, JSON.stringify(delivered.map((e) => ({ id: e.id, type: e.type }))))), w);
}
