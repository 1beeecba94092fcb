// The background side of a process: the job runner and the schedules, started together by
// `npm start` (WORKERS=inline) and by `npm run worker`, stopped together at shutdown.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { OutboundClient } from '../outbound.ts';
import type { JobKind } from './kinds.ts';
import { JobRunner } from './runner.ts';
import { Scheduler, type Schedule } from './schedules.ts';

export interface Workers {
  runner: JobRunner;
  /** Lets running jobs finish (bounded), hands the rest back to the queue, stops the schedules. */
  stop(graceMs?: number): Promise<void>;
}

/** The kinds of job a process runs and the schedules it keeps: the groups', told by the app's builder. */
export interface BackgroundWork {
  kinds: readonly JobKind<never>[];
  schedules: readonly Schedule[];
}

export function startWorkers(options: { database: Database; config: Config; log: FastifyBaseLogger; outbound: OutboundClient; work: BackgroundWork }): Workers {
  const { work, ...rest } = options;
  const runner = new JobRunner({ ...rest, kinds: work.kinds });
  runner.start();
  const scheduler = new Scheduler(options.database, work.schedules, options.log, runner.wake);
  return {
    runner,
    async stop(graceMs) {
      scheduler.stop();
      await runner.stop(graceMs);
    },
  };
}
