// Events of a tenant, ordered by `seq`: the tenant's event sequence, numbered in commit order by
// WriteContext, so "everything after seq N" is exactly what a live stream has not sent yet.
import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { badRequest } from '../../platform/errors.ts';
import { actorOf } from '../../platform/schemas.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { Scope } from '../../platform/scope.ts';
import { readCounter } from '../../platform/write.ts';
import type { Event, EventQuery } from './events.schemas.ts';

type Row = Selectable<DB['events']>;

/** The `events` counter is the sequence; events a sandbox reset removed are counted here. */
export const EVENTS_REMOVED = 'events_removed';

export const toEvent = (r: Row): Event => ({
  id: r.id,
  type: r.type,
  created_at: Number(r.created_at),
  data: parseJson<Event['data']>(r.data),
  previous_attributes: r.previous_attributes === null ? null : parseJson<Record<string, unknown>>(r.previous_attributes),
  actor: actorOf(r),
});

const scoped = (db: Kysely<DB>, scope: Scope) =>
  db.selectFrom('events').where('org_id', '=', scope.orgId).where('mode', '=', scope.mode);

function filtered(db: Kysely<DB>, scope: Scope, query: EventQuery) {
  let q = scoped(db, scope);
  if (query.type !== undefined) q = q.where('type', '=', query.type);
  if (query.created_after !== undefined) q = q.where('created_at', '>=', query.created_after);
  if (query.actor_org_id !== undefined) q = q.where('actor_org_id', '=', query.actor_org_id);
  return q;
}

/** A page of events, newest first (keyset on seq). */
export function listEvents(db: Kysely<DB>, scope: Scope, query: EventQuery, page: PageRequest): Promise<Row[]> {
  let q = filtered(db, scope, query).selectAll();
  if (page.after !== undefined) q = q.where('seq', '<', Number(page.after));
  return q.orderBy('seq', 'desc').limit(page.take).offset(page.offset).execute();
}

/** The exact total: maintained counters when unfiltered, otherwise a count over the type or time index. */
export async function countEvents(db: Kysely<DB>, scope: Scope, query: EventQuery): Promise<number> {
  if (query.type === undefined && query.created_after === undefined && query.actor_org_id === undefined) {
    const [sequence, removed] = await Promise.all([readCounter(db, scope, 'events'), readCounter(db, scope, EVENTS_REMOVED)]);
    return sequence - removed;
  }
  const row = await filtered(db, scope, query).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Events after `seq`, oldest first: what a stream sends next. */
export function eventsAfter(db: Kysely<DB>, scope: Scope, seq: number, type: string | undefined, limit: number): Promise<Row[]> {
  let q = scoped(db, scope).selectAll().where('seq', '>', seq);
  if (type !== undefined) q = q.where('type', '=', type);
  return q.orderBy('seq', 'asc').limit(limit).execute();
}

/**
 * Where a stream starts: after the event `lastEventId` names, or after the newest committed event.
 * An id that is not an event of this tenant is refused before the stream starts.
 */
export async function resumePoint(db: Kysely<DB>, scope: Scope, lastEventId: string | undefined): Promise<number> {
  if (!lastEventId) return readCounter(db, scope, 'events');
  const row = await scoped(db, scope).select('seq').where('id', '=', lastEventId).executeTakeFirst();
  if (!row) throw badRequest(`Unknown Last-Event-ID: ${lastEventId.slice(0, 64)} is not an event of this organization and mode`);
  return Number(row.seq);
}
