// Group commit of the writes of requests: the writes that arrive together share one transaction,
// so they pay for one commit (one log sync) and one lock of each tenant instead of one each; a
// tenant's writes that arrive while one of its transactions runs make the next one. A write that
// fails rolls the shared transaction back; its batch is then run again one write per transaction,
// so only the failing write fails and nothing is ever half applied (when the store itself is
// unreachable, the whole batch fails at once instead).
import type { Database } from '../../db/database.ts';
import { isUnavailable } from '../error-handler.ts';
import type { Scope } from '../scope.ts';
import { commitParts, scopeKey, type Work, type Write } from './commit.ts';
import type { Actor } from './events.ts';
import type { Ahead } from './read-ahead.ts';

interface QueuedWrite extends Write {
  resolve(result: unknown): void;
  reject(error: unknown): void;
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
