// Store faults under load, on the PostgreSQL + Redis pass. PostgreSQL and Redis are reached through
// TCP proxies the test stops and starts: while PostgreSQL is away requests get 503 with a `detail`
// and no internals (and /healthz 503), and the service recovers by itself when it is back; while
// Redis is away requests are served (fail open, logged) and shared limiting resumes after.
// PG_RESTART_TEST=1 also restarts the real PostgreSQL server under load (disruptive: opt-in);
// PG_RESTART_COMMAND overrides how (default: pg_ctlcluster <version> main restart); whatever
// happens, the test starts the server again if it does not answer (PG_START_COMMAND overrides how).
import { execSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { capturedLogs, databaseUrl, isPostgres, redisUrl, testApp } from '../helpers/app.ts';
import { freshOrg, type Actor } from './support/actors.ts';
import { figures, reportFigures } from './support/figures.ts';
import { mostAdmittedInAnyWindow, timed, type Timed } from './support/rate-window.ts';
import { json, type Reply } from './support/reply.ts';
import { expectNoSecretsInLogs } from './support/secrets.ts';
import { TcpProxy } from './support/tcp-proxy.ts';

const apps: FastifyInstance[] = [];
const proxies: TcpProxy[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterAll(async () => {
  for (const proxy of proxies) await proxy.stop();
  for (const app of apps) await app.close();
  reportFigures(import.meta.filename, isPostgres() ? 'postgres' : 'sqlite');
  if (isPostgres()) expectNoSecretsInLogs(capturedLogs);
});

async function app(env: Record<string, string>): Promise<FastifyInstance> {
  const built = await testApp({ env });
  apps.push(built);
  return built;
}

/** Keeps `workers` loops of reads and writes going until stopped; returns every reply. */
function load(owner: Actor, listId: string, workers = 4) {
  const replies: Reply[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async (_, w) => {
    for (let n = 0; running; n++) {
      const write = n % 3 === 0;
      const reply = write
        ? await owner.call('POST', '/v1/contacts', { body: { list_id: listId, name: `Load ${w}-${n}` }, check: { allowUnavailable: true } })
        : await owner.call('GET', '/v1/contacts?limit=5', { check: { allowUnavailable: true } });
      replies.push(reply);
      await sleep(10);
    }
  });
  return {
    replies,
    async stop() {
      running = false;
      await Promise.all(loops);
      return replies;
    },
  };
}

async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 15_000): Promise<number> {
  const start = Date.now();
  while (!(await ok())) {
    if (Date.now() - start > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
  return Date.now() - start;
}

function expectOutageReply(reply: Reply): void {
  expect(reply.status).toBe(503);
  expect(json(reply).type).toBe('service_unavailable');
  expect(json(reply).detail).toMatch(/unavailable/i);
  expect(reply.headers['retry-after']).toBeDefined();
}

describe.runIf(isPostgres())('PostgreSQL away', () => {
  it('answers 503 with a detail while nothing listens, and recovers by itself when it is back', async () => {
    const target = new URL(databaseUrl());
    const proxy = new TcpProxy(Number(target.port || 5432), target.hostname);
    proxies.push(proxy);
    const port = await proxy.start();
    const viaProxy = new URL(databaseUrl());
    viaProxy.port = String(port);
    const service = await app({ DATABASE_URL: viaProxy.toString(), RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000' });
    const owner = (await freshOrg(service, 'P')).live;
    const listId = json(await owner.call('POST', '/v1/lists', { body: { name: 'Outage', type: 'contacts' } })).data.id;
    const traffic = load(owner, listId);
    await sleep(300);

    await proxy.stop(); // nothing listens on the store's port now
    await sleep(2500); // past the key cache, so authentication needs the store too
    const health = await owner.call('GET', '/healthz', { check: { allowUnavailable: true } });
    expectOutageReply(health);
    expectOutageReply(await owner.call('GET', `/v1/lists/${listId}`, { check: { allowUnavailable: true } }));
    expectOutageReply(await owner.call('POST', '/v1/contacts', { body: { list_id: listId, name: 'During outage' }, headers: { 'idempotency-key': 'outage-1' }, check: { allowUnavailable: true } }));
    // Writes that arrive together share a transaction: they all fail at once, each with its 503.
    const together = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      owner.call('POST', '/v1/contacts', { body: { list_id: listId, name: `Burst ${i}` }, check: { allowUnavailable: true } })));
    together.forEach(expectOutageReply);

    await proxy.start();
    const recovery = await until('recovered without a restart', async () => (await owner.call('GET', `/v1/lists/${listId}`, { check: { allowUnavailable: true } })).status === 200);
    await sleep(300);
    const replies = await traffic.stop();
    const statuses = new Set(replies.map((r) => r.status));
    expect([...statuses].filter((s) => ![200, 201, 503].includes(s)), 'statuses under the outage').toEqual([]);
    expect(replies.some((r) => r.status === 503), 'load saw the outage').toBe(true);
    expect(replies.slice(-4).every((r) => r.status < 300), 'load recovered').toBe(true);
    expect(recovery).toBeLessThan(15_000);
    // The idempotent write refused during the outage runs when retried.
    const retried = await owner.call('POST', '/v1/contacts', { body: { list_id: listId, name: 'During outage' }, headers: { 'idempotency-key': 'outage-1' } });
    expect(retried.status, retried.body).toBe(201);
    expect((await owner.call('GET', '/healthz')).status).toBe(200);
  }, 60_000);

  it.runIf(process.env.PG_RESTART_TEST === '1')('survives a restart of the PostgreSQL server under load', async () => {
    const service = await app({ RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000' });
    const owner = (await freshOrg(service, 'R')).live;
    const listId = json(await owner.call('POST', '/v1/lists', { body: { name: 'Restart', type: 'contacts' } })).data.id;
    const traffic = load(owner, listId);
    try {
      await sleep(500);
      execSync(process.env.PG_RESTART_COMMAND ?? `pg_ctlcluster ${cluster()} main restart`, { stdio: 'inherit' });
      await until('recovered after the restart', async () => (await owner.call('GET', `/v1/lists/${listId}`, { check: { allowUnavailable: true } })).status === 200, 30_000);
      await sleep(500);
    } finally {
      await traffic.stop();
      // Whatever failed above, the server everything else uses is left running.
      await ensurePostgresRunning();
    }
    const replies = traffic.replies;
    expect(replies.length, 'requests answered around the restart').toBeGreaterThan(20);
    expect([...new Set(replies.map((r) => r.status))].filter((s) => ![200, 201, 503].includes(s))).toEqual([]);
    expect(replies.slice(-4).every((r) => r.status < 300)).toBe(true);
  }, 90_000);
});

const cluster = () => readdirSync('/etc/postgresql')[0];

/** Starts the PostgreSQL server again if it does not answer (a restart that stopped but never started). */
async function ensurePostgresRunning(): Promise<void> {
  const answers = () => {
    try {
      execSync(`pg_isready -q -d ${JSON.stringify(databaseUrl())}`, { stdio: 'ignore', timeout: 5000 });
      return true;
    } catch {
      return false;
    }
  };
  if (answers()) return;
  execSync(process.env.PG_START_COMMAND ?? `pg_ctlcluster ${cluster()} main start`, { stdio: 'inherit' });
  await until('PostgreSQL started again', async () => answers(), 60_000);
}

/** A burst of `count` reads at once across `services`, timed. */
async function burst(services: FastifyInstance[], token: string, count: number): Promise<Timed[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => timed(async () => {
    figures.requests++;
    const res = await services[i % services.length].inject({ method: 'GET', url: '/v1/lists?limit=1', headers: { authorization: `Bearer ${token}` } });
    expect([200, 429].includes(res.statusCode), res.body).toBe(true);
    return { status: res.statusCode };
  })));
}

describe.runIf(isPostgres())('Redis away', () => {
  it('serves every request while Redis is down (and logs it), and shares the limit again once it is back', async () => {
    const target = new URL(redisUrl());
    const proxy = new TcpProxy(Number(target.port || 6379), target.hostname);
    proxies.push(proxy);
    const port = await proxy.start();
    const env = { REDIS_URL: `redis://${target.hostname}:${port}`, RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_PER_MINUTE: '1000' };
    const services = [await app(env), await app(env)];
    const org = await freshOrg(services[0], 'L');
    const token = org.live.token;

    await until('both instances limit through Redis', async () => {
      const replies = await burst(services, token, 12);
      await sleep(1100);
      return replies.filter((r) => r.status === 429).length >= 7;
    });

    await proxy.stop();
    await sleep(300);
    const logged = capturedLogs.length;
    const open = [...await burst(services, token, 20), ...await burst(services, token, 20)];
    expect(open.filter((r) => r.status !== 200).length, 'served while Redis is down').toBe(0);
    expect(capturedLogs.slice(logged).some((line) => line.includes('rate limiter unavailable')), 'the outage is logged').toBe(true);

    await proxy.start();
    await sleep(1100);
    await until('limiting resumed', async () => (await burst(services, token, 12)).some((r) => r.status === 429));
    await sleep(1100);
    const shared: Timed[] = [];
    for (let i = 0; i < 6; i++) {
      shared.push(...await burst(services, token, 4));
      await sleep(150);
    }
    expect(mostAdmittedInAnyWindow(shared, 1000), 'one budget for both instances again').toBeLessThanOrEqual(5);
    expect(shared.some((r) => r.status === 429)).toBe(true);
  }, 60_000);
});
