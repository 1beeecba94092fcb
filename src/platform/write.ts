// Every write runs in one transaction that also records its events, moves its counters and stores
// its idempotent response, so an acknowledged write has all of them and a failed one has none.
// The first statement of a transaction locks the tenant's event-sequence row: writes of one tenant
// are serialized, their events are numbered in commit order (what the live event stream relies
// on), and transactions never take row locks in different orders, so they cannot deadlock.
//
// Requests' writes go through a WriteQueue (group commit): the writes that arrive together share
// one transaction, so they pay for one commit (one log sync) and one lock of each tenant instead of
// one each; a tenant's writes that arrive while one of its transactions runs make the next one. A
// write that fails rolls the shared transaction back; its batch is then run again one write per
// transaction, so only the failing write fails and nothing is ever half applied (when the store
// itself is unreachable, the whole batch fails at once instead).
import { setImmediate as turn } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CompiledQuery, sql, type Compilable, type Kysely, type QueryResult, type Transaction } from 'kysely';
import type { Database, Dialect } from '../db/database.ts';
import { shaped } from '../db/prepared.ts';
import type { DB, JobsTable } from '../db/schema.ts';
import { webhookFanout } from '../resources/webhooks/webhooks.fanout.ts';
import { isUnavailable, isUniqueViolation } from './error-handler.ts';
import { AppError } from './errors.ts';
import type { EventType } from './event-types.ts';
import { stillRunning, type IdempotencyClaim } from './idempotency.ts';
import { newId, nowSeconds } from './ids.ts';
import { DEFAULT_MAX_ATTEMPTS, type JobKind } from './jobs/kinds.ts';
import { updateIn, type TenantTable } from './resource/tenancy.ts';
import type { Scope } from './scope.ts';

/** A query builder's statement, ready to run. */
export type DeferredStatement = Compilable & { execute(): Promise<unknown> };

/** Who makes a write: the API key and its organization (an agency's, when it acts for a client). */
export interface Actor {
  readonly keyId: string;
  readonly orgId: string;
}

/** PostgreSQL takes at most this many parameters in one statement. */
const PG_MAX_PARAMETERS = 65_535;
/**
 * Rows of one shape are inserted by statements of 256, 128, … 16 rows, then one of the last 8 or
 * fewer: each statement's text is one of a few per shape, built once (`shaped`), and none passes
 * SQLite's limit of parameters.
 */
const MERGED_ROWS = 256;
const LAST_ROWS = 8;

/** A row to insert: its values by column, and its parameters in the order of its columns. */
interface InsertRow {
  values: Record<string, unknown>;
  params: unknown[];
}

/** A row queued by `insertLater`. */
interface QueuedRow extends InsertRow {
  table: TenantTable;
  /** Its columns, in the order of its parameters. */
  columns: string[];
  /** The table and the columns given: rows of one shape share a statement. */
  shape: string;
}

/** A statement queued by `laterAddingUp`: built from the values of its key added up. */
interface QueuedSum {
  sumKey: string;
  values: Record<string, unknown>;
  build(values: Record<string, unknown>): DeferredStatement;
}

/** A row queued by `insertLater`, as its callers hold it. */
export type QueuedInsert = object;

const SAVEPOINT = CompiledQuery.raw('savepoint part');
const RELEASE = CompiledQuery.raw('release savepoint part');
const ROLLBACK_TO = CompiledQuery.raw('rollback to savepoint part');

/** A part of a write (`attempt`): its value, or the error that refused it. */
export type Attempted<T> = { value: T } | { error: AppError };

/**
 * Thrown out of an unguarded write (see `attempt`) when one of its parts is refused: the
 * transaction is rolled back and the write runs again with a savepoint around each part.
 */
class PartRefused extends Error {}

/** An error that refuses a part of a write, rather than failing the whole write. */
const isRefusal = (error: Error) => !isUnavailable(error) && (error instanceof AppError || isUniqueViolation(error));

export interface PendingEvent {
  id: string;
  type: EventType;
  object_id: string;
  data: string;
  previous_attributes: string | null;
  actor_key_id: string | null;
  actor_org_id: string | null;
}

/** A request's response, stored for its Idempotency-Key with its write. */
interface StoredResponse {
  claim: IdempotencyClaim;
  status: number;
  body: string;
}

/**
 * What a kind of write reads before it writes (a contact create: its list, the company of its
 * domain, its suppression), read in one statement for many writes: for a run of such writes of one
 * tenant in a transaction (a group commit's), and for the records of a batch (`readAheadAll`). On
 * PostgreSQL one round trip under the tenant's lock instead of one a write. The writes of a run also
 * share their end: their rows, events, totals and stored responses are written together after the
 * last of them (one round trip on PostgreSQL). So a kind reads ahead only what no write of its
 * resource group changes (an answer is read before the writes ahead of it, and none of them sees the
 * others' rows), and queues only rows, moves and counts that several of its writes could not change
 * twice in one statement. A write of another kind ends the run.
 */
