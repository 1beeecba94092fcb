// Group commit of job outcomes: the jobs of a worker that finish together record their outcomes
// (and the writes their handlers asked to commit with them) in one transaction, so a burst of short
// jobs pays one commit, one log sync on SQLite, for many jobs instead of one or two each, as the
// request write path does (platform/write.ts). When a shared transaction fails, each job is settled
// alone, so one bad write fails only its own job; one that still cannot be recorded stays `running`
// and runs again when its lease ends (at-least-once).
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/database.ts';
import { settleJobs, type SettledJob } from './queue.ts';

/** Most outcomes in one transaction. */
const MAX_BATCH = 200;

interface Pending extends SettledJob {
  done(): void;
}

export class OutcomeQueue {
  readonly #database: Database;
  readonly #log: FastifyBaseLogger;
  #pending: Pending[] = [];
  #busy = false;

  constructor(database: Database, log: FastifyBaseLogger) {
    this.#database = database;
    this.#log = log;
  }

  /** Records a job's outcome with the ones that finish with it; resolves once it is committed (or given up). */
  settle(job: SettledJob): Promise<void> {
    return new Promise((done) => {
      this.#pending.push({ ...job, done });
      this.#schedule();
    });
  }

  // One transaction at a time: outcomes that arrive while one commits wait for the next, which
  // therefore takes all of them.
  #schedule(): void {
    if (this.#busy || this.#pending.length === 0) return;
    this.#busy = true;
    setImmediate(() => void this.#flush());
  }

  async #flush(): Promise<void> {
    const batch = this.#pending.splice(0, MAX_BATCH);
    try {
      await this.#commit(batch);
    } finally {
      for (const p of batch) p.done();
      this.#busy = false;
      this.#schedule();
    }
  }

  async #commit(batch: Pending[]): Promise<void> {
    const { db } = this.#database;
    if (batch.length > 1) {
      try {
        return await db.transaction().execute((tx) => settleJobs(tx, batch));
      } catch {
        // One job's write failed and rolled the batch back: settle each alone, below.
      }
    }
    for (const p of batch) {
      await db.transaction().execute((tx) => settleJobs(tx, [p])).catch((error: Error) =>
        this.#log.error({ job: p.job.id, kind: p.job.kind, err: { message: error.message } }, 'recording a job outcome failed'));
    }
  }
}
