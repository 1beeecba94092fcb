// The write context: what one write (or a run of writes sharing an end, see ReadAhead) reads and
// changes in its transaction. Its events, totals, jobs, queued rows and stored responses are kept
// until `finish`, which writes them all at once, so an acknowledged write has all of them and a
// failed one has none.
import type { Transaction } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { DB, JobsTable } from '../../db/schema.ts';
import type { EventType } from '../event-types.ts';
import { stillRunning, type IdempotencyClaim } from '../idempotency.ts';
import { nowSeconds } from '../ids.ts';
import type { TenantTable } from '../resource/tenancy.ts';
import type { Scope } from '../scope.ts';
import { Tally } from './counters.ts';
import { Deferred, mergedInserts, type DeferredStatement, type QueuedInsert } from './deferred.ts';
import { runEnd, storeResponses, type StoredResponse } from './end.ts';
import { pendingEvent, type Actor, type PendingEvent } from './events.ts';
import { fanOut, follow } from './fanout.ts';
import { jobRow, KeyedJobs, type EnqueueOptions, type KindName } from './jobs.ts';
import { bare, isRefusal, PartRefused, underSavepoint, type Attempted } from './parts.ts';
import { Answers, forgetAllShared, forgetShared, sharedRead, type ReadAhead } from './read-ahead.ts';

export class WriteContext {
  readonly tx: Transaction<DB>;
  readonly scope: Scope;
  readonly dialect: Dialect;
  readonly now = nowSeconds();
  readonly #seq: number;
  readonly #events: PendingEvent[] = [];
  readonly #tally = new Tally();
  readonly #later: Deferred;
  readonly #jobs: JobsTable[] = [];
  readonly #keyed = new KeyedJobs();
  readonly #guarded: boolean;
  #actor: Actor | null;
  readonly #answers = new Answers();
  /** An unguarded part left its rows queued: a refusal at the end may be that part's. */
  #deferred = false;
  /** Events before this one were followed (an earlier write of the run ended them). */
  #followed = 0;
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
    this.#later = new Deferred(tx, dialect);
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
  readAheadAll<K, A>(by: ReadAhead<K, A>, keys: K[]): Promise<void> {
    return this.#answers.readAll(by, this.tx, this.dialect, this.scope, keys);
  }

  /** What `by` answers for `key`: read ahead with the other writes (`readAheadAll`), or read now. */
  readAhead<K, A>(by: ReadAhead<K, A>, key: K): Promise<A> {
    return this.#answers.read(by, this.tx, this.dialect, this.scope, key);
  }

