// Shared sliding-log limiter on Redis: one sorted set of allowed request times per key, checked and
// updated by one Lua script (atomic, one round trip) using Redis's clock, so every process shares one
// budget and one time. If Redis cannot answer quickly the request is allowed (fail open) and the
// error is logged: an outage of the limiter must not become an outage of the API.
import { Redis } from 'ioredis';
import type { RateLimitDecision, RateLimiter, RateLimits } from './rate-limiter.ts';

const SCRIPT = `
local key = KEYS[1]
local per_second = tonumber(ARGV[1])
local per_minute = tonumber(ARGV[2])
local member_suffix = ARGV[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - 60000)
local in_minute = redis.call('ZCARD', key)
local in_second = redis.call('ZCOUNT', key, now - 999, '+inf')
local allowed = 0
local wait = 0
if in_second >= per_second then
  local edge = redis.call('ZREVRANGE', key, per_second - 1, per_second - 1, 'WITHSCORES')
  wait = tonumber(edge[2]) + 1000 - now
end
if in_minute >= per_minute then
  local edge = redis.call('ZREVRANGE', key, per_minute - 1, per_minute - 1, 'WITHSCORES')
  local w = tonumber(edge[2]) + 60000 - now
  if w > wait then wait = w end
end
if in_second < per_second and in_minute < per_minute then
  allowed = 1
  redis.call('ZADD', key, now, now .. '-' .. member_suffix)
  redis.call('PEXPIRE', key, 61000)
  in_minute = in_minute + 1
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local oldest_ms = now
if oldest[2] then oldest_ms = tonumber(oldest[2]) end
return {allowed, per_minute - in_minute, oldest_ms + 60000, wait}
`;

type Limited = Redis & { rateLimit(key: string, perSecond: number, perMinute: number, suffix: string): Promise<[number, number, number, number]> };

export class RedisRateLimiter implements RateLimiter {
  readonly #redis: Limited;
  readonly #limits: RateLimits;
  readonly #onError: (error: Error) => void;
  #counter = 0;
  readonly #instance = Math.random().toString(36).slice(2, 10);

  constructor(url: string, limits: RateLimits, onError: (error: Error) => void) {
    this.#limits = limits;
    this.#onError = onError;
    const redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 250,
      connectTimeout: 1000,
      lazyConnect: false,
      retryStrategy: (times) => Math.min(times * 100, 1000),
    });
    let lastLogged = 0;
    redis.on('error', (error: Error) => {
      // A down Redis emits an error on every reconnect attempt; log at most every 5 seconds.
      if (Date.now() - lastLogged > 5000) {
        lastLogged = Date.now();
        onError(error);
      }
    });
    redis.defineCommand('rateLimit', { numberOfKeys: 1, lua: SCRIPT });
    this.#redis = redis as Limited;
  }

  /**
   * Waits (at most `timeoutMs`) for the connection, so a process that has just started enforces the
   * shared budget from its first request instead of failing open until Redis answers.
   */
  async ready(timeoutMs = 2000): Promise<void> {
    if (this.#redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#redis.once('ready', done);
    });
  }

  async hit(key: string, limits: RateLimits = this.#limits): Promise<RateLimitDecision> {
    const { perSecond, perMinute } = limits;
    try {
      const [allowed, remaining, resetMs, waitMs] = await this.#redis.rateLimit(`rl:${key}`, perSecond, perMinute, `${this.#instance}-${this.#counter++}`);
      return { allowed: allowed === 1, remaining: Math.max(0, remaining), reset: Math.ceil(resetMs / 1000), retryAfter: Math.max(1, Math.ceil(waitMs / 1000)) };
    } catch (error) {
      this.#onError(error as Error);
      return { allowed: true, remaining: perMinute, reset: Math.ceil(Date.now() / 1000), retryAfter: 0 };
    }
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
