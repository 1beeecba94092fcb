// In-process sliding-log limiter: per key, the times of the allowed requests of the last minute.
// The window is full exactly when the perSecond-th (or perMinute-th) most recent allowed request is
// still inside it. Times are kept per millisecond with a running count, so a key's memory follows
// the distinct milliseconds of its last minute (at most 60,000 pairs), not the configured limit:
// raising the limits for a busy tenant costs no memory up front.
import type { RateLimitDecision, RateLimiter, RateLimits } from './rate-limiter.ts';

const MINUTE_MS = 60_000;

class Window {
  #times = new Float64Array(8);
  /** Running number of allowed requests up to and including each time. */
  #counts = new Float64Array(8);
  #first = 0; // ring index of the oldest pair
  #length = 0;
  /** Running number just before the oldest pair held (those before it were dropped). */
  #dropped = 0;
  /** Allowed requests recorded so far. */
  total = 0;

  #index(i: number): number {
    return (this.#first + i) & (this.#times.length - 1);
  }

  /** The n-th most recent allowed time (1-based); -Infinity if it is older than the pairs held. */
  recent(n: number): number {
    const target = this.total - n + 1;
    if (target <= this.#dropped) return -Infinity;
    let lo = 0;
    let hi = this.#length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#counts[this.#index(mid)] >= target) hi = mid;
      else lo = mid + 1;
    }
    return this.#times[this.#index(lo)];
  }

  /** Allowed requests after `edge`. */
  countAfter(edge: number): number {
    let lo = 0;
    let hi = this.#length;
    // The first pair after the edge; everything before it (and all dropped pairs) is not counted.
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#times[this.#index(mid)] > edge) hi = mid;
      else lo = mid + 1;
    }
    const before = lo === 0 ? this.#dropped : this.#counts[this.#index(lo - 1)];
    return this.total - before;
  }

  push(time: number): void {
    this.total++;
    while (this.#length > 0 && this.#times[this.#first] <= time - MINUTE_MS) {
      this.#dropped = this.#counts[this.#first];
      this.#first = (this.#first + 1) & (this.#times.length - 1);
      this.#length--;
    }
    if (this.#length > 0 && this.#times[this.#index(this.#length - 1)] === time) {
      this.#counts[this.#index(this.#length - 1)] = this.total;
      return;
    }
    if (this.#length === this.#times.length) this.#grow();
    const at = this.#index(this.#length);
    this.#times[at] = time;
    this.#counts[at] = this.total;
    this.#length++;
  }

  #grow(): void {
    const times = new Float64Array(this.#times.length * 2);
    const counts = new Float64Array(this.#times.length * 2);
    for (let i = 0; i < this.#length; i++) {
      times[i] = this.#times[this.#index(i)];
      counts[i] = this.#counts[this.#index(i)];
    }
    this.#times = times;
    this.#counts = counts;
    this.#first = 0;
  }
}

const MAX_KEYS = 100_000;

export class MemoryRateLimiter implements RateLimiter {
  readonly #limits: RateLimits;
  readonly #windows = new Map<string, Window>();
  readonly #now: () => number;

  constructor(limits: RateLimits, now: () => number = Date.now) {
    this.#limits = limits;
    this.#now = now;
  }

  async hit(key: string, limits?: RateLimits): Promise<RateLimitDecision> {
    return this.hitSync(key, limits);
  }

  hitSync(key: string, limits: RateLimits = this.#limits): RateLimitDecision {
    const { perSecond, perMinute } = limits;
    const now = this.#now();
    let window = this.#windows.get(key);
    if (!window) {
      if (this.#windows.size >= MAX_KEYS) this.#prune(now);
      window = new Window();
      this.#windows.set(key, window);
    }
    const secondEdge = window.recent(perSecond);
    const minuteEdge = window.recent(perMinute);
    const secondFull = secondEdge > now - 1000;
    const minuteFull = minuteEdge > now - 60_000;
    if (secondFull || minuteFull) {
      const waitMs = Math.max(secondFull ? secondEdge + 1000 - now : 0, minuteFull ? minuteEdge + 60_000 - now : 0);
      return { allowed: false, remaining: this.#remaining(window, now, perMinute), reset: this.#reset(window, now, perMinute), retryAfter: Math.max(1, Math.ceil(waitMs / 1000)) };
    }
    window.push(now);
    return { allowed: true, remaining: this.#remaining(window, now, perMinute), reset: this.#reset(window, now, perMinute), retryAfter: 0 };
  }

  #remaining(window: Window, now: number, perMinute: number): number {
    return Math.max(0, perMinute - Math.min(perMinute, window.countAfter(now - MINUTE_MS)));
  }

  #reset(window: Window, now: number, perMinute: number): number {
    const used = perMinute - this.#remaining(window, now, perMinute);
    const oldest = used > 0 ? window.recent(used) : now;
    return Math.ceil((oldest + 60_000) / 1000);
  }

  #prune(now: number): void {
    for (const [key, window] of this.#windows) {
      if (window.recent(1) <= now - 60_000) this.#windows.delete(key);
    }
  }

  async close(): Promise<void> {}
}
