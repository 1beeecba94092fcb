// The jobs a write enqueues (transactional outbox): rows of `jobs`, inserted with the write's events.
import type { JobsTable } from '../../db/schema.ts';
import { newId } from '../ids.ts';
import { DEFAULT_MAX_ATTEMPTS, type JobKind } from '../jobs/kinds.ts';
import type { Scope } from '../scope.ts';

export interface EnqueueOptions {
  runAt?: number;
  id?: string;
  concurrencyKey?: string;
}

/** The row of a job of `kind` for `scope`, due at `runAt` (milliseconds) or now. */
export function jobRow<P>(scope: Scope, kind: JobKind<P>, payload: P, options: EnqueueOptions): JobsTable {
  const now = Date.now();
  const id = options.id ?? newId('job');
  return {
    org_id: scope.orgId, mode: scope.mode, id, kind: kind.name, payload: JSON.stringify(payload), concurrency_key: options.concurrencyKey ?? null, status: 'queued',
    run_at: options.runAt ?? now, attempts: 0, max_attempts: kind.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    lease_until: null, lease_token: null, last_error: null, created_at: now, updated_at: now,
  };
}