export interface ReadAhead<K = unknown, A = unknown> {
  /** What a write of the kind reads, from the record it writes (its fields in their stored form) and its input. */
  key(row: Record<string, unknown>, input: Record<string, unknown>): K;
  /** The answers for `keys`, in their order. */
  read(tx: Transaction<DB>, dialect: Dialect, scope: Scope, keys: K[]): Promise<A[]>;
}

/**
 * What a write's request announces it will read (`WriteQueue.run`): its key is made only when the
 * write turns out to be in a run, so a write alone pays nothing for it.
 */
export interface Ahead {
  by: ReadAhead;
  key(): unknown;
}

/** What the writes of a transaction read once (`WriteContext.shared`), by tenant and name. */
const sharedReads = new WeakMap<Transaction<DB>, Map<string, Promise<unknown>>>();

export class WriteContext {
  readonly tx: Transaction<DB>;
  readonly scope: Scope;
  readonly dialect: Dialect;
  readonly now = nowSeconds();
  readonly #seq: number;
  readonly #events: PendingEvent[] = [];
  readonly #deltas = new Map<string, number>();
  readonly #later: Array<DeferredStatement | QueuedRow | QueuedSum> = [];
  readonly #moves = new Map<string, { table: TenantTable; id: string; column: string; delta: number }>();
  readonly #jobs: JobsTable[] = [];
  readonly #guarded: boolean;
  #actor: Actor | null;
  /** What was read ahead (`readAheadAll`), by kind and key (as JSON). */
  readonly #answers = new Map<ReadAhead, Map<string, unknown>>();
  /** An unguarded part left its rows queued: a refusal at the end may be that part's. */
  #deferred = false;
  readonly #responses: StoredResponse[] = [];
  /**
   * Set by `finish` once its statements are queued on the transaction's connection, which runs them
   * before any statement queued after them: the transaction may then go on before they answer.
   */
  handedOver = false;

  /**
   * `seq` is the tenant's event sequence so far; the caller holds the tenant's lock. An unguarded
   * write runs its parts without savepoints (see `attempt`).
   */
  constructor(tx: Transaction<DB>, scope: Scope, dialect: Dialect, seq: number, actor: Actor | null = null, guarded = true) {
    this.tx = tx;
    this.scope = scope;
    this.dialect = dialect;
    this.#seq = seq;
    this.#actor = actor;
    this.#guarded = guarded;
  }

  /** Recorded on the write's events and ledger rows; null for writes no key made (CLI, seeding). */
  get actor(): Actor | null {
    return this.#actor;
  }

  /**
   * The next write of a run that read ahead together goes on in this context (see commitTogether):
   * its rows, events, totals and stored response join the run's, written at its end.
   */
  nextInRun(actor: Actor | null): void {
    this.#actor = actor;
  }

  /** Reads what `by` answers for `keys`, in one statement, for the writes of this context (ReadAhead). */
  async readAheadAll<K, A>(by: ReadAhead<K, A>, keys: K[]): Promise<void> {
    if (keys.length === 0) return;
    const found = await by.read(this.tx, this.dialect, this.scope, keys);
    let answers = this.#answers.get(by as ReadAhead);
    if (!answers) this.#answers.set(by as ReadAhead, (answers = new Map()));
    for (const [i, key] of keys.entries()) answers.set(JSON.stringify(key), found[i]);
  }

  /** What `by` answers for `key`: read ahead with the other writes (`readAheadAll`), or read now. */
  async readAhead<K, A>(by: ReadAhead<K, A>, key: K): Promise<A> {
    const answers = this.#answers.get(by as ReadAhead);
    const id = answers && JSON.stringify(key);
    if (id !== undefined && answers!.has(id)) return answers!.get(id) as A;
    return (await by.read(this.tx, this.dialect, this.scope, [key]))[0];
  }

