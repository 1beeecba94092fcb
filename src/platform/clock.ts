// The time of the service: what writes stamp, ids encode, jobs fall due by and reads compare with
// (a quote's expiry, a task's overdue). One clock per process: `buildApp` installs the one it is
// given (the system's unless a test builds the app with a `MovableClock`) and serves it as
// `services.clock`; `nowSeconds()` and `nowMillis()` read it wherever no request or job is at hand
// (an id minted deep in a store, a filter's SQL), so a record's `created_at` and its id always agree.
//
// What stays on the real clock (Date.now, performance.now): durations and latencies, log lines,
// rate-limit windows, cache lifetimes (keys, agency links), the timers that renew idempotency claims,
// job leases (kept between processes, each with its own clock: jobs/queue.ts) and webhook signature
// timestamps (checked by the receiver against its own clock). See docs/testing.md.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * A clock a test moves instead of waiting: it runs on with real time from wherever it was set, so
 * timeouts and retries behave as usual. Move it forward only: ids stay in creation order within a
 * process however it is moved, but a record made after moving it back would be dated before its id.
 * Never reachable through HTTP: only code that builds the app holds one.
 */
export class MovableClock implements Clock {
  #offset = 0;

  now(): number {
    return Date.now() + this.#offset;
  }

  /** Unix seconds now on this clock. */
  seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** Makes it `seconds` (unix seconds) now. */
  set(seconds: number): void {
    this.#offset = seconds * 1000 - Date.now();
  }

  /** Moves it `seconds` forward. */
  advance(seconds: number): void {
    this.#offset += seconds * 1000;
  }

  /** Back to real time. */
  reset(): void {
    this.#offset = 0;
  }
}

let current: Clock = systemClock;

/** Makes `clock` the process's clock (see the top of this file); `buildApp` calls it. */
export function useClock(clock: Clock): void {
  current = clock;
}

/** Milliseconds since the epoch on the process's clock (job times are milliseconds). */
export const nowMillis = (): number => current.now();

/** Unix seconds on the process's clock, the API's timestamp unit. */
export const nowSeconds = (): number => Math.floor(current.now() / 1000);
