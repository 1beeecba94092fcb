// Rate limits (spec section 8): headers on every data API response, 429 past either window, one
// budget shared through Redis, and service as usual when Redis is down.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogs, client, databaseUrl, isPostgres, newOrg, redisUrl, tenant, testApp } from '../helpers/app.ts';

const dir = mkdtempSync(join(tmpdir(), 'rds-rate-'));
/** A store two app instances can share: the run's PostgreSQL database, or one SQLite file. */
const sharedStore = isPostgres() ? databaseUrl() : `sqlite:${join(dir, 'shared.db')}`;

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_PER_MINUTE: '8' } });
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

function expectLimitHeaders(res: LightMyRequestResponse, perSecond: number, perMinute: number) {
  expect(res.headers['x-ratelimit-limit-second']).toBe(String(perSecond));
  expect(res.headers['x-ratelimit-limit-minute']).toBe(String(perMinute));
  const remaining = Number(res.headers['x-ratelimit-remaining']);
  expect(Number.isInteger(remaining)).toBe(true);
  expect(remaining).toBeGreaterThanOrEqual(0);
  expect(remaining).toBeLessThanOrEqual(perMinute);
  const reset = Number(res.headers['x-ratelimit-reset']);
  const now = Date.now() / 1000;
  expect(reset).toBeGreaterThanOrEqual(Math.floor(now));
  expect(reset).toBeLessThanOrEqual(Math.ceil(now) + 61);
  return remaining;
}

const expectLimited = (res: LightMyRequestResponse) => {
  expect(res.statusCode).toBe(429);
  expect(res.json().detail).toContain('Rate limit exceeded');
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  return retryAfter;
};

describe('rate-limit headers', () => {
  it('are on successes and on errors', async () => {
    const big = await testApp();
    try {
      const t = await tenant(big);
      const list = (await t.live.post('/v1/lists', { name: 'L', type: 'contacts' }));
      const responses = {
        201: list,
        200: await t.live.get('/v1/lists'),
        401: await client(big, 'svc_live_unknown').get('/v1/lists'),
        404: await t.live.get('/v1/contacts/con_missing'),
        422: await t.live.post('/v1/contacts', { list_id: list.json().data.id, work_email: 'nope' }),
        400: await t.live.post('/v1/lists', { name: 'L', type: 'bogus' }),
        403: await t.live.get('/v1/lists', { 'x-org-id': 'org_other' }),
        keys: await t.live.get('/auth/v1/api-keys'),
      };
      for (const [status, res] of Object.entries(responses)) {
        if (status !== 'keys') expect(res.statusCode).toBe(Number(status));
        expectLimitHeaders(res, 50, 1000);
        expect(res.headers['retry-after'], status).toBeUndefined();
      }
      // The organization's requests count down one minute budget across live and test keys.
      const a = Number((await t.live.get('/v1/lists')).headers['x-ratelimit-remaining']);
      const b = Number((await t.test.get('/v1/lists')).headers['x-ratelimit-remaining']);
      expect(b).toBe(a - 1);
    } finally {
      await big.close();
    }
  });
});

describe('rate limits in process', () => {
  it('refuse the request past the per-second limit with 429 and Retry-After', async () => {
    const t = await tenant(app);
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.live.get('/v1/lists');
      expect(res.statusCode).toBe(200);
      remaining.push(expectLimitHeaders(res, 5, 8));
    }
    expect(remaining).toEqual([7, 6, 5, 4, 3]);
    const limited = await t.live.get('/v1/lists');
    expectLimited(limited);
    expect(expectLimitHeaders(limited, 5, 8)).toBe(3);
    // Writes and other keys of the organization share the budget; another organization does not.
    expectLimited(await t.test.post('/v1/lists', { name: 'L', type: 'contacts' }));
    const other = await tenant(app);
    expect((await other.live.get('/v1/lists')).statusCode).toBe(200);
  });

  it('refuse the request past the per-minute limit', async () => {
    const minute = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100', RATE_LIMIT_PER_MINUTE: '8' } });
    try {
      const t = await tenant(minute);
      for (let i = 0; i < 8; i++) expect((await t.live.get('/v1/lists')).statusCode).toBe(200);
      const limited = await t.live.get('/v1/lists');
      const retryAfter = expectLimited(limited);
      expect(retryAfter).toBeGreaterThan(50);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    } finally {
      await minute.close();
    }
  });

  it('also limit requests that fail authentication', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await app.inject({ method: 'GET', url: '/v1/lists', headers: { authorization: 'Bearer svc_live_guessing' }, remoteAddress: '127.0.0.77' });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });
});

describe('rate limits on Redis', () => {
  const redisEnv = (perSecond: string, perMinute: string) => ({ DATABASE_URL: sharedStore, REDIS_URL: redisUrl(), RATE_LIMIT_PER_SECOND: perSecond, RATE_LIMIT_PER_MINUTE: perMinute });

  /** Waits until the instance's Redis connection counts requests (before that it fails open). */
  async function untilCounting(instance: FastifyInstance, token: string) {
    for (let i = 0; i < 100; i++) {
      const res = await client(instance, token).get('/v1/lists');
      if (res.headers['x-ratelimit-remaining'] !== undefined && Number(res.headers['x-ratelimit-remaining']) < Number(res.headers['x-ratelimit-limit-minute'])) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('Redis never answered');
  }

  it('share one budget between two app instances', async () => {
    const first = await testApp({ env: redisEnv('5', '8') });
    const second = await testApp({ env: redisEnv('5', '8') });
    try {
      const warm = await newOrg(first);
      await untilCounting(first, warm.live_token);
      await untilCounting(second, warm.live_token);

      const org = await newOrg(first);
      const a = client(first, org.live_token);
      const b = client(second, org.live_token);
      const remaining: number[] = [];
      for (const c of [a, b, a, b, a]) {
        const res = await c.get('/v1/lists');
        expect(res.statusCode).toBe(200);
        remaining.push(expectLimitHeaders(res, 5, 8));
      }
      expect(remaining).toEqual([7, 6, 5, 4, 3]);
      expectLimited(await b.get('/v1/lists'));
      expectLimited(await a.get('/v1/lists'));
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('serve requests when Redis is unreachable, and log it', async () => {
    const before = capturedLogs.length;
    const down = await testApp({ env: { REDIS_URL: 'redis://127.0.0.1:6390', RATE_LIMIT_PER_SECOND: '2', RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      const t = await tenant(down);
      for (let i = 0; i < 4; i++) {
        const res = await t.live.get('/v1/lists');
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-ratelimit-limit-second']).toBe('2');
      }
      expect(capturedLogs.slice(before).join('')).toContain('rate limiter unavailable');
    } finally {
      await down.close();
    }
  });
});