  /**
   * Records `<type>` for `object` (the API representation), committed with the write, and returns
   * the event's id. Its webhook deliveries are enqueued with it (see webhooks.fanout.ts).
   */
  emit(type: EventType, object: { readonly id: string; readonly [field: string]: unknown }, previousAttributes?: Record<string, unknown> | null): string {
    const id = newId('evt');
    this.#events.push({
      id,
      type,
      object_id: object.id,
      data: JSON.stringify({ object }),
      previous_attributes: previousAttributes ? JSON.stringify(previousAttributes) : null,
      ...actorColumns(this.#actor),
    });
    return id;
  }

  /**
   * What `read` answers for this tenant, read once per transaction and shared by the writes that
   * share it (a group commit's, a batch's parts): the tenant's custom field definitions, its
   * default pipeline's first stage. Only for what the tenant's own writes alone change: every write
   * of the tenant holds its lock until the commit, so nothing else changes it meanwhile, and a write
   * that changes it says so (`changed`). A part of a write rolled back (`attempt`) drops them all.
   */
  shared<T>(what: string, read: () => Promise<T>): Promise<T> {
    let reads = sharedReads.get(this.tx);
    if (!reads) sharedReads.set(this.tx, (reads = new Map()));
    const key = this.#sharedKey(what);
    let answer = reads.get(key) as Promise<T> | undefined;
    if (!answer) {
      answer = read();
      reads.set(key, answer);
      answer.catch(() => reads.delete(key));
    }
    return answer;
  }

  /**
   * This write changed what `shared` reads under a name starting with `what` (all of the tenant's
   * when omitted): the transaction's next reads of it go to the store.
   */
  changed(what = ''): void {
    const reads = sharedReads.get(this.tx);
    if (!reads) return;
    const prefix = this.#sharedKey(what);
    for (const key of reads.keys()) if (key.startsWith(prefix)) reads.delete(key);
  }

  /** The key of a shared read: the tenant's, so one transaction spanning tenants keeps each its own. */
  #sharedKey(what: string): string {
    return `${this.scope.orgId}\u0000${this.scope.mode}\u0000${what}`;
  }

  /** Moves a maintained total (e.g. the number of contacts) by `delta`. */
  count(name: string, delta: number): void {
    this.#deltas.set(name, (this.#deltas.get(name) ?? 0) + delta);
  }

  /**
   * Adds `delta` to a number column of one row of the tenant (a list's member_count), at the end of
   * the write: the moves of one row add up to one statement however many records of the write
   * moved it. Nothing in the same write may read the column afterwards.
   */
  move(table: TenantTable, id: string, column: string, delta: number): void {
    const key = `${table}\u0000${id}\u0000${column}`;
    const move = this.#moves.get(key);
    this.#moves.set(key, { table, id, column, delta: (move?.delta ?? 0) + delta });
  }

  /**
   * Queues a writing statement whose result the work does not need, to run at the end of the write
   * with its events and totals (on PostgreSQL in the same round trip). Statements queued by one
   * write must not change the same row twice.
   */
  later(statement: DeferredStatement): void {
    this.#later.push(statement);
  }

  /**
   * Queues the statement `build(values)` as `later` does, its number values added up with those of
   * the statements queued under the same `key` since (a stage's deal totals): one statement for
   * them, so the writes of a run, which end in one statement, never change one row twice.
   */
  laterAddingUp(key: string, values: Record<string, unknown>, build: (values: Record<string, unknown>) => DeferredStatement): void {
    this.#later.push({ sumKey: key, values, build });
  }

  /**
   * Queues the insert of `row` (its defined columns) into `table` as `later` does. Queued rows of
   * one table and columns are inserted by one statement: on SQLite a statement per row costs about
   * three times as much where the table has full-text indexes, which flush their pending terms at
   * the end of every statement (an import's contacts: 71 against 27 µs a row). Returns the queued
   * row, for `setQueued`.
   */
  insertLater(table: TenantTable, row: Record<string, unknown>): QueuedInsert {
    const columns = Object.keys(row).filter((c) => row[c] !== undefined);
    const queued: QueuedRow = { table, shape: `${table} ${columns.join()}`, columns, values: row, params: columns.map((c) => row[c]) };
    this.#later.push(queued);
    return queued;
  }

  /** Sets a column of a row queued by `insertLater` (given there, even as null) to a value known only later in the write. */
  setQueued(insert: QueuedInsert, column: string, value: unknown): void {
    const queued = insert as QueuedRow;
    const at = queued.columns.indexOf(column);
    if (at < 0) throw new Error(`${queued.table}: column ${column} was not given to insertLater`);
    queued.params[at] = value;
    queued.values[column] = value;
  }

  /**
   * The queued statements, the rows of one shape merged (see `insertLater`): between two other
   * statements, rows are inserted shape by shape (they are rows of no foreign key to each other).
   */
  #statements(): DeferredStatement[] {
    const queued = addedUp(this.#later.splice(0));
    // Most writes of requests queue nothing, or no rows: nothing to group.
    if (!queued.some((q) => 'shape' in q)) return queued as DeferredStatement[];
    const out: DeferredStatement[] = [];
    const shapes = new Map<string, QueuedRow[]>();
    const insertRows = () => {
      for (const rows of shapes.values()) out.push(...this.#inserts(rows[0].table, rows[0].shape, rows));
      shapes.clear();
    };
    for (const q of queued) {
      if ('shape' in q) {
        const rows = shapes.get(q.shape);
        if (rows) rows.push(q);
        else shapes.set(q.shape, [q]);
      } else {
        insertRows();
        out.push(q);
      }
    }
    insertRows();
    return out;
  }

  /** The statements inserting `rows` (all of one `shape`) into `table` (see MERGED_ROWS). */
  #inserts(table: TenantTable, shape: string, rows: InsertRow[]): DeferredStatement[] {
    const out: DeferredStatement[] = [];
    for (let i = 0, size = MERGED_ROWS; i < rows.length; size >>= 1) {
      if (rows.length - i <= LAST_ROWS) size = rows.length - i;
      for (; rows.length - i >= size; i += size) {
        const chunk = rows.slice(i, i + size);
        out.push(shaped(this.tx, this.dialect, `insert ${shape} ${size}`, chunk.flatMap((r) => r.params), () => this.tx.insertInto(table).values(chunk.map((r) => r.values) as never)));
      }
    }
    return out;
  }

  /**
   * Runs the statements queued so far now, so a later part of the same write reads what they wrote.
   * One by one: unlike a write's end, a flush may hold several changes of one row (a sandbox's seeded
   * deals move their stage's totals each), which one statement could not make.
   */
  async flush(): Promise<void> {
    for (const q of this.#statements()) await q.execute();
  }

  /**
   * Runs one part of the write (a record of a batch, a row of an import) under a savepoint: all of
   * its writes, events, queued statements and counter moves, or none of them and the error that
   * refused it (a unique index losing a race is a 409 conflict). On PostgreSQL a part that succeeds
   * keeps its savepoint open rather than paying a round trip to release it: the next part's
   * savepoint of the same name nests inside it, `rollback to` takes the newest one of that name, and
   * the commit ends them all. SQLite releases it (no round trip there, and open savepoints keep their
   * sub-journals: a 500-row import batch ran at 2,900 rows/s and 354 MB with them open, 4,800 rows/s
   * and 307 MB released). Store failures are not a part's: they end the whole write.
   *
   * Most parts succeed, and guarding each costs: a round trip on PostgreSQL, and a part whose
   * writes must be done by its end cannot share its inserts with the other parts' rows
   * (`insertLater`). So a write runs unguarded first (`commitParts`): its parts run bare, and the
   * first part refused throws `PartRefused`, which rolls the whole transaction back to be run again
   * guarded. Unguarded, a part that no later part reads back (an import's plain creates) may say
   * `flush: false`: its queued rows then wait to be inserted with the next parts' rows.
   */
  async attempt<T>(work: () => Promise<T>, options: { flush?: boolean } = {}): Promise<Attempted<T>> {
    if (!this.#guarded) {
      try {
        const value = await work();
        if (options.flush === false) this.#deferred = true;
        else await this.flush();
        return { value };
      } catch (error) {
        throw isRefusal(error as Error) ? new PartRefused() : error;
      }
    }
    const events = this.#events.length;
    const later = this.#later.length;
    const deltas = new Map(this.#deltas);
    const moves = new Map(this.#moves);
    await this.tx.executeQuery(SAVEPOINT);
    try {
      const value = await work();
      // The next parts must see this one (a later record may name the same key).
      await this.flush();
      if (this.dialect === 'sqlite') await this.tx.executeQuery(RELEASE);
      return { value };
    } catch (error) {
      if (isUnavailable(error as Error)) throw error;
      await this.tx.executeQuery(ROLLBACK_TO);
      sharedReads.delete(this.tx);
      this.#events.length = events;
      this.#later.length = later;
      this.#deltas.clear();
      for (const [name, delta] of deltas) this.#deltas.set(name, delta);
      this.#moves.clear();
      for (const [key, move] of moves) this.#moves.set(key, move);
      if (error instanceof AppError) return { error };
      if (isUniqueViolation(error as Error)) return { error: new AppError('conflict', 'The record conflicts with an existing record') };
      throw error;
    }
  }

  /**
   * Enqueues a background job of `kind`, committed with the write (transactional outbox): a
   * committed write always has its jobs, a rolled-back one never does. `runAt` (milliseconds) delays
   * it. Returns the job's id. Adds no round trip: the job is written with the write's events.
   */
  enqueue<P>(kind: JobKind<P>, payload: P, options: { runAt?: number; id?: string; concurrencyKey?: string } = {}): string {
    const now = Date.now();
    const id = options.id ?? newId('job');
    this.#jobs.push({
      org_id: this.scope.orgId, mode: this.scope.mode, id, kind: kind.name, payload: JSON.stringify(payload), concurrency_key: options.concurrencyKey ?? null, status: 'queued',
      run_at: options.runAt ?? now, attempts: 0, max_attempts: kind.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      lease_until: null, lease_token: null, last_error: null, created_at: now, updated_at: now,
    });
    return id;
  }

  /**
   * Stores the request's response for its Idempotency-Key with the write (see idempotency.ts). The
   * write fails with 409, committing nothing, if the claim was taken over meanwhile (its lease lapsed).
   */
  respond(claim: IdempotencyClaim, status: number, body: string): void {
    this.#responses.push({ claim, status, body });
  }

  /**
   * Runs the queued statements and writes the events, the moved totals and the stored response;
   * returns the tenant's event sequence after them. On PostgreSQL they go in one statement (one
   * round trip).
   */
  async finish(): Promise<number> {
    const { orgId, mode } = this.scope;
    const statements = this.#statements();
    for (const { table, id, column, delta } of this.#moves.values()) {
      if (delta !== 0) {
        statements.push(shaped(this.tx, this.dialect, `move ${table} ${column}`, [delta, orgId, mode, id], () =>
          updateIn(this.tx, table, this.scope).set(column as never, sql`${sql.ref(column)} + ${delta}` as never).where(sql.ref('id'), '=', id)));
      }
    }
    if (this.#jobs.length > 0) statements.push(this.tx.insertInto('jobs').values(this.#jobs));
    if (this.#events.length > 0) {
      const deliveries = webhookFanout(this, this.#events);
      if (deliveries) statements.push(deliveries);
      const base = this.#seq;
      const rows = this.#events.map((e, i) => ({ ...e, org_id: orgId, mode, seq: base + i + 1, created_at: this.now }));
      statements.push(...this.#inserts('events', 'events', rows.map((values) => ({ values, params: Object.values(values) }))));
      this.count('events', this.#events.length);
    }
    const moved = [...this.#deltas].filter(([, delta]) => delta !== 0);
    if (moved.length > 0) {
      const rows = moved.map(([name, delta]) => ({ org_id: orgId, mode, name, value: delta }));
      statements.push(shaped(this.tx, this.dialect, `counters ${rows.length}`, rows.flatMap(Object.values), () => this.tx.insertInto('counters').values(rows)
        .onConflict((oc) => oc.columns(['org_id', 'mode', 'name']).doUpdateSet({ value: sql<number>`counters.value + excluded.value` }))));
    }
    const responses = this.#responses.length > 0 ? storeResponses(this.tx, this.dialect, this.scope, this.#responses) : [];
    let changed: bigint;
    try {
      changed = await this.#run(statements, responses);
    } catch (error) {
      throw this.#deferred && isRefusal(error as Error) ? new PartRefused() : error;
    }
    // A claim taken over matches no row. In a run (several responses), the write whose claim it
    // was is found when the batch runs again one write at a time.
    if (responses.length > 0 && changed !== BigInt(this.#responses.length)) throw stillRunning();
    return this.sequenceAfter;
  }

  /** The tenant's event sequence after this write's events. */
  get sequenceAfter(): number {
    return this.#seq + this.#events.length;
  }

  /**
   * Runs the statements of `finish`, then those storing the responses; returns the rows these
   * changed. On PostgreSQL they are handed to the transaction's connection as one statement before
   * the first `await` (`handedOver`), which ends by counting the rows the responses' parts returned.
   */
  async #run(statements: DeferredStatement[], responses: DeferredStatement[]): Promise<bigint> {
    if (this.dialect === 'postgres' && statements.length + responses.length > 0) {
      const compiled = [...statements, ...responses].map((q) => q.compile());
      if (responses.length > 0) compiled.push(returnedBy(statements.length, compiled.length));
      const sent = this.#sendCombined(compiled);
      if (sent) {
        this.handedOver = true;
        const result = await sent;
        return responses.length > 0 ? BigInt((result.rows[0] as { changed: number }).changed) : 0n;
      }
    }
    for (const q of statements) await q.execute();
    let changed = 0n;
    for (const q of responses) changed += ((await q.execute()) as { numAffectedRows?: bigint }).numAffectedRows ?? 0n;
    return changed;
  }

  /**
   * PostgreSQL: `statements` handed to the transaction's connection as one statement (the last
   * answering) before any `await`; undefined past the protocol's limit of parameters (a large
   * import's batch), where they run one by one.
   */
  #sendCombined(statements: CompiledQuery[]): Promise<QueryResult<unknown>> | undefined {
    const parameters = statements.flatMap((c) => c.parameters);
    if (parameters.length > PG_MAX_PARAMETERS) return undefined;
    return this.tx.executeQuery(statements.length === 1 ? statements[0] : CompiledQuery.raw(combined(statements), parameters));
  }
}

// The stored responses of a write (several for a run): one update each, matching its claim's row
// only while the claim still carries the request's lease. Each names the whole primary key, so it
// is one index probe whatever the planner knows of the table; an update of many keys at once
// (`key = any(…)`) was planned, right after the table's statistics were taken empty, as a scan of
// all the tenant's keys (5-9 ms for a run of 25). On PostgreSQL each returns its row, counted by
// the write's one statement (see `#run`).
const RESPONSE_SQL: Record<Dialect, string> = {
  sqlite: 'update idempotency_keys set status = ?, body = ? where org_id = ? and mode = ? and key = ? and lease = ?',
  postgres: 'update idempotency_keys set status = $1, body = $2 where org_id = $3 and mode = $4 and key = $5 and lease = $6 returning 1',
};

function storeResponses(tx: Transaction<DB>, dialect: Dialect, scope: Scope, responses: StoredResponse[]): DeferredStatement[] {
  return responses.map((r) => {
    const query = CompiledQuery.raw(RESPONSE_SQL[dialect], [r.status, r.body, scope.orgId, scope.mode, r.claim.key, r.claim.lease]);
    return { compile: () => query, execute: () => tx.executeQuery(query) } as DeferredStatement;
  });
}

const returnedTexts = new Map<string, CompiledQuery>();

/** The rows the parts `from` to `to` (exclusive) of a combined statement returned, in all (built once per pair). */
function returnedBy(from: number, to: number): CompiledQuery {
  const key = `${from} ${to}`;
  let query = returnedTexts.get(key);
  if (!query) {
    query = CompiledQuery.raw(`select ${Array.from({ length: to - from }, (_, i) => `(select count(*) from ${partName(from + i)})`).join(' + ')} as changed`, []);
    if (returnedTexts.size < COMBINED_KEPT) returnedTexts.set(key, query);
  }
  return query;
}

/** The queued statements with those queued under one key (`laterAddingUp`) made one, where the first was. */
function addedUp(queued: Array<DeferredStatement | QueuedRow | QueuedSum>): Array<DeferredStatement | QueuedRow> {
  if (!queued.some((q) => 'sumKey' in q)) return queued as Array<DeferredStatement | QueuedRow>;
  const sums = new Map<string, QueuedSum>();
  const out: Array<DeferredStatement | QueuedRow | QueuedSum> = [];
  for (const q of queued) {
    if (!('sumKey' in q)) {
      out.push(q);
      continue;
    }
    const first = sums.get(q.sumKey);
    if (!first) {
      const sum = { ...q, values: { ...q.values } };
      sums.set(q.sumKey, sum);
      out.push(sum);
    } else {
      for (const [name, value] of Object.entries(q.values)) if (typeof value === 'number') first.values[name] = (first.values[name] as number) + value;
    }
  }
  return out.map((q) => ('sumKey' in q ? q.build(q.values) : q));
}

const combinedTexts = new Map<string, string>();
const COMBINED_KEPT = 1000;

/** The name of the n-th part of a combined statement. */
const partName = (i: number) => `"w${i}"`;

/**
 * One PostgreSQL statement running `statements` in order: the first ones as data-modifying `with`
 * parts, the last one answering. Its parameters are theirs in order, so each part's placeholders
 * move up by the parameters before it. Built once per sequence of texts (most are `shaped`, whose
 * texts are built once too): building it through the query builder cost a write about 7% of its CPU.
 */
function combined(statements: CompiledQuery[]): string {
  const key = statements.map((c) => c.sql).join('\u0000');
  let text = combinedTexts.get(key);
  if (text === undefined) {
    let before = 0;
    const parts = statements.map(({ sql, parameters }) => {
      const offset = before;
      before += parameters.length;
      return offset === 0 ? sql : sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    });
    text = `with ${parts.slice(0, -1).map((part, i) => `${partName(i)} as (${part})`).join(', ')} ${parts.at(-1)}`;
    if (combinedTexts.size < COMBINED_KEPT) combinedTexts.set(key, text);
  }
  return text;
}

/** The columns that record who made a change. */
export const actorColumns = (actor: Actor | null) => ({ actor_key_id: actor?.keyId ?? null, actor_org_id: actor?.orgId ?? null });

/** Adds `delta` to a tenant counter (creating it at zero) and returns the new value. */
export async function bumpCounter(db: Kysely<DB>, dialect: Dialect, scope: Scope, name: string, delta: number): Promise<number> {
  const { rows: [row] } = await shaped(db, dialect, 'counters bump', [scope.orgId, scope.mode, name, delta, delta], () => db.insertInto('counters')
    .values({ org_id: scope.orgId, mode: scope.mode, name, value: delta })
    .onConflict((oc) => oc.columns(['org_id', 'mode', 'name']).doUpdateSet({ value: sql<number>`counters.value + ${delta}` }))
    .returning('value')).execute();
  return Number(row.value);
}

export async function readCounter(db: Kysely<DB>, scope: Scope, name: string): Promise<number> {
  const row = await db.selectFrom('counters').select('value')
    .where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('name', '=', name).executeTakeFirst();
  return row ? Number(row.value) : 0;
}

/** Takes the tenant's write lock and reads its event sequence. */
const lockTenant = (tx: Transaction<DB>, dialect: Dialect, scope: Scope) => bumpCounter(tx, dialect, scope, 'events', 0);

type Work<T> = (w: WriteContext) => Promise<T>;

/** Runs `work` as the write of `scope` inside an open transaction (one transaction may span scopes). */
export async function writeIn<T>(tx: Transaction<DB>, dialect: Dialect, scope: Scope, work: Work<T>): Promise<T> {
  const w = new WriteContext(tx, scope, dialect, await lockTenant(tx, dialect, scope));
  const result = await work(w);
  await w.finish();
  return result;
}

interface Write {
  scope: Scope;
  work: Work<unknown>;
  actor?: Actor | null;
  ahead?: Ahead;
}

interface QueuedWrite extends Write {
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

const scopeKey = (scope: Scope) => `${scope.orgId}\u0000${scope.mode}`;

/**
 * Runs `writes` in one transaction, in order. Tenants are locked first, in one order for every
 * transaction (by key), so two transactions never wait for each other's locks the other way round.
 */
async function commitTogether(database: Database, writes: Write[], guarded: boolean): Promise<unknown[]> {
  return database.db.transaction().execute(async (tx) => {
    const sequences = new Map<string, number>();
    const tenants = [...new Map(writes.map((q) => [scopeKey(q.scope), q.scope])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [key, scope] of tenants) sequences.set(key, await lockTenant(tx, database.dialect, scope));
    const results: unknown[] = [];
    // A write's last statement runs while the next write does its work (on PostgreSQL, whose round
    // trip then no longer holds up the tenant's lock): the connection runs statements in the order
    // they were queued, so the next write still reads what this one wrote. The writes of a run that
    // read ahead together (ReadAhead) share one context: its end, written after the last of them,
    // holds all their rows, events, totals and stored responses.
    const finishing: Array<Promise<number>> = [];
    let w: WriteContext | undefined;
    let runEnd = 0;
    let failed: { error: unknown } | undefined;
    try {
      for (const [i, q] of writes.entries()) {
        const key = scopeKey(q.scope);
        if (w && i < runEnd) w.nextInRun(q.actor ?? null);
        else {
          w = new WriteContext(tx, q.scope, database.dialect, sequences.get(key)!, q.actor ?? null, guarded);
          runEnd = runFrom(writes, i);
          if (runEnd - i > 1) await w.readAheadAll(q.ahead!.by, writes.slice(i, runEnd).map((r) => r.ahead!.key()));
        }
        results.push(await q.work(w));
        if (i + 1 < runEnd) continue;
        const finished = w.finish();
        finished.catch(() => {}); // settled below
        finishing.push(finished);
        if (!w.handedOver) await finished;
        sequences.set(key, w.sequenceAfter);
      }
    } catch (error) {
      failed = { error };
    }
    // The first write that failed is the one to report: the statements after it may have failed
    // only because its failure ended the transaction.
    for (const outcome of await Promise.allSettled(finishing)) if (outcome.status === 'rejected') throw outcome.reason;
    if (failed) throw failed.error;
    return results;
  });
}

/**
 * The end (exclusive) of the run of writes from `start` that read ahead alike: the same kind, the
 * same tenant. A write that does not read ahead is a run of its own.
 */
function runFrom(writes: Write[], start: number): number {
  const by = writes[start].ahead?.by;
  const tenant = scopeKey(writes[start].scope);
  let end = start + 1;
  while (by && end < writes.length && writes[end].ahead?.by === by && scopeKey(writes[end].scope) === tenant) end++;
  return end;
}

/**
 * `commitTogether` with the writes' parts unguarded (see `WriteContext.attempt`); when a part is
 * refused, the transaction is rolled back and run again guarded, so only such writes pay for savepoints.
 */
async function commitParts(database: Database, writes: Write[]): Promise<unknown[]> {
  try {
    return await commitTogether(database, writes, false);
  } catch (error) {
    if (!(error instanceof PartRefused)) throw error;
    return commitTogether(database, writes, true);
  }
}

/**
 * Runs `work` as one write of `scope` in its own transaction (jobs, the CLI, the seeders), after
 * letting the event loop turn: on SQLite nothing in a write waits for I/O, so a job writing batch
 * after batch (an import of a million rows) would otherwise hold every request until its end.
 */
export async function runWrite<T>(database: Database, scope: Scope, work: Work<T>): Promise<T> {
  await turn();
  const [result] = await commitParts(database, [{ scope, work }]);
  return result as T;
}

/** Most writes in one transaction. */
const MAX_BATCH = 100;

/** Group commit of the writes of requests; see the top of this file. */
export class WriteQueue {
  readonly #database: Database;
  /** Transactions in flight at once: SQLite has one connection; PostgreSQL runs tenants in parallel. */
  readonly #concurrency: number;
  #pending: QueuedWrite[] = [];
  /**
   * Tenants with a transaction in flight. Their next writes wait for it rather than start another
   * transaction, which would only wait for the tenant's lock while holding a connection: the writes
   * that arrive meanwhile make one larger transaction, which pays for one commit.
   */
  readonly #busy = new Set<string>();
  #running = 0;
  #scheduled = false;
  #idle: Array<() => void> = [];

  constructor(database: Database) {
    this.#database = database;
    this.#concurrency = database.dialect === 'sqlite' ? 1 : 4;
  }

  /**
   * Runs `work` as one write of `scope`, committed with the writes that arrive with it; `ahead`
   * announces what it will read, to be read with the writes of its kind beside it (ReadAhead).
   */
  run<T>(scope: Scope, work: Work<T>, actor: Actor | null = null, ahead?: Ahead): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ scope, work, actor, ahead, resolve: resolve as (r: unknown) => void, reject });
      this.#schedule();
    });
  }

  /** Resolves once every write handed in so far is committed or failed. */
  drained(): Promise<void> {
    if (this.#pending.length === 0 && this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  // A batch starts after the current turn of the event loop, so the writes of all requests read in
  // it join the same transaction.
  #schedule(): void {
    if (this.#scheduled || this.#running >= this.#concurrency || this.#pending.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#next();
    });
  }

  async #next(): Promise<void> {
    if (this.#running >= this.#concurrency) return;
    const batch = this.#take();
    if (batch.length === 0) return;
    const tenants = new Set(batch.map((q) => scopeKey(q.scope)));
    for (const key of tenants) this.#busy.add(key);
    this.#running++;
    // Writes of other tenants may be left: another transaction can take them.
    this.#schedule();
    try {
      await this.#commit(batch);
    } finally {
      for (const key of tenants) this.#busy.delete(key);
      this.#running--;
      this.#schedule();
      if (this.#pending.length === 0 && this.#running === 0) for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  /** The next batch: the oldest writes, up to MAX_BATCH, of tenants with no transaction in flight. */
  #take(): QueuedWrite[] {
    const batch: QueuedWrite[] = [];
    const left: QueuedWrite[] = [];
    for (const q of this.#pending) (batch.length < MAX_BATCH && !this.#busy.has(scopeKey(q.scope)) ? batch : left).push(q);
    this.#pending = left;
    return batch;
  }

  async #commit(batch: QueuedWrite[]): Promise<void> {
    if (batch.length > 1) {
      try {
        const results = await commitParts(this.#database, batch);
        batch.forEach((q, i) => q.resolve(results[i]));
        return;
      } catch (error) {
        // The store is unreachable: every write of the batch fails alike, at once.
        if (isUnavailable(error as Error)) return batch.forEach((q) => q.reject(error));
        // One of them failed and the transaction was rolled back: run each alone, below.
      }
    }
    for (const q of batch) {
      try {
        const [result] = await commitParts(this.#database, [q]);
        q.resolve(result);
      } catch (error) {
        q.reject(error);
      }
    }
  }
}

/**
 * The write path of a route: runs `work`, answers `status` with `{"data": result}`, and stores that
 * exact response for the request's Idempotency-Key in the same transaction.
 */
export async function mutate<T>(request: FastifyRequest, reply: FastifyReply, status: number, work: Work<T>, ahead?: Ahead): Promise<void> {
  return respond(request, reply, async (w) => ({ status, payload: { data: await work(w) } }), ahead);
}

/** `mutate` for a write whose status and envelope depend on what it did (an assert: 201 or 200). */
export async function respond(request: FastifyRequest, reply: FastifyReply, work: Work<{ status: number; payload: object }>, ahead?: Ahead): Promise<void> {
  const { writes, notify } = request.server.services;
  let body = '';
  const actor = request.apiKey ? { keyId: request.apiKey.id, orgId: request.apiKey.orgId } : null;
  // Serialized by the route's response schema, like every read: a write answers exactly the fields
  // a GET of the same record answers.
  await writes.run(request.scope, async (w) => {
    const { status, payload } = await work(w);
    reply.code(status);
    body = reply.serialize(payload) as string;
    if (request.idempotency) w.respond(request.idempotency, status, body);
    return payload;
  }, actor, ahead);
  if (request.idempotency) {
    request.idempotency.stored = true;
    request.server.services.leases.release(request.idempotency);
  }
  notify(request.scope);
  reply.type('application/json; charset=utf-8').send(body);
}
