// Runs background jobs in this process: claims due jobs up to WORKER_CONCURRENCY at a time, runs
// the handler of each job's kind, records the outcome, and keeps the leases of running jobs alive.
// Idle, it sleeps instead of polling hard: it wakes at once when this process commits a write
// (`wake()`), on PostgreSQL when any process commits a job (LISTEN jobs, see the 0004 migration),
// and otherwise checks again after a short sleep that grows to one second (retries come due, jobs of
// other processes on a shared SQLite file). Stopping lets running jobs finish for a bounded time,
// then hands the rest back to the queue.
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { nowMillis } from '../clock.ts';
import type { OutboundClient } from '../outbound.ts';
import { DEFAULT_MAX_ATTEMPTS, fullJitter, PermanentJobError, RetryLater, type JobInfo, type JobKind, type SettleBatch, type SettleWrite } from './kinds.ts';
import { claimJobs, extendLeases, jobKey, nextDueAt, releaseJobs, type JobRow, type SettledJob } from './queue.ts';
import { OutcomeQueue } from './settler.ts';
import { WriteQueue } from '../write/queue.ts';

const MIN_IDLE_MS = 25;

// A retry keeps its last error (an operator's retry too, which starts the attempts again).
const info = (job: JobRow): JobInfo => ({ id: job.id, orgId: job.org_id, mode: job.mode, attempt: Number(job.attempts), ranBefore: Number(job.attempts) > 1 || job.last_error !== null });
const MAX_IDLE_MS = 1000;
const CLAIM_GATHER_MS = 5;

/** Adds `by` to the count of `name`, dropping it at 0. */
function count(counts: Map<string, number>, name: string, by: number): void {
  const n = (counts.get(name) ?? 0) + by;
  if (n === 0) counts.delete(name);
  else counts.set(name, n);
}

export interface RunnerOptions {
  database: Database;
  config: Config;
  log: FastifyBaseLogger;
  outbound: OutboundClient;
  kinds: readonly JobKind<never>[];
}

export class JobRunner {
  readonly #o: RunnerOptions;
  readonly #kinds: Map<string, JobKind<never>>;
  readonly #id = randomBytes(6).toString('hex');
  /** Jobs claimed and not yet settled, by `org/mode/id`, with the lease token of their claim. */
  readonly #running = new Map<string, { token: string; done: Promise<void> }>();
  /** Jobs whose handler is running: the slots of WORKER_CONCURRENCY in use. */
  #handling = 0;
  /** Running jobs per concurrency key; a key at `#perKey` (WORKER_CONCURRENCY_PER_KEY) is left out of claims. */
  readonly #keys = new Map<string, number>();
  readonly #perKey: number;
  /** Running jobs per organization ('' for system jobs); one at `#perOrg` (WORKER_CONCURRENCY_PER_ORG) is left out of claims. */
  readonly #orgs = new Map<string, number>();
  readonly #perOrg: number;
  readonly #abort = new AbortController();
  readonly #leaseMs: number;
  readonly #outcomes: OutcomeQueue;
  /** The jobs' own writes (`context.write`), committed together as requests' writes are. */
  readonly #writes: WriteQueue;
  #claims = 0;
  #stopping = false;
  #wakeUp: (() => void) | undefined;
  #gather: NodeJS.Timeout | undefined;
  #woken = false;
  #loop: Promise<void> | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #listener: pg.Client | undefined;

  constructor(options: RunnerOptions) {
    this.#o = options;
    this.#kinds = new Map(options.kinds.map((k) => [k.name, k]));
    this.#leaseMs = options.config.jobLeaseSeconds * 1000;
    this.#perKey = options.config.workerConcurrencyPerKey;
    this.#perOrg = options.config.workerConcurrencyPerOrg;
    this.#outcomes = new OutcomeQueue(options.database, options.log);
    this.#writes = new WriteQueue(options.database);
  }

