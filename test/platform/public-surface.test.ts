// The public surface (src/platform/public/) through HTTP, on routes registered the way a group does:
// the per-address and per-link budgets, CORS per route (none by default; an origin list with its
// preflight), the body limit, and provider signatures (Twilio's documented example, Standard
// Webhooks signed by its own library) checked before the handler runs.
import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { standardWebhooksSignature, twilioSignature, verifySignature } from '../../src/platform/public/signatures.ts';
import { publicRoutes } from '../../src/platform/public/surface.ts';
import { databaseUrl, isPostgres, redisUrl } from '../helpers/app.ts';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const OLD_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const AUTH_TOKEN = randomBytes(16).toString('hex');
const SHOP = 'https://shop.example';

let app: FastifyInstance;
beforeAll(async () => {
  // The limits of the run's store: Redis beside PostgreSQL, the in-process limiter beside SQLite.
  const config = loadConfig({
    DATABASE_URL: databaseUrl(), WORKERS: 'off', PUBLIC_RATE_LIMIT_PER_SECOND: '3', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000',
    ...(isPostgres() ? { REDIS_URL: redisUrl() } : {}),
  });
  app = await buildApp({ config, logger: pino({ level: 'silent' }) });
  await app.register(async (fastify) => {
    const routes = publicRoutes(fastify);
    const params = Type.Object({ token: Type.String({ maxLength: 100 }) });
    routes.get('/t/:token', { token: 'token', schema: { params } }, async (req) => ({ token: req.params.token }));
    routes.post('/form/:token', { token: 'token', schema: { params, body: Type.Object({ note: Type.Optional(Type.String()) }) } }, async () => ({ ok: true }));
    routes.post('/ingest/:token', {
      token: 'token', schema: { params, body: Type.Object({ event: Type.String() }) },
      cors: { origins: async (req) => ((req.params as { token: string }).token === 'pk_shop' ? [SHOP] : []), requireOrigin: true, headers: ['x-sdk'] },
    }, async () => ({ accepted: true }));
    routes.post('/callbacks/twilio', {
      signature: { scheme: twilioSignature, secrets: () => [AUTH_TOKEN] },
      schema: { querystring: Type.Object({}, { additionalProperties: true }), body: Type.Record(Type.String(), Type.String()) },
    }, async (req) => ({ from: req.body.From }));
    routes.post('/callbacks/standard', {
      signature: { scheme: standardWebhooksSignature, secrets: () => [SECRET, OLD_SECRET] },
      schema: { body: Type.Object({ type: Type.String() }) },
    }, async (req) => ({ type: req.body.type }));
  });
  await app.ready();
});
afterAll(() => app.close());

// A new client address each call (from a random start: the Redis limiter outlives a run), so no
// test spends another's budget.
let nextAddress = Math.floor(Math.random() * 2 ** 23);
const address = () => {
  const n = nextAddress++;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};
const fresh = () => randomBytes(12).toString('base64url');

describe('budgets', () => {
  it('limit each client address, and each link whoever calls, with the spec\'s headers', async () => {
    const from = address();
    const token = fresh();
    const get = (ip: string, t = token) => app.inject({ method: 'GET', url: `/t/${t}`, remoteAddress: ip });
    const first = await get(from);
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-ratelimit-limit-second']).toBe('3');
    expect(first.headers['x-ratelimit-limit-minute']).toBe('1000');
    expect(Number(first.headers['x-ratelimit-remaining'])).toBeLessThan(1000);
    await get(from);
    await get(from);
    const over = await get(from);
    expect(over.statusCode).toBe(429);
    expect(over.json()).toEqual({ type: 'rate_limited', detail: expect.stringMatching(/^Rate limit exceeded: at most 3 requests per second and 1000 per minute per client address; retry after \d+ s$/) });
    expect(over.headers['retry-after']).toBeDefined();

    // The link: four addresses' worth (12 a second), whoever calls; its refusal names the link.
    const link = fresh();
    for (let i = 0; i < 12; i++) expect((await get(`203.0.113.${i + 1}`, link)).statusCode).toBe(200);
    const hammered = await get(address(), link);
    expect(hammered.statusCode).toBe(429);
    expect(hammered.json().detail).toMatch(/^Rate limit exceeded: at most 12 requests per second and 4000 per minute per link; retry after \d+ s$/);
    expect((await get(address(), fresh())).statusCode).toBe(200);
  });
});

