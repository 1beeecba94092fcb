// The SSRF guard of the outbound client, with private networks not allowed (the default): refused
// at endpoint creation, refused again at delivery (a host that resolves to a private address later),
// never following a redirect; real local receivers show that nothing reached them. The app runs no
// workers (on PostgreSQL the other apps of the suite, which allow private networks, share the
// queue), so the delivery is made by the delivery job's handler itself, with the guard on.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.ts';
import type { SettleBatch, SettleWrite } from '../../src/platform/jobs/kinds.ts';
import { OutboundClient, OutboundError } from '../../src/platform/outbound.ts';
import { webhookDelivery } from '../../src/resources/webhooks/webhooks.jobs.ts';
import { tenant, testApp } from '../helpers/app.ts';
import { receiver } from '../helpers/receiver.ts';

let app: FastifyInstance;
const guarded = new OutboundClient({ allowPrivate: false });
const open = new OutboundClient({ allowPrivate: true });
beforeAll(async () => {
  app = await testApp({ env: { OUTBOUND_ALLOW_PRIVATE: 'false', WORKERS: 'off', WEBHOOK_RETRY_SCHEDULE: '60' } });
});
afterAll(async () => {
  await Promise.all([guarded.close(), open.close(), app.close()]);
});

describe('the SSRF guard', () => {
  it('refuses endpoints on loopback, private, link-local and metadata addresses, and names resolving to them', async () => {
    const t = await tenant(app);
    const r = await receiver();
    const refused = [
      `http://127.0.0.1:${r.port}/hook`, 'http://169.254.169.254/latest/meta-data/', `http://[::1]:${r.port}/hook`,
      `http://localhost:${r.port}/hook`, 'http://10.0.0.7/hook', 'http://192.168.1.1/', 'http://172.16.0.1/', 'http://100.64.0.1/',
      'http://0.0.0.0/', 'http://[::ffff:127.0.0.1]/', 'http://[fe80::1]/', 'http://[fd00::1]/', 'http://2130706433/', 'http://0x7f.1/',
    ];
    for (const url of refused) {
      const res = await t.live.post('/v1/webhooks', { url, event_types: ['*'] });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().detail, url).toMatch(/^url: .*private or reserved address/);
    }
    expect((await t.live.get('/v1/webhooks')).json().data).toEqual([]);
    for (const url of ['https://example.com/hook', 'http://1.1.1.1/hook']) {
      expect((await t.live.post('/v1/webhooks', { url, event_types: ['campaign.paused'] })).statusCode, url).toBe(201);
    }
    expect(r.received).toEqual([]);
  });

  it('refuses again at delivery, so a host that later resolves to a private address gets nothing', async () => {
    const t = await tenant(app);
    const r = await receiver();
    await t.live.post('/v1/lists', { name: 'Not for localhost', type: 'contacts' });
    const event = (await t.live.get('/v1/events?type=list.created')).json().data[0];
    // An endpoint whose name resolved to a public address when it was created.
    const id = newId('whe');
    const now = Math.floor(Date.now() / 1000);
    await app.services.database.db.insertInto('webhook_endpoints').values({
      org_id: t.org_id, mode: 'live', id, url: `http://localhost:${r.port}/hook`, description: null, event_types: '[]', all_events: 1, is_active: 1,
      secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, previous_secret: null, previous_secret_until: null, disabled_reason: null, failing_since: null, created_at: now, updated_at: now,
    }).execute();
    const { database, config, outbound } = app.services;
    const job = { id: `dlv_${event.id.slice(4)}${id.slice(4)}`, orgId: t.org_id, mode: 'live', attempt: 1, ranBefore: false };
    // The attempt is recorded with the job's outcome (the runner commits what the handler settles).
    const settled: Array<(db: typeof database.db) => Promise<unknown>> = [];
    const run = webhookDelivery.run({ endpoint_id: id, event_id: event.id }, { database, config, outbound, log: app.log, job, loaded: undefined, signal: new AbortController().signal, settle: (w: SettleWrite | SettleBatch<unknown>, value?: unknown) => void settled.push(typeof w === 'function' ? w : (db) => w.write(db, [value])) });
    await expect(run).rejects.toThrow('localhost resolves to a private or reserved address');
    for (const write of settled) await write(database.db);
    const [delivery] = (await t.live.get(`/v1/webhooks/${id}/deliveries`)).json().data;
    expect(delivery).toMatchObject({ id: job.id, event_id: event.id, status: 'pending', attempt_count: 1 });
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: 'localhost resolves to a private or reserved address' });
    expect(r.received).toEqual([]);
  });

  it('refuses private targets in the client itself, and never follows a redirect', async () => {
    const target = await receiver();
    for (const url of [`http://127.0.0.1:${target.port}/`, `http://localhost:${target.port}/`, `http://[::1]:${target.port}/`, 'http://169.254.169.254/']) {
      const error = await guarded.post(url, '{}', {}, { timeoutMs: 2000 }).catch((e: unknown) => e);
      expect(error, url).toBeInstanceOf(OutboundError);
      expect((error as Error).message, url).toMatch(/private or reserved address/);
    }
    expect(target.received).toEqual([]);

    const redirecting = await receiver(() => ({ status: 302, headers: { location: target.url } }));
    const res = await open.post(redirecting.url, '{"a":1}', {}, { timeoutMs: 2000 });
    expect(res.status).toBe(302);
    expect(redirecting.received).toHaveLength(1);
    expect(target.received).toEqual([]);
  });

  it('keeps the first KiB of an answer and stops at the time limit', async () => {
    const big = await receiver(() => ({ status: 200, body: 'x'.repeat(100_000) }));
    const res = await open.post(big.url, '{}', {}, { timeoutMs: 2000 });
    expect(res.body).toHaveLength(1024);
    const slow = await receiver(() => ({ status: 200, delayMs: 5000 }));
    const started = Date.now();
    const error = await open.post(slow.url, '{}', {}, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect((error as Error).message).toBe('No answer within 300 ms');
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
