// What a kind of background job is: a name, a handler and its retry policy. A group adds a kind by
// defining one with `defineJobKind` and listing it in the groups' list of kinds (job-kinds.ts), which
// the app's builder hands to the workers (`startWorkers`); a write enqueues it with
// `w.enqueue(kind, payload, { runAt })`.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import type { OutboundClient } from '../outbound.ts';
import type { Writer } from '../write/commit.ts';

/** The job's id and tenant, and which attempt this is (1 for the first). */
export interface JobInfo {
  id: string;
  orgId: string;
  mode: string;
  attempt: number;
  /**
   * Whether an earlier attempt of this job may have committed an outcome and its writes (it failed
   * and is retried, or an operator retried it): false on a job's first run, whose handler can skip
   * reading what an earlier attempt would have left.
   */
  ranBefore: boolean;
}

export interface LoadContext {
  database: Database;
  config: Config;
  log: FastifyBaseLogger;
}

export interface JobContext<L = unknown> extends LoadContext {
  outbound: OutboundClient;
  job: JobInfo;
  /** What the kind's `load` read for this job; undefined for kinds without one, or when it failed. */
  loaded: L | undefined;
  /** Aborted when the process shuts down and the job is released to run again elsewhere. */
  signal: AbortSignal;
  /**
   * Runs `work` as one write of `scope`, committed with the writes the process's other jobs make
   * at the same moment (group commit: one transaction, one log sync, for many jobs), and resolves
   * once it is committed. A write that fails fails alone, as `runWrite`'s would.
   */
  write: Writer;
  /**
   * Commits `write` in the transaction that records this attempt's outcome, whatever it is, and only
   * while the job still holds its lease: the job's own record of an attempt (a delivery's) then never
   * disagrees with the queue, and costs no commit of its own. With a `SettleBatch`, `value` joins the
   * values that the other jobs settled in the same transaction gave the same batch, and the batch
   * writes them all in one statement: a write every attempt makes costs no round trip of its own.
   */
  settle(write: SettleWrite): void;
  settle<V>(batch: SettleBatch<V>, value: V): void;
}

/** A write committed with one job's outcome. */
export type SettleWrite = (db: Kysely<DB>) => Promise<unknown>;

/** A write committed with the outcomes of many jobs at once: `write` gets the values they gave it. */
export interface SettleBatch<V> {
  write(db: Kysely<DB>, values: V[]): Promise<unknown>;
}

export interface JobKind<P = unknown, L = unknown> {
  readonly name: string;
  /** Attempts before the job is `dead`; 5 unless given. */
  readonly maxAttempts?: number;
  /** Milliseconds to wait before retry number `attempt` (1 for the first retry). */
  readonly backoff?: (attempt: number, config: Config) => number;
  /**
   * Reads what the jobs of one claim need for all of them at once (a few statements per claim
   * instead of a few per job), in the order given; `run` gets each job's part as `context.loaded`.
   * Jobs of several tenants may come together: read each tenant's in its own scope.
   */
  load?(jobs: ReadonlyArray<{ payload: P; job: JobInfo }>, context: LoadContext): Promise<L[]>;
  /** Runs the job. It must be idempotent: a job whose worker died runs again (at-least-once). */
  run(payload: P, context: JobContext<L>): Promise<void>;
}

export const DEFAULT_MAX_ATTEMPTS = 5;

/** Exponential backoff with full jitter: a random wait between 0 and min(1 h, 2 s × 2^attempt). */
export function fullJitter(attempt: number): number {
  const ceiling = Math.min(3_600_000, 2000 * 2 ** Math.min(attempt, 20));
  return Math.floor(Math.random() * ceiling);
}

export const defineJobKind = <P, L = unknown>(kind: JobKind<P, L>): JobKind<P, L> => kind;

/** Thrown by a handler that must not be retried: the job is `dead` at once with this message. */
export class PermanentJobError extends Error {}

/** Thrown by a handler that decides itself when it is retried (e.g. a fixed retry schedule). */
export class RetryLater extends Error {
  readonly delayMs: number;
  constructor(message: string, delayMs: number) {
    super(message);
    this.delayMs = delayMs;
  }
}
