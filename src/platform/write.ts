// Every write runs in one transaction that also records its events, moves its counters and stores
// its idempotent response, so an acknowledged write has all of them and a failed one has none.
// The first statement locks the tenant's event-sequence row: writes of one tenant are serialized,
// their events are numbered in commit order (what the live event stream relies on), and
// transactions never take row locks in different orders, so they cannot deadlock.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, Dialect } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { newId, nowSeconds } from './ids.ts';
import { storeResponse } from './idempotency.ts';
import type { Scope } from './scope.ts';

interface PendingEvent {
  id: string;
  type: string;
  object_id: string;
  data: string;
  previous_attributes: string | null;
}

export class WriteContext {
  readonly tx: Transaction<DB>;
  readonly scope: Scope;
  readonly dialect: Dialect;
  readonly now = nowSeconds();
  #seq = 0;
  readonly #events: PendingEvent[] = [];
  readonly #deltas = new Map<string, number>();

  constructor(tx: Transaction<DB>, scope: Scope, dialect: Dialect) {
    this.tx = tx;
    this.scope = scope;
    this.dialect = dialect;
  }

  /** Takes the tenant's write lock and reads its event sequence. */
  async begin(): Promise<void> {
    this.#seq = await bumpCounter(this.tx, this.scope, 'events', 0);
  }

  /** Records `<type>` for `object` (the API representation), committed with the write. */
  emit(type: string, object: { readonly id: string; readonly [field: string]: unknown }, previousAttributes?: Record<string, unknown> | null): void {
    this.#events.push({
      id: newId('evt'),
      type,
      object_id: object.id,
      data: JSON.stringify({ object }),
      previous_attributes: previousAttributes ? JSON.stringify(previousAttributes) : null,
    });
  }

  /** Moves a maintained total (e.g. the number of contacts) by `delta`. */
  count(name: string, delta: number): void {
    this.#deltas.set(name, (this.#deltas.get(name) ?? 0) + delta);
  }

  async finish(): Promise<number> {
    const { orgId, mode } = this.scope;
    if (this.#events.length > 0) {
      const base = this.#seq;
      await this.tx.insertInto('events')
        .values(this.#events.map((e, i) => ({ ...e, org_id: orgId, mode, seq: base + i + 1, created_at: this.now })))
        .execute();
      this.count('events', this.#events.length);
    }
    // All moved totals in one statement: the write holds the tenant's lock until it commits.
    const moved = [...this.#deltas].filter(([, delta]) => delta !== 0);
    if (moved.length > 0) {
      await this.tx.insertInto('counters')
        .values(moved.map(([name, delta]) => ({ org_id: orgId, mode, name, value: delta })))
        .onConflict((oc) => oc.columns(['org_id', 'mode', 'name']).doUpdateSet({ value: sql<number>`counters.value + excluded.value` }))
        .execute();
    }
    return this.#events.length;
  }
}

/** Adds `delta` to a tenant counter (creating it at zero) and returns the new value. */
export async function bumpCounter(db: Kysely<DB>, scope: Scope, name: string, delta: number): Promise<number> {
  const row = await db.insertInto('counters')
    .values({ org_id: scope.orgId, mode: scope.mode, name, value: delta })
    .onConflict((oc) => oc.columns(['org_id', 'mode', 'name']).doUpdateSet({ value: sql<number>`counters.value + ${delta}` }))
    .returning('value')
    .executeTakeFirstOrThrow();
  return Number(row.value);
}

export async function readCounter(db: Kysely<DB>, scope: Scope, name: string): Promise<number> {
  const row = await db.selectFrom('counters').select('value')
    .where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('name', '=', name).executeTakeFirst();
  return row ? Number(row.value) : 0;
}

export type EventNotifier = (scope: Scope) => void;

/** Runs `work` as the write of `scope` inside an open transaction (one transaction may span scopes). */
export async function writeIn<T>(tx: Transaction<DB>, dialect: Dialect, scope: Scope, work: (w: WriteContext) => Promise<T>, after?: (w: WriteContext, result: T) => Promise<void>): Promise<T> {
  const w = new WriteContext(tx, scope, dialect);
  await w.begin();
  const result = await work(w);
  await w.finish();
  if (after) await after(w, result);
  return result;
}

/** Runs `work` as one write of `scope` in its own transaction; outside requests (CLI) as well as inside. */
export function runWrite<T>(database: Database, scope: Scope, work: (w: WriteContext) => Promise<T>, after?: (w: WriteContext, result: T) => Promise<void>): Promise<T> {
  return database.db.transaction().execute((tx) => writeIn(tx, database.dialect, scope, work, after));
}

/**
 * The write path of a route: runs `work`, answers `status` with `{"data": result}`, and stores that
 * exact response for the request's Idempotency-Key in the same transaction.
 */
export async function mutate<T>(request: FastifyRequest, reply: FastifyReply, status: number, work: (w: WriteContext) => Promise<T>): Promise<void> {
  const { database, notify } = request.server.services;
  let body = '';
  await runWrite(database, request.scope, work, async (w, data) => {
    body = JSON.stringify({ data });
    if (request.idempotency) await storeResponse(w.tx, request.scope, request.idempotency, status, body);
  });
  notify(request.scope);
  reply.code(status).type('application/json; charset=utf-8').send(body);
}
