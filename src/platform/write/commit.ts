// Transactions of writes: one write in its own (`runWrite`, `writeIn`), or many in one, in order
// (`commitTogether`, for the group commit of WriteQueue). The first statement of a transaction
// locks each of its tenants' event-sequence rows: writes of one tenant are serialized, their events
// are numbered in commit order (what the live event stream relies on), and transactions never take
// row locks in different orders, so they cannot deadlock.
import { setImmediate as turn } from 'node:timers/promises';
import type { Transaction } from 'kysely';
import type { Database, Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import type { Scope } from '../scope.ts';
import { WriteContext } from './context.ts';
import { lockTenant } from './counters.ts';
import type { Actor } from './events.ts';
import { PartRefused } from './parts.ts';
import type { Ahead } from './read-ahead.ts';

export type Work<T> = (w: WriteContext) => Promise<T>;
/**
 * What commits a write: `runWrite` on its own, or a group commit (a job's `context.write`), where
 * writes announcing the same `ahead` join a run (read-ahead.ts).
 */
export type Writer = <T>(scope: Scope, work: Work<T>, ahead?: Ahead) => Promise<T>;

/** Runs `work` as the write of `scope` inside an open transaction (one transaction may span scopes). */
export async function writeIn<T>(tx: Transaction<DB>, dialect: Dialect, scope: Scope, work: Work<T>): Promise<T> {
  const w = new WriteContext(tx, scope, dialect, await lockTenant(tx, dialect, scope));
  const result = await work(w);
  await w.finish();
  return result;
}

export interface Write {
  scope: Scope;
  work: Work<unknown>;
  actor?: Actor | null;
  ahead?: Ahead;
}

export const scopeKey = (scope: Scope) => `${scope.orgId}\u0000${scope.mode}`;

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
export async function commitParts(database: Database, writes: Write[]): Promise<unknown[]> {
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
