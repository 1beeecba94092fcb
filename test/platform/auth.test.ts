// Authentication (spec section 5) and key management at /auth/v1, through HTTP.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogs, client, tenant, testApp } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp();
});
afterAll(() => app.close());

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const jwt = [b64url({ alg: 'HS256', typ: 'JWT' }), b64url({ sub: 'user_123', iat: 1767225600, exp: 1767229200 }), 'c2lnbmF0dXJlLWJ5dGVzLWhlcmU'].join('.');
const secretOf = (token: string) => token.replace(/^svc_(live|test)_/, '');

/** Polls `check` until it holds: for effects written after the response. */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('authentication', () => {
  it('refuses a request without an Authorization header', async () => {
    const res = await client(app, undefined).get('/v1/lists');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ type: 'authentication_failed', detail: 'missing Authorization header' });
  });

  it('refuses other schemes, unknown and malformed tokens', async () => {
    const t = await tenant(app);
    const cases = [
      `Basic ${Buffer.from('user:pass').toString('base64')}`,
      `Token ${t.live_token}`,
      t.live_token,
      'Bearer',
      'Bearer ',
      'Bearer svc_live_thisKeyDoesNotExist0000000000000000000000',
      'Bearer svc_live_',
      `Bearer ${t.live_token}x`,
      `Bearer ${'a'.repeat(600)}`,
      'Bearer two words',
    ];
    for (const authorization of cases) {
      const res = await app.inject({ method: 'GET', url: '/v1/lists', headers: { authorization } });
      expect(res.statusCode, authorization).toBe(401);
      expect(res.json(), authorization).toEqual({ type: 'authentication_failed', detail: 'API key not associated with an organization' });
    }
  });

  it('recognizes a JWT and refuses it', async () => {
    const res = await client(app, jwt).get('/v1/lists');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ type: 'authentication_failed', detail: 'JWT token provided instead of API key' });
  });

  it('accepts the scheme name in any case', async () => {
    const t = await tenant(app);
    const res = await app.inject({ method: 'GET', url: '/v1/lists', headers: { authorization: `bearer ${t.live_token}` } });
    expect(res.statusCode).toBe(200);
  });

  it('refuses a key once it is revoked', async () => {
    const t = await tenant(app);
    const created = await t.live.post('/auth/v1/api-keys', { name: 'short-lived' });
    const { api_key_id, api_key_token } = created.json().data;
    const key = client(app, api_key_token);
    expect((await key.get('/v1/lists')).statusCode).toBe(200);

    const revoked = await t.live.delete(`/auth/v1/api-keys/${api_key_id}`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toEqual({ data: { api_key_id, revoked: true } });

    const res = await key.get('/v1/lists');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ type: 'authentication_failed', detail: 'API key not associated with an organization' });
    const listed = (await t.live.get('/auth/v1/api-keys')).json().data.keys.map((k: { api_key_id: string }) => k.api_key_id);
    expect(listed).not.toContain(api_key_id);
    expect((await t.live.delete(`/auth/v1/api-keys/${api_key_id}`)).statusCode).toBe(404);
  });

  it('takes the mode from the key, never from the token prefix', async () => {
    const t = await tenant(app);
    const liveList = (await t.live.post('/v1/lists', { name: 'live list', type: 'contacts' })).json().data.id;
    const testList = (await t.test.post('/v1/lists', { name: 'test list', type: 'contacts' })).json().data.id;
    const ids = async (token: string) => (await client(app, token).get('/v1/lists?limit=200')).json().data.map((l: { id: string }) => l.id);

    const testAsLive = `svc_live_${secretOf(t.test_token)}`;
    expect(await ids(testAsLive)).toContain(testList);
    expect(await ids(testAsLive)).not.toContain(liveList);
    // A write through the swapped token lands in test mode.
    const written = (await client(app, testAsLive).post('/v1/lists', { name: 'via swapped prefix', type: 'leads' })).json().data.id;
    expect(await ids(t.test_token)).toContain(written);
    expect(await ids(t.live_token)).not.toContain(written);

    const liveAsTest = `svc_test_${secretOf(t.live_token)}`;
    expect(await ids(liveAsTest)).toContain(liveList);
    expect(await ids(liveAsTest)).not.toContain(testList);

    // A token without any prefix is looked up the same way; this one was issued live.
    const bare = secretOf(t.live_token);
    expect(await ids(bare)).toContain(liveList);
    expect(await ids(bare)).not.toContain(testList);
  });

  it('accepts X-Org-Id naming the key\'s own organization and refuses any other', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    expect((await t.live.get('/v1/lists', { 'x-org-id': t.org_id })).statusCode).toBe(200);
    const res = await t.live.get('/v1/lists', { 'x-org-id': other.org_id });
    expect(res.statusCode).toBe(403);
    expect(typeof res.json().detail).toBe('string');
    expect((await t.test.post('/v1/lists', { name: 'x', type: 'contacts' }, { 'x-org-id': other.org_id })).statusCode).toBe(403);
  });

  it('stamps last_used_at after a key is used, off the request path', async () => {
    const t = await tenant(app);
    const { api_key_id, api_key_token } = (await t.live.post('/auth/v1/api-keys', { name: 'fresh' })).json().data;
    const record = async () => (await t.live.get('/auth/v1/api-keys')).json().data.keys.find((k: { api_key_id: string }) => k.api_key_id === api_key_id);
    expect((await record()).last_used_at).toBeNull();

    const before = Math.floor(Date.now() / 1000);
    expect((await client(app, api_key_token).get('/v1/lists')).statusCode).toBe(200);
    const used = await eventually(record, (k) => k.last_used_at !== null);
    expect(used.last_used_at).toBeGreaterThanOrEqual(before);
    expect(used.last_used_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('never writes a token to the logs', async () => {
    const t = await tenant(app);
    await t.live.get('/v1/lists');
    await client(app, `${t.live_token}x`).get('/v1/lists');
    const logs = capturedLogs.join('');
    expect(logs).toContain('"status":401');
    expect(logs).not.toContain(secretOf(t.live_token));
  });
});

describe('API keys', () => {
  it('creates a live key by default and shows its token once', async () => {
    const t = await tenant(app);
    const res = await t.live.post('/auth/v1/api-keys', { name: 'CI pipeline' });
    expect(res.statusCode).toBe(201);
    const created = res.json().data;
    expect(Object.keys(created).sort()).toEqual(['api_key_id', 'api_key_token', 'created_at', 'expires_at', 'is_agency', 'last_used_at', 'mode', 'name', 'scopes']);
    expect(created).toMatchObject({ name: 'CI pipeline', mode: 'live', is_agency: false, scopes: ['*'], expires_at: null, last_used_at: null });
    expect(created.api_key_id).toMatch(/^key_/);
    expect(created.api_key_token).toMatch(/^svc_live_[A-Za-z0-9_-]{40,}$/);
    expect((await client(app, created.api_key_token).get('/v1/lists')).statusCode).toBe(200);

    const test = (await t.live.post('/auth/v1/api-keys', { name: 'sandbox', mode: 'test' })).json().data;
    expect(test.mode).toBe('test');
    expect(test.api_key_token).toMatch(/^svc_test_/);
  });

  it('lists key records without any token or hash', async () => {
    const t = await tenant(app);
    const extra = (await t.live.post('/auth/v1/api-keys', { name: 'listed' })).json().data;
    const res = await t.live.get('/auth/v1/api-keys');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['data']);
    expect(Object.keys(body.data).sort()).toEqual(['keys', 'total']);
    expect(body.data.total).toBe(3);
    expect(body.data.keys).toHaveLength(3);
    for (const key of body.data.keys) {
      expect(Object.keys(key).sort()).toEqual(['api_key_id', 'created_at', 'expires_at', 'is_agency', 'last_used_at', 'mode', 'name', 'scopes']);
      expect(key.scopes).toEqual(['*']);
      expect(key.expires_at).toBeNull();
      expect(key.is_agency).toBe(false);
      expect(Number.isInteger(key.created_at)).toBe(true);
    }
    expect(body.data.keys.map((k: { mode: string }) => k.mode).sort()).toEqual(['live', 'live', 'test']);
    const text = res.body;
    for (const token of [t.live_token, t.test_token, extra.api_key_token]) {
      const secret = secretOf(token);
      expect(text).not.toContain(secret);
      expect(text).not.toContain(createHash('sha256').update(secret).digest('hex'));
    }
    expect(text).not.toMatch(/token|hash/i);
  });

  it('lets test keys see and manage test keys only', async () => {
    const t = await tenant(app);
    const liveKeys = (await t.live.get('/auth/v1/api-keys')).json().data.keys;
    const liveKey = liveKeys.find((k: { mode: string }) => k.mode === 'live');

    const seen = (await t.test.get('/auth/v1/api-keys')).json().data;
    expect(seen.total).toBe(1);
    expect(seen.keys.every((k: { mode: string }) => k.mode === 'test')).toBe(true);

    for (const body of [{ name: 'x' }, { name: 'x', mode: 'live' }]) {
      const refused = await t.test.post('/auth/v1/api-keys', body);
      expect(refused.statusCode).toBe(403);
      expect(typeof refused.json().detail).toBe('string');
    }
    const made = await t.test.post('/auth/v1/api-keys', { name: 'x', mode: 'test' });
    expect(made.statusCode).toBe(201);

    const revoke = await t.test.delete(`/auth/v1/api-keys/${liveKey.api_key_id}`);
    expect(revoke.statusCode).toBe(404);
    expect((await t.live.get('/v1/lists')).statusCode).toBe(200);
    expect((await t.test.delete(`/auth/v1/api-keys/${made.json().data.api_key_id}`)).statusCode).toBe(200);
  });

  it('never reaches another organization\'s keys', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const theirs = (await other.live.get('/auth/v1/api-keys')).json().data.keys[0].api_key_id;
    expect((await t.live.delete(`/auth/v1/api-keys/${theirs}`)).statusCode).toBe(404);
    expect((await t.live.delete('/auth/v1/api-keys/key_doesnotexist')).statusCode).toBe(404);
    expect((await other.live.get('/v1/lists')).statusCode).toBe(200);
  });

  it('validates the request body', async () => {
    const t = await tenant(app);
    expect((await t.live.post('/auth/v1/api-keys', {})).statusCode).toBe(400);
    expect((await t.live.post('/auth/v1/api-keys', { name: 'x', mode: 'staging' })).statusCode).toBe(400);
    const extra = await t.live.post('/auth/v1/api-keys', { name: 'x', owner: 'me' });
    expect(extra.statusCode).toBe(422);
    expect(extra.json().detail[0]).toMatchObject({ loc: ['body', 'owner'], type: 'extra_forbidden' });
    expect((await client(app, undefined).get('/auth/v1/api-keys')).statusCode).toBe(401);
  });
});