describe('CORS', () => {
  const ingest = (headers: Record<string, string>, token = 'pk_shop') =>
    app.inject({ method: 'POST', url: `/ingest/${token}`, payload: { event: 'page_view' }, headers, remoteAddress: address() });

  it('is off unless a route names origins: no header, no preflight', async () => {
    const res = await app.inject({ method: 'GET', url: `/t/${fresh()}`, headers: { origin: SHOP }, remoteAddress: address() });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect((await app.inject({ method: 'OPTIONS', url: `/t/${fresh()}`, headers: { origin: SHOP, 'access-control-request-method': 'GET' } })).statusCode).toBe(404);
  });

  it('lets the origins of the record call, and refuses others and requests without Origin', async () => {
    const ok = await ingest({ origin: SHOP });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(SHOP);
    expect(ok.headers.vary).toMatch(/Origin/);
    expect((await ingest({ origin: 'https://evil.example' })).json()).toEqual({ type: 'permission_denied', detail: 'Origin https://evil.example is not allowed to call this route' });
    expect((await ingest({ origin: SHOP }, 'pk_other')).statusCode).toBe(403);
    const bare = await ingest({});
    expect(bare.statusCode).toBe(403);
    expect(bare.json().detail).toBe('This route is called from a browser: the Origin header is required');

    const preflight = (origin: string) => app.inject({ method: 'OPTIONS', url: '/ingest/pk_shop', headers: { origin, 'access-control-request-method': 'POST' }, remoteAddress: address() });
    const allowed = await preflight(SHOP);
    expect(allowed.statusCode).toBe(204);
    expect(allowed.headers).toMatchObject({ 'access-control-allow-origin': SHOP, 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'content-type, x-sdk' });
    expect((await preflight('https://evil.example')).statusCode).toBe(403);
  });
});

it('refuses a body over 64 KiB with 413 naming the limit', async () => {
  const res = await app.inject({ method: 'POST', url: `/form/${fresh()}`, payload: { note: 'x'.repeat(70_000) }, remoteAddress: address() });
  expect(res.statusCode).toBe(413);
  expect(res.json()).toEqual({ type: 'payload_too_large', detail: 'Request body exceeds the 64 KiB limit' });
  expect((await app.inject({ method: 'POST', url: `/form/${fresh()}`, payload: { note: 'x'.repeat(60_000) }, remoteAddress: address() })).statusCode).toBe(200);
});

describe('provider signatures', () => {
  it('verify Twilio\'s documented example, and nothing else', () => {
    const form = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };
    const request = { url: 'https://mycompany.com/myapp.php?foo=1&bar=2', headers: { 'x-twilio-signature': '0/KCTR6DLpKmkAf8muzZqo1nDgQ=' }, rawBody: Buffer.alloc(0), form };
    expect(verifySignature(twilioSignature, ['12345'], request, 0)).toEqual({ ok: true });
    expect(verifySignature(twilioSignature, ['54321'], request, 0)).toEqual({ ok: false, reason: 'The signature does not match' });
    expect(verifySignature(twilioSignature, ['12345'], { ...request, form: { ...form, Digits: '1235' } }, 0).ok).toBe(false);
  });

  it('run a Twilio callback only when its signature matches the URL and form it was sent with', async () => {
    const form = { From: '+14158675310', Body: 'STOP', MessageSid: 'SM123' };
    const url = '/callbacks/twilio?account=acme';
    const signed = `http://callbacks.example.com${url}` + Object.keys(form).sort().map((k) => k + form[k as keyof typeof form]).join('');
    const signature = createHmac('sha1', AUTH_TOKEN).update(signed).digest('base64');
    const send = (body: Record<string, string>, headers: Record<string, string> = { 'x-twilio-signature': signature }) => app.inject({
      method: 'POST', url, payload: new URLSearchParams(body).toString(), remoteAddress: address(),
      headers: { host: 'callbacks.example.com', 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
    const ok = await send(form);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toEqual({ from: '+14158675310' });
    expect((await send({ ...form, Body: 'START' })).json()).toEqual({ type: 'authentication_failed', detail: 'The signature does not match' });
    expect((await send(form, {})).json()).toEqual({ type: 'authentication_failed', detail: 'The request carries no signature' });
  });

  it('run a Standard Webhooks callback signed with the current or previous secret, recently, over the exact body', async () => {
    const body = JSON.stringify({ type: 'message.delivered' });
    const send = (secret: string, at: Date, payload = body) => {
      const id = `msg_${fresh()}`;
      const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, body), 'content-type': 'application/json' };
      return app.inject({ method: 'POST', url: '/callbacks/standard', payload, headers, remoteAddress: address() });
    };
    expect((await send(SECRET, new Date())).json()).toEqual({ type: 'message.delivered' });
    expect((await send(OLD_SECRET, new Date())).statusCode).toBe(200);
    const stranger = await send(`whsec_${randomBytes(32).toString('base64')}`, new Date());
    expect(stranger.statusCode).toBe(401);
    expect(stranger.json().detail).toBe('The signature does not match');
    expect((await send(SECRET, new Date(Date.now() - 10 * 60_000))).json().detail).toBe('The signature is too old or too new');
    expect((await send(SECRET, new Date(), JSON.stringify({ type: 'message.failed' }))).statusCode).toBe(401);
  });
});
