// In-process sliding-log limiter: per key, a ring buffer of the last `perMinute` allowed times.
// O(1) per request: the window is full exactly when the perSecond-th (or perMinute-th) most recent
// allowed request is still inside it.
import type { RateLimitDecision, RateLimiter, RateLimits } from './rate-limiter.ts';

class Window {
  readonly times: Float64Array;
  count = 0;
  head = 0; // index of the next write

  constructor(size: number) {
    this.times = new Float64Array(size);
  }

  /** The n-th most recent allowed time (1-based), or -Infinity if fewer were recorded. */
  recent(n: number): number {
    if (n > this.count) return -Infinity;
    const size = this.times.length;
    return this.times[(this.head - n + size * 2) % size];
  }

  push(time: number): void {
    this.times[this.head] = time;
    this.head = (this.head + 1) % this.times.length;
    if (this.count < this.times.length) this.count++;
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

  async hit(key: string): Promise<RateLimitDecision> {
    return this.hitSync(key);
  }

  hitSync(key: string): RateLimitDecision {
    const { perSecond, perMinute } = this.#limits;
    const now = this.#now();
    let window = this.#windows.get(key);
    if (!window) {
      if (this.#windows.size >= MAX_KEYS) this.#prune(now);
      window = new Window(Math.max(perMinute, perSecond));
      this.#windows.set(key, window);
    }
    const secondEdge = window.recent(perSecond);
    const minuteEdge = window.recent(perMinute);
    const secondFull = secondEdge > now - 1000;
    const minuteFull = minuteEdge > now - 60_000;
    if (secondFull || minuteFull) {
      const waitMs = Math.max(secondFull ? secondEdge + 1000 - now : 0, minuteFull ? minuteEdge + 60_000 - now : 0);
      return { allowed: false, remaining: this.#remaining(window, now), reset: this.#reset(window, now), retryAfter: Math.max(1, Math.ceil(waitMs / 1000)) };
    }
    window.push(now);
    return { allowed: true, remaining: this.#remaining(window, now), reset: this.#reset(window, now), retryAfter: 0 };
  }

  #remaining(window: Window, now: number): number {
    const { perMinute } = this.#limits;
    let used = 0;
    // Count allowed requests in the last minute; the buffer is ordered, newest last.
    let lo = 1;
    let hi = Math.min(window.count, perMinute);
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (window.recent(mid) > now - 60_000) {
        used = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return Math.max(0, perMinute - used);
  }

  #reset(window: Window, now: number): number {
    const used = this.#limits.perMinute - this.#remaining(window, now);
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
