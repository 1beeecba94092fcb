// Webhook deliveries across real service processes. A service killed with SIGKILL while deliveries
// are pending and in flight delivers every event after its restart (duplicates allowed, each with
// the event's own webhook-id). On PostgreSQL, two API-only processes and two worker-only processes
// on one store deliver every event, and no delivery ever runs in two workers at once.
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { databaseUrl, isPostgres } from '../helpers/app.ts';
import { receiver, type Received } from '../helpers/receiver.ts';
import { json } from './support/reply.ts';
import { afterProcessTests, request, startServer, startWorker } from './support/server-process.ts';
import { freshStore, orgIn, type FreshStore } from './support/stores.ts';

const stores: FreshStore[] = [];
afterProcessTests(import.meta.filename, stores);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const BASE_ENV = { JOB_LEASE_SECONDS: '3' };

/** Every event id of the tenant after the first event of `fromType`, oldest first. */
async function eventIds(base: string, token: string, fromType: string): Promise<string[]> {
  const out: Array<{ id: string; type: string }> = [];
  let cursor: string | null = null;
  do {
    const reply = await request(base, 'GET', `/v1/events?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { token });
    out.push(...json(reply).data);
    cursor = json(reply).next_cursor;
  } while (cursor);
  out.reverse();
  return out.slice(out.findIndex((e) => e.type === fromType)).map((e) => e.id);
}

function expectAllDelivered(received: Received[], ids: string[], secret: string): void {
  const byId = new Map<string, Received[]>();
  for (const r of received) byId.set(String(r.headers['webhook-id']), [...(byId.get(String(r.headers['webhook-id'])) ?? []), r]);
  const missing = ids.filter((id) => !byId.has(id));
  expect(missing, `${missing.length} of ${ids.length} events never delivered`).toEqual([]);
  for (const [id, copies] of byId) {
    for (const copy of copies) expect((new Webhook(secret).verify(copy.body, copy.headers as Record<string, string>) as { id: string }).id).toBe(id);
  }
}

describe('a service killed with SIGKILL', () => {
  it('delivers every event after its restart, pending and in-flight deliveries alike', async () => {
    const store = await freshStore('webhook-kill');
    stores.push(store);
    const env = { ...BASE_ENV, DATABASE_URL: store.url, WORKER_CONCURRENCY: '2' };
    let server = await startServer(env);
    const org = await orgIn(store.url);
    const token = org.live_token;
    const r = await receiver(() => ({ status: 200, delayMs: 400 }));
    const created = await request(server.base, 'POST', '/v1/webhooks', { token, body: { url: r.url, event_types: ['*'] } });
    expect(created.status).toBe(201);
    const secret = json(created).data.secret as string;
    for (let i = 0; i < 30; i++) {
      const reply = await request(server.base, 'POST', '/v1/lists', { token, body: { name: `Before the crash ${i}`, type: 'contacts' } });
      expect(reply.status).toBe(201);
    }
    await r.until((got) => got.length >= 3);
    await server.stop('SIGKILL'); // two deliveries in flight, most still queued
    const beforeRestart = r.received.length;
    expect(beforeRestart).toBeLessThan(31);

    server = await startServer(env, { port: server.port });
    const ids = await eventIds(server.base, token, 'webhook_endpoint.created');
    expect(ids).toHaveLength(31);
    await r.until((got) => ids.every((id) => got.some((x) => x.headers['webhook-id'] === id)), 45_000);
    expectAllDelivered(r.received, ids, secret);
    await server.stop();
  }, 90_000);
});

describe.runIf(isPostgres())('two API processes and two worker processes on one PostgreSQL', () => {
  it('deliver each event, never running one delivery in two workers at once', async () => {
    const env = { ...BASE_ENV, DATABASE_URL: databaseUrl() };
    const apis = await Promise.all([startServer({ ...env, WORKERS: 'off' }), startServer({ ...env, WORKERS: 'off' })]);
    const workers = await Promise.all([startWorker({ ...env, WORKER_CONCURRENCY: '4' }), startWorker({ ...env, WORKER_CONCURRENCY: '4' })]);
    const org = await orgIn(databaseUrl());
    const token = org.live_token;
    const inFlight = new Set<string>();
    let overlaps = 0;
    const r = await receiver((_n, got) => {
      const id = String(got.headers['webhook-id']);
      if (inFlight.has(id)) overlaps++;
      inFlight.add(id);
      setTimeout(() => inFlight.delete(id), 30).unref();
      return { status: 200, delayMs: 30 };
    });
    const created = await request(apis[0].base, 'POST', '/v1/webhooks', { token, body: { url: r.url, event_types: ['*'] } });
    const secret = json(created).data.secret as string;
    await Promise.all(apis.map(async (api, a) => {
      for (let i = 0; i < 40; i++) {
        const reply = await request(api.base, 'POST', '/v1/companies', { token, body: { name: `Company ${a}-${i}` } });
        expect(reply.status).toBe(201);
      }
    }));
    const ids = await eventIds(apis[1].base, token, 'webhook_endpoint.created');
    expect(ids).toHaveLength(81);
    await r.until((got) => ids.every((id) => got.some((x) => x.headers['webhook-id'] === id)), 30_000);
    await sleep(500);
    expectAllDelivered(r.received, ids, secret);
    expect(overlaps).toBe(0);
    expect(r.received).toHaveLength(ids.length); // no process crashed, so each was sent once
    const health = json(await request(apis[0].base, 'GET', '/healthz'));
    expect(health.jobs.workers).toBe('off');
    await Promise.all([...apis, ...workers].map((p) => p.stop()));
  }, 90_000);
});
