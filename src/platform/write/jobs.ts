// The jobs a write enqueues (transactional outbox): rows of `jobs`, inserted with the write's events;
// and its scheduled work by key, which replaces or cancels a record's waiting job.
import { sql, type Transaction } from 'kysely';
import type { DB, JobsTable } from '../../db/schema.ts';
import { nowMillis } from '../clock.ts';
import { newId } from '../ids.ts';
import { DEFAULT_MAX_ATTEMPTS, type JobKind } from '../jobs/kinds.ts';
import type { Scope } from '../scope.ts';
import type { DeferredStatement } from './deferred.ts';

export interface EnqueueOptions {
  runAt?: number;
  id?: string;
  concurrencyKey?: string;
}

/**
 * A kind as a write names it: its name and attempts. A group may so schedule a kind whose handler
 * imports the code that schedules it (a quote's expiry runs the lifecycle that schedules it).
 */
export type KindName<P> = Pick<JobKind<P>, 'name' | 'maxAttempts'>;

/** The row of a job of `kind` for `scope`, due at `runAt` (milliseconds) or now. */
export function jobRow<P>(scope: Scope, kind: KindName<P>, payload: P, options: EnqueueOptions, key: string | null = null): JobsTable {
  const now = nowMillis();
  const id = options.id ?? newId('job');
  return {
    org_id: scope.orgId, mode: scope.mode, id, kind: kind.name, payload: JSON.stringify(payload), concurrency_key: options.concurrencyKey ?? null, status: 'queued',
    run_at: options.runAt ?? now, attempts: 0, max_attempts: kind.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    lease_until: null, lease_token: null, last_error: null, created_at: now, updated_at: now, schedule_key: key,
  };
}

/**
 * A write's scheduled work by key (`w.schedule`, `w.cancel`): the last of what it said for each key,
 * a job to replace the key's waiting one with or none (cancelled). Written at the write's end with no
 * round trip of its own: the jobs as one upsert on the unique index of waiting keyed jobs (migration
 * 0021), the cancels as one delete. A job already running is never touched: it finishes, and gives
 * its key up if it goes back to waiting (`keyKept`, jobs/queue.ts).
 */
export class KeyedJobs {
  #keys = new Map<string, { row: JobsTable; earliest: boolean } | null>();

  /** `earliest`: a waiting job of the key due sooner keeps its time (a wake-up never delays one). */
  set(key: string, row: JobsTable | null, earliest = false): void {
    const said = this.#keys.get(key);
    // Woken twice by one write: the earlier time stands.
    if (earliest && row && said?.earliest && said.row.run_at < row.run_at) row = { ...row, run_at: said.row.run_at };
    this.#keys.delete(key); // kept in the order last said
    this.#keys.set(key, row && { row, earliest });
  }

  /** What was said so far, to go back to when a part of the write is refused. */
  snapshot(): () => void {
    const before = new Map(this.#keys);
    return () => {
      this.#keys = before;
    };
  }

  statements(tx: Transaction<DB>, scope: Scope): DeferredStatement[] {
    if (this.#keys.size === 0) return [];
    const said = [...this.#keys.values()].filter((k) => k !== null);
    const cancelled = [...this.#keys].filter(([, k]) => k === null).map(([key]) => key);
    const out: DeferredStatement[] = [];
    if (cancelled.length > 0) {
      out.push(tx.deleteFrom('jobs').where('org_id', '=', scope.orgId).where('mode', '=', scope.mode)
        .where('schedule_key', 'in', cancelled).where('status', 'in', ['queued', 'failed']));
    }
    for (const earliest of [false, true]) {
      const rows = said.filter((k) => k.earliest === earliest).map((k) => k.row);
      if (rows.length === 0) continue;
      // The index's own predicate, as text: PostgreSQL infers a partial index only from the same expression.
      out.push(tx.insertInto('jobs').values(rows).onConflict((oc) => oc.columns(['org_id', 'mode', 'schedule_key'])
        .where(sql<boolean>`schedule_key is not null and status in ('queued', 'failed')`)
        .doUpdateSet((eb) => ({
          id: eb.ref('excluded.id'), kind: eb.ref('excluded.kind'), payload: eb.ref('excluded.payload'), concurrency_key: eb.ref('excluded.concurrency_key'),
          status: eb.ref('excluded.status'),
          run_at: earliest ? sql<number>`case when jobs.status = 'queued' and jobs.run_at < excluded.run_at then jobs.run_at else excluded.run_at end` : eb.ref('excluded.run_at'),
          attempts: eb.ref('excluded.attempts'), max_attempts: eb.ref('excluded.max_attempts'),
          lease_until: eb.ref('excluded.lease_until'), lease_token: eb.ref('excluded.lease_token'), last_error: eb.ref('excluded.last_error'),
          created_at: eb.ref('excluded.created_at'), updated_at: eb.ref('excluded.updated_at'),
        }))));
    }
    return out;
  }
}
