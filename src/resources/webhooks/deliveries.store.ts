// The record of webhook deliveries: one row per event sent to an endpoint (a redelivery or replay is
// a new row), with its last 20 attempts. Written only by the delivery job, which holds the job's
// lease, so reading and rewriting a row's attempts cannot race.
import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import type { SettleBatch } from '../../platform/jobs/kinds.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { Delivery, DeliveryQuery, DeliveryStatus } from './webhooks.schemas.ts';

type Row = Selectable<DB['webhook_deliveries']>;
export type Attempt = Delivery['attempts'][number];
const KEPT_ATTEMPTS = 20;

export const toDelivery = (r: Row): Delivery => ({
  id: r.id,
  endpoint_id: r.endpoint_id,
  event_id: r.event_id,
  event_type: r.event_type,
  status: r.status as DeliveryStatus,
  attempt_count: Number(r.attempt_count),
  next_attempt_at: r.next_attempt_at === null ? null : Number(r.next_attempt_at),
  attempts: parseJson<Attempt[]>(r.attempts),
  created_at: Number(r.created_at),
  updated_at: Number(r.updated_at),
});

function filtered(db: Kysely<DB>, scope: Scope, endpointId: string, query: DeliveryQuery) {
  let q = selectIn(db, 'webhook_deliveries', scope).where('endpoint_id', '=', endpointId);
  if (query.status !== undefined) q = q.where('status', '=', query.status);
  if (query.event_type !== undefined) q = q.where('event_type', '=', query.event_type);
  return q;
}

export function listDeliveries(db: Kysely<DB>, scope: Scope, endpointId: string, query: DeliveryQuery, page: PageRequest) {
  let q = filtered(db, scope, endpointId, query).selectAll();
  if (page.after !== undefined) q = q.where('id', '<', String(page.after));
  return q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute();
}

export async function countDeliveries(db: Kysely<DB>, scope: Scope, endpointId: string, query: DeliveryQuery): Promise<number> {
  const row = await filtered(db, scope, endpointId, query).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface AttemptOutcome {
  endpointId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempt: Attempt;
  nextAttemptAt: number | null;
}

/**
 * Adds attempts to deliveries, creating each delivery at its first attempt: the records of the
 * attempts settled together, in one statement. `existing` is the delivery's row as its job read it
 * (the job holds the lease, so nothing else rewrote it since).
 */
export const deliveryRecords: SettleBatch<{ scope: Scope; id: string; existing: Row | undefined; outcome: AttemptOutcome }> = {
  async write(db, records) {
    const rows = records.map(({ scope, id, existing, outcome: o }) => ({
      org_id: scope.orgId, mode: scope.mode, id, endpoint_id: o.endpointId, event_id: o.eventId, event_type: o.eventType, created_at: o.attempt.attempted_at,
      status: o.status, attempt_count: (existing ? Number(existing.attempt_count) : 0) + 1, next_attempt_at: o.nextAttemptAt, updated_at: o.attempt.attempted_at,
      attempts: JSON.stringify([...(existing ? parseJson<Attempt[]>(existing.attempts) : []), o.attempt].slice(-KEPT_ATTEMPTS)),
    }));
    await db.insertInto('webhook_deliveries').values(rows)
      .onConflict((oc) => oc.columns(['org_id', 'mode', 'id']).doUpdateSet((eb) => ({
        status: eb.ref('excluded.status'), attempt_count: eb.ref('excluded.attempt_count'), attempts: eb.ref('excluded.attempts'),
        next_attempt_at: eb.ref('excluded.next_attempt_at'), updated_at: eb.ref('excluded.updated_at'),
      })))
      .execute();
  },
};

/** Deletes deliveries created before `before` (unix seconds). */
export async function pruneDeliveries(db: Kysely<DB>, before: number): Promise<number> {
  const result = await db.deleteFrom('webhook_deliveries').where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
