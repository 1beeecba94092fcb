// What writes read once for many: ahead for a run of writes of one kind (ReadAhead), and once per
// transaction for a tenant (`WriteContext.shared`).
import type { Transaction } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import type { Scope } from '../scope.ts';

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

/** What was read ahead (`readAheadAll`) for the writes of one context, by kind and key (as JSON). */
export class Answers {
  readonly #answers = new Map<ReadAhead, Map<string, unknown>>();

  async readAll<K, A>(by: ReadAhead<K, A>, tx: Transaction<DB>, dialect: Dialect, scope: Scope, keys: K[]): Promise<void> {
    if (keys.length === 0) return;
    const found = await by.read(tx, dialect, scope, keys);
    let answers = this.#answers.get(by as ReadAhead);
    if (!answers) this.#answers.set(by as ReadAhead, (answers = new Map()));
    for (const [i, key] of keys.entries()) answers.set(JSON.stringify(key), found[i]);
  }

  async read<K, A>(by: ReadAhead<K, A>, tx: Transaction<DB>, dialect: Dialect, scope: Scope, key: K): Promise<A> {
    const answers = this.#answers.get(by as ReadAhead);
    const id = answers && JSON.stringify(key);
    if (id !== undefined && answers!.has(id)) return answers!.get(id) as A;
    return (await by.read(tx, dialect, scope, [key]))[0];
  }
}

/** What the writes of a transaction read once (`WriteContext.shared`), by tenant and name. */
const sharedReads = new WeakMap<Transaction<DB>, Map<string, Promise<unknown>>>();

/** The key of a shared read: the tenant's, so one transaction spanning tenants keeps each its own. */
const sharedKey = (scope: Scope, what: string) => `${scope.orgId}\u0000${scope.mode}\u0000${what}`;

export function sharedRead<T>(tx: Transaction<DB>, scope: Scope, what: string, read: () => Promise<T>): Promise<T> {
  let reads = sharedReads.get(tx);
  if (!reads) sharedReads.set(tx, (reads = new Map()));
  const key = sharedKey(scope, what);
  let answer = reads.get(key) as Promise<T> | undefined;
  if (!answer) {
    answer = read();
    reads.set(key, answer);
    answer.catch(() => reads.delete(key));
  }
  return answer;
}

/** Forgets the shared reads of `scope` under names starting with `what`. */
export function forgetShared(tx: Transaction<DB>, scope: Scope, what: string): void {
  const reads = sharedReads.get(tx);
  if (!reads) return;
  const prefix = sharedKey(scope, what);
  for (const key of reads.keys()) if (key.startsWith(prefix)) reads.delete(key);
}

/** Forgets every shared read of the transaction (a part of a write rolled back). */
export function forgetAllShared(tx: Transaction<DB>): void {
  sharedReads.delete(tx);
}
