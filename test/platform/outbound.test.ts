// The SSRF guard of the outbound client, with private networks not allowed (the default): refused
// at endpoint creation (trailing-dot names, `*.localhost`, IPv6 forms that embed a private IPv4
// address too), refused again at delivery (a host that resolves to a private address later: DNS
// rebinding, with a stand-in resolver), never following a redirect; real local receivers show that
// nothing reached them. Link-local and metadata addresses stay refused when private networks are
// allowed, unless OUTBOUND_ALLOW_LINK_LOCAL_UNSAFE says otherwise. The app runs no workers (on
// PostgreSQL the other apps of the suite, which allow private networks, share the queue), so the
// delivery is made by the delivery job's handler itself, with the guard on.
import type { FastifyInstance } from 'fastify';
import { runWrite } from '../../src/platform/write.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.ts';
import type { SettleBatch, SettleWrite } from '../../src/platform/jobs/kinds.ts';
import { OutboundClient, OutboundError } from '../../src/platform/outbound.ts';
import { webhookDelivery } from '../../src/resources/webhooks/webhooks.jobs.ts';
import { loadConfig } from '../../src/config.ts';
import { tenant, testApp } from '../helpers/app.ts';
import { receiver } from '../helpers/receiver.ts';
import { QUIET } from '../helpers/webhooks.ts';

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
    const t = await tenant(app, { sandbox: false });
    const r = await receiver();
    const refused = [
      `http://127.0.0.1:${r.port}/hook`, `http://[::1]:${r.port}/hook`,
      `http://localhost:${r.port}/hook`, 'http://10.0.0.7/hook', 'http://192.168.1.1/', 'http://172.16.0.1/', 'http://100.64.0.1/',
      'http://0.0.0.0/', 'http://[::ffff:127.0.0.1]/', 'http://[fd00::1]/', 'http://2130706433/', 'http://0x7f.1/',
      // A trailing dot, a subdomain of localhost, and IPv6 forms that carry 127.0.0.1 or 10.0.0.1.
      `http://localhost.:${r.port}/hook`, 'http://LOCALHOST./', 'http://api.localhost/', 'http://[::127.0.0.1]/', 'http://[2002:7f00:1::]/',
      'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'http://[64:ff9b::a00:1]/', 'http://[::ffff:0:a00:1]/',
    ];
    const metadata = [
      'http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/', 'http://100.100.100.200/', 'http://[fd00:ec2::254]/',
      'http://metadata.google.internal/computeMetadata/v1/', 'http://metadata.google.internal./', 'http://[::ffff:169.254.169.254]/', 'http://[2002:a9fe:a9fe::]/',
    ];
    for (const [urls, kind] of [[refused, 'private or reserved'], [metadata, 'link-local or metadata']] as const) {
      for (const url of urls) {
        const res = await t.live.post('/v1/webhooks', { url, event_types: ['*'] });
        expect(res.statusCode, url).toBe(400);
        expect(res.json(), url).toEqual({ type: 'bad_request', detail: expect.stringMatching(new RegExp(`^url: .*${kind} address$`)), param: 'url' });
      }
    }
    expect((await t.live.get('/v1/webhooks')).json().data).toEqual([]);
    let id = '';
    for (const url of ['https://example.com/hook', 'http://1.1.1.1/hook', 'http://[2002:101:101::]/hook']) {
      const res = await t.live.post('/v1/webhooks', { url, event_types: ['campaign.paused'] });
      expect(res.statusCode, url).toBe(201);
      id = res.json().data.id;
    }
    // A URL changed later passes the same guard.
    for (const url of ['http://localhost./', 'http://[2002:7f00:1::]/', 'http://[::127.0.0.1]/']) {
      const res = await t.live.patch(`/v1/webhooks/${id}`, { url });
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toEqual({ type: 'bad_request', detail: expect.stringMatching(/^url: .*private or reserved address$/), param: 'url' });
    }
    expect(r.received).toEqual([]);
  });

  it('refuses again at delivery, so a host that later resolves to a private address gets nothing', async () => {
    const t = await tenant(app, { sandbox: false });
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
    const run = webhookDelivery.run({ endpoint_id: id, event_id: event.id }, { database, config, outbound, log: app.log, job, loaded: undefined, signal: new AbortController().signal, write: (scope, work) => runWrite(database, scope, work), settle: (w: SettleWrite | SettleBatch<unknown>, value?: unknown) => void settled.push(typeof w === 'function' ? w : (db) => w.write(db, [value])) });
    await expect(run).rejects.toThrow('localhost resolves to a private or reserved address');
    for (const write of settled) await write(database.db);
    const [delivery] = (await t.live.get(`/v1/webhooks/${id}/deliveries`)).json().data;
    expect(delivery).toMatchObject({ id: job.id, event_id: event.id, status: 'pending', attempt_count: 1 });
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: 'localhost resolves to a private or reserved address' });
    expect(r.received).toEqual([]);
  });

  it('refuses at delivery a name that resolved to a public address when it was checked (DNS rebinding)', async () => {
    const t = await tenant(app, { sandbox: false });
    const r = await receiver();
    // The first answer (the check) is public, every later one (the connection) is the local receiver.
    const asked: string[] = [];
    const rebinding = new OutboundClient({
      allowPrivate: false,
      lookup: (hostname, _options, callback) => {
        asked.push(hostname);
        callback(null, [{ address: asked.length === 1 ? '93.184.215.14' : '127.0.0.1', family: 4 }]);
      },
    });
    const url = `http://rebind.example:${r.port}/hook`;
    await rebinding.check(url);
    await t.live.post('/v1/lists', { name: 'Rebound', type: 'contacts' });
    const event = (await t.live.get('/v1/events?type=list.created')).json().data[0];
    const id = newId('whe');
    const now = Math.floor(Date.now() / 1000);
    await app.services.database.db.insertInto('webhook_endpoints').values({
      org_id: t.org_id, mode: 'live', id, url, description: null, event_types: '[]', all_events: 1, is_active: 1,
      secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, previous_secret: null, previous_secret_until: null, disabled_reason: null, failing_since: null, created_at: now, updated_at: now,
    }).execute();
    const { database, config } = app.services;
    const job = { id: `dlv_${event.id.slice(4)}${id.slice(4)}`, orgId: t.org_id, mode: 'live', attempt: 1, ranBefore: false };
    const settled: Array<(db: typeof database.db) => Promise<unknown>> = [];
    const run = webhookDelivery.run({ endpoint_id: id, event_id: event.id }, { database, config, outbound: rebinding, log: app.log, job, loaded: undefined, signal: new AbortController().signal, write: (scope, work) => runWrite(database, scope, work), settle: (w: SettleWrite | SettleBatch<unknown>, value?: unknown) => void settled.push(typeof w === 'function' ? w : (db) => w.write(db, [value])) });
    await expect(run).rejects.toThrow('rebind.example resolves to a private or reserved address');
    for (const write of settled) await write(database.db);
    const [delivery] = (await t.live.get(`/v1/webhooks/${id}/deliveries`)).json().data;
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: 'rebind.example resolves to a private or reserved address' });
    expect(asked.length, 'the connection asked the resolver again').toBeGreaterThanOrEqual(2);
    expect(r.received).toEqual([]);
    await rebinding.close();
  });

  it('judges a name with a trailing dot as the name without it, at creation and at connection', async () => {
    const r = await receiver();
    // As the system resolver does: `vm` is in the hosts file, `vm.` is not found.
    const hosts = new OutboundClient({
      allowPrivate: false,
      lookup: (hostname, _options, callback) => hostname === 'vm' ? callback(null, [{ address: '127.0.0.1', family: 4 }])
        : callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []),
    });
    for (const url of [`http://vm.:${r.port}/`, `http://vm:${r.port}/`]) {
      await expect(hosts.check(url), url).rejects.toThrow('URL host vm resolves to a private or reserved address');
      await expect(hosts.post(url, '{}', {}, { timeoutMs: 2000 }), url).rejects.toThrow('vm resolves to a private or reserved address');
    }
    expect(r.received).toEqual([]);
    await hosts.close();
  });

  it('refuses private targets in the client itself, and never follows a redirect', async () => {
    const target = await receiver();
    for (const url of [`http://127.0.0.1:${target.port}/`, `http://localhost:${target.port}/`, `http://localhost.:${target.port}/`, `http://[::1]:${target.port}/`, `http://[::127.0.0.1]:${target.port}/`, 'http://169.254.169.254/']) {
      const error = await guarded.post(url, '{}', {}, { timeoutMs: 2000 }).catch((e: unknown) => e);
      expect(error, url).toBeInstanceOf(OutboundError);
      expect((error as Error).message, url).toMatch(/(private or reserved|link-local or metadata) address$/);
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

describe('link-local and metadata addresses, with private networks allowed', () => {
  const metadataName = (hostname: string, _options: unknown, callback: (e: null, a: Array<{ address: string; family: number }>) => void) =>
    callback(null, [{ address: hostname === 'imds.example' ? '169.254.169.254' : '127.0.0.1', family: 4 }]);

  it('stay refused unless OUTBOUND_ALLOW_LINK_LOCAL_UNSAFE allows them, while loopback is reached', async () => {
    const local = await receiver();
    const privateOnly = new OutboundClient({ allowPrivate: true, lookup: metadataName });
    const unsafe = new OutboundClient({ allowPrivate: true, allowLinkLocal: true, lookup: metadataName });
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/', 'http://100.100.100.200/', 'http://[fd00:ec2::254]/', 'http://[::ffff:169.254.169.254]/', 'http://metadata.google.internal/', 'http://imds.example/']) {
      await expect(privateOnly.check(url), url).rejects.toThrow(/link-local or metadata address$/);
      await expect(privateOnly.post(url, '{}', {}, { timeoutMs: 2000 }), url).rejects.toThrow(/link-local or metadata address$/);
      await expect(unsafe.check(url), url).resolves.toBeUndefined();
    }
    await privateOnly.check(local.url);
    expect((await privateOnly.post(local.url, '{}', {}, { timeoutMs: 2000 })).status).toBe(200);
    expect(local.received).toHaveLength(1);
    await Promise.all([privateOnly.close(), unsafe.close()]);
  });

  it('are refused to webhooks and URL imports of an app that allows private networks', async () => {
    const permissive = await testApp({ env: { OUTBOUND_ALLOW_PRIVATE: 'true', WORKERS: 'off' } });
    try {
      const t = await tenant(permissive, { sandbox: false });
      const listId = (await t.live.post('/v1/lists', { name: 'Imports', type: 'contacts' })).json().data.id;
      for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://metadata.google.internal/', 'http://[fe80::a9fe:a9fe]/']) {
        const hook = await t.live.post('/v1/webhooks', { url, event_types: ['*'] });
        expect(hook.statusCode, url).toBe(400);
        expect(hook.json(), url).toEqual({ type: 'bad_request', detail: expect.stringMatching(/^url: .*link-local or metadata address$/), param: 'url' });
        const imported = await t.live.post('/v1/imports', { url, object: 'contacts', list_id: listId });
        expect(imported.statusCode, url).toBe(400);
        expect(imported.json(), url).toEqual({ type: 'bad_request', detail: expect.stringMatching(/^url: .*link-local or metadata address$/), param: 'url' });
      }
      const local = await receiver();
      expect((await t.live.post('/v1/webhooks', { url: local.url, event_types: QUIET })).statusCode).toBe(201);
      const unsafe = loadConfig({ DATABASE_URL: 'sqlite::memory:', OUTBOUND_ALLOW_LINK_LOCAL_UNSAFE: 'true' });
      expect(unsafe.outboundAllowLinkLocalUnsafe).toBe(true);
      expect(() => loadConfig({ OUTBOUND_ALLOW_LINK_LOCAL_UNSAFE: 'yes' })).toThrow('OUTBOUND_ALLOW_LINK_LOCAL_UNSAFE must be true or false, got "yes"');
    } finally {
      await permissive.close();
    }
  });
});
