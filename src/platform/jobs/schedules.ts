// Recurring work on cron expressions (parsed by croner, in UTC). Every process that runs workers
// keeps the timers; when one fires, the process adds a job whose id is the schedule's name and the
// time it fired for, so however many processes fire, one job is added and run once per period.
import { Cron } from 'croner';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/database.ts';
import type { JobKind } from './kinds.ts';
import { DEFAULT_MAX_ATTEMPTS } from './kinds.ts';
import { enqueueOnce } from './queue.ts';

export interface Schedule {
  /** A cron expression (five fields, or six with seconds first), UTC. */
  readonly cron: string;
  readonly kind: JobKind<Record<string, never>>;
}

export class Scheduler {
  readonly #timers: Cron[] = [];

  constructor(database: Database, schedules: readonly Schedule[], log: FastifyBaseLogger, onEnqueued: () => void) {
    for (const { cron, kind } of schedules) {
      const timer: Cron = new Cron(cron, { timezone: 'Etc/UTC', protect: true, unref: true }, async () => {
        const due = timer.currentRun() ?? new Date();
        const id = `sch_${kind.name}_${Math.floor(due.getTime() / 1000)}`;
        try {
          if (await enqueueOnce(database.db, id, kind.name, kind.maxAttempts ?? DEFAULT_MAX_ATTEMPTS)) onEnqueued();
        } catch (error) {
          log.warn({ err: { message: (error as Error).message }, schedule: kind.name }, 'scheduling a job failed');
        }
      });
      this.#timers.push(timer);
    }
  }

  stop(): void {
    for (const timer of this.#timers) timer.stop();
  }
}
