// Sliding-window rate limits: a request is allowed when fewer than `perSecond` requests were allowed
// in the last 1,000 ms and fewer than `perMinute` in the last 60,000 ms. Both stores keep the times of
// allowed requests, so no second and no minute, wherever it starts, ever passes more than the limit.

export interface RateLimitDecision {
  allowed: boolean;
  /** Requests left in the current minute window after this one. */
  remaining: number;
  /** Unix seconds when the minute window next frees a slot. */
  reset: number;
  /** Seconds to wait before a retry can pass (meaningful when not allowed). */
  retryAfter: number;
}

export interface RateLimits {
  perSecond: number;
  perMinute: number;
}

export interface RateLimiter {
  /** Charges `key`; `limits` replace the limiter's own for this key (a budget of its own, like a public link's). */
  hit(key: string, limits?: RateLimits): Promise<RateLimitDecision>;
  /** The same decision without a promise, for limiters that decide in-process. */
  hitSync?(key: string, limits?: RateLimits): RateLimitDecision;
  /** Resolves once the limiter can enforce limits (or has given up waiting for its store). */
  ready?(): Promise<void>;
  close(): Promise<void>;
}