  /**
   * Records `<type>` for `object` (the API representation), committed with the write, and returns
   * the event's id. What its consumers make of it (webhook deliveries) commits with it (fanout.ts).
   */
  emit(type: EventType, object: { readonly id: string; readonly [field: string]: unknown }, previousAttributes?: Record<string, unknown> | null): string {
    const event = pendingEvent(type, object, previousAttributes, this.#actor);
    this.#events.push(event);
    return event.id;
  }

  /**
   * What `read` answers for this tenant, read once per transaction and shared by the writes that
   * share it (a group commit's, a batch's parts): the tenant's custom field definitions, its
   * default pipeline's first stage. Only for what the tenant's own writes alone change: every write
   * of the tenant holds its lock until the commit, so nothing else changes it meanwhile, and a write
   * that changes it says so (`changed`). A part of a write rolled back (`attempt`) drops them all.
   */
  shared<T>(what: string, read: () => Promise<T>): Promise<T> {
    return sharedRead(this.tx, this.scope, what, read);
  }

  /**
   * This write changed what `shared` reads under a name starting with `what` (all of the tenant's
   * when omitted): the transaction's next reads of it go to the store.
   */
  changed(what = ''): void {
    forgetShared(this.tx, this.scope, what);
  }

  /** Moves a maintained total (e.g. the number of contacts) by `delta`. */
  count(name: string, delta: number): void {
    this.#tally.count(name, delta);
  }

  /**
   * Adds `delta` to a number column of one row of the tenant (a list's member_count), at the end of
   * the write: the moves of one row add up to one statement however many records of the write
   * moved it. Nothing in the same write may read the column afterwards.
   */
  move(table: TenantTable, id: string, column: string, delta: number): void {
    this.#tally.move(table, id, column, delta);
  }

  /**
   * Queues a writing statement whose result the work does not need, to run at the end of the write
   * with its events and totals (on PostgreSQL in the same round trip). Statements queued by one
   * write must not change the same row twice.
   */
  later(statement: DeferredStatement): void {
    this.#later.later(statement);
  }

  /**
   * Queues the statement `build(values)` as `later` does, its number values added up with those of
   * the statements queued under the same `key` since (a stage's deal totals): one statement for
   * them, so the writes of a run, which end in one statement, never change one row twice.
   */
  laterAddingUp(key: string, values: Record<string, unknown>, build: (values: Record<string, unknown>) => DeferredStatement): void {
    this.#later.laterAddingUp(key, values, build);
  }

  /**
   * Queues the insert of `row` (its defined columns) into `table` as `later` does. Queued rows of
   * one table and columns are inserted by one statement: on SQLite a statement per row costs about
   * three times as much where the table has full-text indexes, which flush their pending terms at
   * the end of every statement (an import's contacts: 71 against 27 µs a row). Returns the queued
   * row, for `setQueued`.
   */
  insertLater(table: TenantTable, row: Record<string, unknown>): QueuedInsert {
    return this.#later.insertLater(table, row);
  }

  /** Sets a column of a row queued by `insertLater` (given there, even as null) to a value known only later in the write. */
  setQueued(insert: QueuedInsert, column: string, value: unknown): void {
    Deferred.setQueued(insert, column, value);
  }

  /**
   * Runs the statements queued so far now, so a later part of the same write reads what they wrote.
   * One by one: unlike a write's end, a flush may hold several changes of one row (a sandbox's seeded
   * deals move their stage's totals each), which one statement could not make.
   */
  async flush(): Promise<void> {
    for (const q of this.#later.take()) await q.execute();
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
  attempt<T>(work: () => Promise<T>, options: { flush?: boolean } = {}): Promise<Attempted<T>> {
    if (!this.#guarded) {
      return bare(work, () => {
        if (options.flush === false) this.#deferred = true;
        else return this.flush();
      });
    }
    const events = this.#events.length;
    const later = this.#later.length;
    const restoreTally = this.#tally.snapshot();
    const restoreKeyed = this.#keyed.snapshot();
    return underSavepoint(this.tx, this.dialect, work, () => this.flush(), () => {
      forgetAllShared(this.tx);
      this.#events.length = events;
      this.#later.truncate(later);
      restoreTally();
      restoreKeyed();
    });
  }

  /**
   * Enqueues a background job of `kind`, committed with the write (transactional outbox): a
   * committed write always has its jobs, a rolled-back one never does. `runAt` (milliseconds) delays
   * it. Returns the job's id. Adds no round trip: the job is written with the write's events.
   */
  enqueue<P>(kind: KindName<P>, payload: P, options: EnqueueOptions = {}): string {
    const row = jobRow(this.scope, kind, payload, options);
    this.#jobs.push(row);
    return row.id;
  }

  /**
   * Schedules the tenant's job of `key` (a record's next step, reminder or expiry: `quote.expiry:<id>`)
   * at `runAt` (milliseconds), replacing the one of that key still waiting, if any: committed with the
   * write like `enqueue`, and the last word of the write on a key stands. A job of the key already
   * running is left to finish; this one runs at its own time. Returns the job's id.
   */
  schedule<P>(key: string, kind: KindName<P>, payload: P, runAt: number): string {
    const row = jobRow(this.scope, kind, payload, { runAt }, key);
    this.#keyed.set(key, row);
    return row.id;
  }

  /**
   * `schedule`, except that a waiting job of `key` due sooner keeps its time: the key's job runs at
   * `runAt` or before. For work that is woken (a sequence's scheduler, when an enrollment falls due)
   * rather than moved.
   */
  wake<P>(key: string, kind: KindName<P>, payload: P, runAt: number): string {
    const row = jobRow(this.scope, kind, payload, { runAt }, key);
    this.#keyed.set(key, row, true);
    return row.id;
  }

  /** Cancels the tenant's waiting job of `key` (none: nothing to do), with the write. */
  cancel(key: string): void {
    this.#keyed.set(key, null);
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
    await follow(this, this.#events, this.#followed);
    this.#followed = this.#events.length;
    const statements = this.#later.take();
    statements.push(...this.#tally.moveStatements(this.tx, this.dialect, this.scope));
    if (this.#jobs.length > 0) statements.push(this.tx.insertInto('jobs').values(this.#jobs));
    statements.push(...this.#keyed.statements(this.tx, this.scope));
    if (this.#events.length > 0) {
      statements.push(...fanOut(this, this.#events));
      const base = this.#seq;
      const rows = this.#events.map((e, i) => ({ ...e, org_id: orgId, mode, seq: base + i + 1, created_at: this.now }));
      statements.push(...mergedInserts(this.tx, this.dialect, 'events', 'events', rows.map((values) => ({ values, params: Object.values(values) }))));
      this.count('events', this.#events.length);
    }
    const counters = this.#tally.counterStatement(this.tx, this.dialect, this.scope);
    if (counters) statements.push(counters);
    const responses = this.#responses.length > 0 ? storeResponses(this.tx, this.dialect, this.scope, this.#responses) : [];
    let changed: bigint;
    try {
      changed = await runEnd(this.tx, this.dialect, statements, responses, () => (this.handedOver = true));
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
}
