// The background side of a process: the job runner and the schedules, started together by
// `npm start` (WORKERS=inline) and by `npm run worker`, stopped together at shutdown.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { JOB_KINDS, SCHEDULES } from '../../resources/job-kinds.ts';
import type { OutboundClient } from '../outbound.ts';
import { JobRunner } from './runner.ts';
import { Scheduler } from './schedules.ts';

export interface Workers {
  runner: JobRunner;
  /** Lets running jobs finish (bounded), hands the rest back to the queue, stops the schedules. */
  stop(graceMs?: number): Promise<void>;
}

export function startWorkers(options: { database: Database; config: Config; log: FastifyBaseLogger; outbound: OutboundClient }): Workers {
  const runner = new JobRunner({ ...options, kinds: JOB_KINDS });
  runner.start();
  const scheduler = new Scheduler(options.database, SCHEDULES, options.log, runner.wake);
  return {
    runner,
    async stop(graceMs) {
      scheduler.stop();
      await runner.stop(graceMs);
    },
  };
}
