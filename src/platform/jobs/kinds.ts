// What a kind of background job is: a name, a handler and its retry policy. A group adds a kind by
// defining one with `defineJobKind` and listing it in src/resources/job-kinds.ts; a write enqueues
// it with `w.enqueue(kind, payload, { runAt })`.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { OutboundClient } from '../outbound.ts';

export interface JobContext {
  database: Database;
  config: Config;
  log: FastifyBaseLogger;
  outbound: OutboundClient;
  /** The job's id and which attempt this is (1 for the first). */
  job: { id: string; orgId: string; mode: string; attempt: number };
  /** Aborted when the process shuts down and the job is released to run again elsewhere. */
  signal: AbortSignal;
}

export interface JobKind<P = unknown> {
  readonly name: string;
  /** Attempts before the job is `dead`; 5 unless given. */
  readonly maxAttempts?: number;
  /** Milliseconds to wait before retry number `attempt` (1 for the first retry). */
  readonly backoff?: (attempt: number, config: Config) => number;
  /** Runs the job. It must be idempotent: a job whose worker died runs again (at-least-once). */
  run(payload: P, context: JobContext): Promise<void>;
}

export const DEFAULT_MAX_ATTEMPTS = 5;

/** Exponential backoff with full jitter: a random wait between 0 and min(1 h, 2 s × 2^attempt). */
export function fullJitter(attempt: number): number {
  const ceiling = Math.min(3_600_000, 2000 * 2 ** Math.min(attempt, 20));
  return Math.floor(Math.random() * ceiling);
}

export const defineJobKind = <P>(kind: JobKind<P>): JobKind<P> => kind;

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
