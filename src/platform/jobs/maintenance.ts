// Maintenance of the platform's own tables, run on schedules (listed with the groups' in job-kinds.ts).
import { nowMillis } from '../clock.ts';
import { purgeExpired } from '../idempotency.ts';
import { defineJobKind } from './kinds.ts';
import { pruneSucceeded } from './queue.ts';

type None = Record<string, never>;

export const purgeIdempotencyKeys = defineJobKind<None>({
  name: 'maintenance.purge_idempotency_keys',
  async run(_payload, { database }) {
    await purgeExpired(database.db);
  },
});

/** Keeps the jobs table bounded: succeeded jobs go after JOB_RETENTION_HOURS; failed and dead stay. */
export const pruneJobs = defineJobKind<None>({
  name: 'maintenance.prune_jobs',
  async run(_payload, { database, config, log }) {
    const pruned = await pruneSucceeded(database, nowMillis() - config.jobRetentionHours * 3_600_000);
    if (pruned > 0) log.info({ pruned }, 'succeeded jobs pruned');
  },
});