  start(): void {
    this.#loop = this.#run();
    this.#heartbeat = setInterval(() => {
      extendLeases(this.#o.database.db, this.#tokens(), this.#leaseMs)
        .catch((error: Error) => this.#o.log.warn({ err: { message: error.message } }, 'job lease renewal failed'));
    }, this.#leaseMs / 3).unref();
    if (this.#o.database.dialect === 'postgres') void this.#listen();
  }

  /** Something may be due now: check without waiting for the idle sleep to end. */
  wake = (): void => {
    this.#woken = true;
    this.#wakeUp?.();
  };

  /**
   * A slot came free: claim after a few milliseconds, with the slots that free up meanwhile, so that
   * jobs finishing one by one are replaced a batch per claim rather than one claim (a statement and,
   * on SQLite, a commit) each.
   */
  #wakeSoon(): void {
    this.#gather ??= setTimeout(() => {
      this.#gather = undefined;
      this.wake();
    }, CLAIM_GATHER_MS);
  }

  /** Jobs running in this process now. */
  get active(): number {
    return this.#running.size;
  }

  /** Stops claiming; waits up to `graceMs` for running jobs, then releases the rest to the queue. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.wake();
    clearInterval(this.#heartbeat);
    clearTimeout(this.#gather);
    await this.#loop;
    const finished = Promise.allSettled([...this.#running.values()].map((r) => r.done));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([finished, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    const left = this.#tokens();
    this.#abort.abort();
    await releaseJobs(this.#o.database.db, left).catch((error: Error) => this.#o.log.warn({ err: { message: error.message } }, 'releasing jobs failed'));
    await this.#listener?.end().catch(() => {});
  }

  async #run(): Promise<void> {
    let idle = MIN_IDLE_MS;
    while (!this.#stopping) {
      this.#woken = false;
      // Outcomes waiting for their commit hold no slot, but no more than a second round of them.
      const concurrency = this.#o.config.workerConcurrency;
      const free = Math.min(concurrency - this.#handling, 2 * concurrency - this.#running.size);
      let claimed: JobRow[] = [];
      if (free > 0) {
        try {
          const keys = new Map([...this.#keys].map(([key, n]) => [key, this.#perKey - n]));
          const orgs = new Map([...this.#orgs].map(([org, n]) => [org, this.#perOrg - n]));
          const room = { perKey: this.#perKey, keys, perOrg: this.#perOrg, orgs };
          claimed = await claimJobs(this.#o.database, [...this.#kinds.keys()], room, free, `${this.#id}:${++this.#claims}`, this.#leaseMs);
        } catch (error) {
          this.#o.log.warn({ err: { message: (error as Error).message } }, 'claiming jobs failed');
        }
      }
      await this.#startAll(claimed);
      if (claimed.length > 0 && claimed.length === free) {
        idle = MIN_IDLE_MS;
        await this.#sleep(MAX_IDLE_MS); // full: a finishing job wakes the loop for more
        continue;
      }
      if (claimed.length > 0) idle = MIN_IDLE_MS;
      // Nothing more is due: a job falling due before the sleep would end (a scheduled one) is run on time.
      const next = this.#woken ? undefined : await nextDueAt(this.#o.database, [...this.#kinds.keys()]).catch(() => undefined);
      const untilDue = next === undefined ? Infinity : Math.max(0, next - nowMillis());
      await this.#sleep(Math.min(idle, untilDue));
      if (!this.#woken && untilDue >= idle) idle = Math.min(MAX_IDLE_MS, idle * 2);
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#woken || this.#stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wakeUp = () => {
        this.#wakeUp = undefined;
        done();
      };
    });
  }

  #tokens(): string[] {
    return [...new Set([...this.#running.values()].map((r) => r.token))];
  }

  /** Starts the claimed jobs, after their kinds' `load` read what they need for all of them. */
  async #startAll(claimed: JobRow[]): Promise<void> {
    const byKind = Map.groupBy(claimed, (job) => job.kind);
    for (const [name, jobs] of byKind) {
      const kind = this.#kinds.get(name);
      let loaded: unknown[] = [];
      if (kind?.load) {
        const { database, config, log } = this.#o;
        loaded = await kind.load(jobs.map((job) => ({ payload: JSON.parse(job.payload) as never, job: info(job) })), { database, config, log })
          .catch((error: Error) => (log.warn({ kind: name, err: { message: error.message } }, 'loading jobs failed'), []));
      }
      jobs.forEach((job, i) => this.#start(job, loaded[i]));
    }
  }

  #start(job: JobRow, loaded: unknown): void {
    const key = jobKey(job);
    const group = job.concurrency_key;
    this.#handling++;
    if (group !== null) count(this.#keys, group, 1);
    count(this.#orgs, job.org_id, 1);
    const done = (async () => {
      let settled: SettledJob | undefined;
      try {
        settled = await this.#attempt(job, loaded);
      } finally {
        // The slot is free once the handler is done: the next jobs run while this outcome commits.
        this.#handling--;
        if (group !== null) count(this.#keys, group, -1);
        count(this.#orgs, job.org_id, -1);
        this.#wakeSoon();
      }
      if (settled) await this.#outcomes.settle(settled);
    })().finally(() => this.#running.delete(key));
    this.#running.set(key, { token: job.lease_token!, done });
  }

  /** Runs the job's handler; its outcome, or undefined when the job was released at shutdown. */
  async #attempt(job: JobRow, loaded: unknown): Promise<SettledJob | undefined> {
    const kind = this.#kinds.get(job.kind);
    const attempt = Number(job.attempts);
    const writes: SettledJob['writes'] = [];
    try {
      if (!kind) throw new PermanentJobError(`No handler for job kind ${job.kind}`);
      await kind.run(JSON.parse(job.payload) as never, {
        database: this.#o.database, config: this.#o.config, log: this.#o.log, outbound: this.#o.outbound,
        job: info(job), loaded: loaded as never, signal: this.#abort.signal,
        write: (scope, work, ahead) => this.#writes.run(scope, work, null, ahead),
        settle: (write: SettleWrite | SettleBatch<unknown>, value?: unknown) => void writes.push({ batch: typeof write === 'function' ? { write } : write, value }),
      });
      return { job, outcome: { status: 'succeeded' }, writes };
    } catch (error) {
      if (this.#abort.signal.aborted) return undefined; // released at shutdown; the next worker runs it
      const message = error instanceof Error ? error.message : String(error);
      const max = Number(job.max_attempts) || DEFAULT_MAX_ATTEMPTS;
      const retry = !(error instanceof PermanentJobError) && attempt < max;
      const delay = !retry ? 0 : error instanceof RetryLater ? error.delayMs : (kind?.backoff ?? fullJitter)(attempt, this.#o.config);
      this.#o.log.warn({ job: job.id, kind: job.kind, attempt, retry, err: { message } }, 'job failed');
      return { job, outcome: { status: retry ? 'failed' : 'dead', error: message, runAt: nowMillis() + delay }, writes };
    }
  }

  /** PostgreSQL: a connection that LISTENs on `jobs`, reconnecting after a lost connection. */
  async #listen(): Promise<void> {
    let delay = 500;
    while (!this.#stopping) {
      const client = new pg.Client({ connectionString: this.#o.config.databaseUrl, connectionTimeoutMillis: 5000 });
      const lost = new Promise<void>((resolve) => {
        client.on('error', () => resolve());
        client.on('end', () => resolve());
      });
      try {
        await client.connect();
        client.on('notification', this.wake);
        await client.query('listen jobs');
        this.#listener = client;
        delay = 500;
        this.wake(); // anything committed while not listening
        await lost;
      } catch {
        // the store is down; try again below
      }
      await client.end().catch(() => {});
      if (this.#stopping) return;
      await new Promise((resolve) => setTimeout(resolve, delay).unref());
      delay = Math.min(delay * 2, 10_000);
    }
  }
}
