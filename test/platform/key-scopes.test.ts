// Scopes and expiry of API keys through HTTP: what creation accepts, restricted keys at work,
// narrowing with PATCH, and expired keys. Every route's refusal is generated in
// test/security/scopes.test.ts.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, tenant, testApp, type Client } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp();
});
afterAll(() => app.close());

const now = () => Math.floor(Date.now() / 1000);

async function keyOf(owner: Client, body: Record<string, unknown>) {
  const res = await owner.post('/auth/v1/api-keys', { name: 'restricted', ...body });
  expect(res.statusCode, res.body).toBe(201);
  return { ...res.json().data, c: client(app, res.json().data.api_key_token) };
}

describe('creating keys with scopes and an expiry', () => {
  it('refuses unknown scopes by name, empty scopes and expiries not in the future', async () => {
    const t = await tenant(app);
    for (const scope of ['meetings:read', 'nope:write', 'contact:write']) {
      const res = await t.live.post('/auth/v1/api-keys', { name: 'x', scopes: ['contacts:read', scope] });
      expect(res.statusCode, scope).toBe(400);
      expect(res.json().detail).toBe(`Unknown scope: ${scope}; GET /auth/v1/scopes lists the scopes`);
    }
    // Not even of the form of a scope: a validation error at the item.
    for (const scope of ['contacts', 'contacts:delete', 'CONTACTS:READ', '**', 'contacts:read ']) {
      const res = await t.live.post('/auth/v1/api-keys', { name: 'x', scopes: ['contacts:read', scope] });
      expect(res.statusCode, scope).toBe(422);
      expect(res.json().detail[0].loc).toEqual(['body', 'scopes', '1']);
    }
    expect((await t.live.post('/auth/v1/api-keys', { name: 'x', scopes: [] })).statusCode).toBe(422);
    expect((await t.live.post('/auth/v1/api-keys', { name: 'x', scopes: 'contacts:read' })).statusCode).toBe(422);
    for (const expires_at of [now() - 10, now(), 0]) {
      const res = await t.live.post('/auth/v1/api-keys', { name: 'x', expires_at });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ type: 'bad_request', detail: 'expires_at must be in the future (unix seconds)', param: 'expires_at' });
    }
    expect((await t.live.post('/auth/v1/api-keys', { name: 'x', expires_at: '2030-01-01' })).statusCode).toBe(422);
    const keys = (await t.live.get('/auth/v1/api-keys')).json().data;
    expect(keys.total).toBe(2);
  });

  it('records scopes (deduplicated, sorted; `*` alone) and the expiry on the key', async () => {
    const t = await tenant(app);
    const expires = now() + 3600;
    const made = await keyOf(t.live, { scopes: ['lists:read', 'contacts:write', 'lists:read'], expires_at: expires });
    expect(made).toMatchObject({ scopes: ['contacts:write', 'lists:read'], expires_at: expires });
    expect((await keyOf(t.live, { scopes: ['contacts:read', '*'] })).scopes).toEqual(['*']);
    const listed = (await t.live.get('/auth/v1/api-keys')).json().data.keys.find((k: { api_key_id: string }) => k.api_key_id === made.api_key_id);
    expect(listed).toMatchObject({ scopes: ['contacts:write', 'lists:read'], expires_at: expires });
  });
});

describe('restricted keys', () => {
  it('do only what their scopes allow; write includes read of the same group', async () => {
    const t = await tenant(app);
    const list = (await t.live.post('/v1/lists', { name: 'Website form', type: 'contacts' })).json().data.id;
    const form = (await keyOf(t.live, { scopes: ['contacts:write'] })).c;
    const created = await form.post('/v1/contacts', { list_id: list, work_email: 'lead@example.com' });
    expect(created.statusCode, created.body).toBe(201);
    expect((await form.get(`/v1/contacts/${created.json().data.id}`)).statusCode).toBe(200);
    const refusals: Array<[Promise<{ statusCode: number; json(): { detail: string } }>, string]> = [
      [form.get('/v1/lists'), 'lists:read'],
      [form.post('/v1/lists', { name: 'x', type: 'contacts' }), 'lists:write'],
      [form.get('/v1/events'), 'events:read'],
      [form.get('/auth/v1/api-keys'), '*'],
      [form.post('/auth/v1/agency-grants'), '*'],
    ];
    for (const [reply, scope] of refusals) {
      const res = await reply;
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ type: 'permission_denied', detail: `API key lacks scope ${scope}`, scope });
    }
    const reader = (await keyOf(t.live, { scopes: ['contacts:read'] })).c;
    expect((await reader.get('/v1/contacts')).json().pagination.total).toBe(1);
    expect((await reader.post('/v1/contacts', { list_id: list })).json()).toEqual({ type: 'permission_denied', detail: 'API key lacks scope contacts:write', scope: 'contacts:write' });
    expect((await reader.get('/auth/v1/scopes')).statusCode).toBe(200);
    // The refused requests changed nothing.
    expect((await t.live.get('/v1/lists')).json().pagination.total).toBe(1);
  });
});

describe('PATCH /auth/v1/api-keys/{id}', () => {
  it('renames and narrows at once, never widens, and validates', async () => {
    const t = await tenant(app);
    const key = await keyOf(t.live, { scopes: ['contacts:write', 'lists:write'] });
    expect((await key.c.get('/v1/lists')).statusCode).toBe(200);
    const renamed = await t.live.patch(`/auth/v1/api-keys/${key.api_key_id}`, { name: 'Form key', scopes: ['contacts:write', 'lists:read'] });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json().data).toMatchObject({ api_key_id: key.api_key_id, name: 'Form key', scopes: ['contacts:write', 'lists:read'] });
    expect((await key.c.post('/v1/lists', { name: 'x', type: 'contacts' })).json()).toEqual({ type: 'permission_denied', detail: 'API key lacks scope lists:write', scope: 'lists:write' });
    expect((await key.c.get('/v1/lists')).statusCode).toBe(200);
    expect((await t.live.patch(`/auth/v1/api-keys/${key.api_key_id}`, { scopes: ['contacts:read'] })).json().data.scopes).toEqual(['contacts:read']);

    for (const scopes of [['contacts:write'], ['*'], ['companies:read']]) {
      const widened = await t.live.patch(`/auth/v1/api-keys/${key.api_key_id}`, { scopes });
      expect(widened.statusCode, String(scopes)).toBe(403);
      expect(widened.json().detail).toBe(`Scopes can only be narrowed: ${scopes[0]} is not within the key's current scopes; create a new key instead`);
    }
    const bad = [
      [{}, 400, 'No fields to update', {}],
      [{ scopes: ['nope:read'] }, 400, 'Unknown scope: nope:read; GET /auth/v1/scopes lists the scopes', { param: 'scopes' }],
    ] as const;
    for (const [body, status, detail, members] of bad) {
      const res = await t.live.patch(`/auth/v1/api-keys/${key.api_key_id}`, body);
      expect(res.statusCode).toBe(status);
      expect(res.json()).toEqual({ type: 'bad_request', detail, ...members });
    }
    expect((await t.live.patch(`/auth/v1/api-keys/${key.api_key_id}`, { is_agency: true })).statusCode).toBe(422);
    expect((await t.live.patch('/auth/v1/api-keys/key_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', { name: 'x' })).json()).toEqual({ type: 'not_found', detail: 'API key not found' });
    const other = await tenant(app);
    expect((await other.live.patch(`/auth/v1/api-keys/${key.api_key_id}`, { name: 'stolen' })).statusCode).toBe(404);
    const live = (await t.live.get('/auth/v1/api-keys')).json().data.keys.find((k: { mode: string; name: string }) => k.mode === 'live' && k.name !== 'Form key');
    expect((await t.test.patch(`/auth/v1/api-keys/${live.api_key_id}`, { name: 'x' })).statusCode).toBe(404);
    const types = (await t.live.get('/v1/events?type=api_key.updated')).json().data;
    expect(types[types.length - 1]).toMatchObject({ previous_attributes: { name: 'restricted', scopes: ['contacts:write', 'lists:write'] } });
    // The same name and scopes again: 200 with the key as it is, no event.
    const same = (await t.live.get(`/auth/v1/api-keys/${key.api_key_id}`)).json().data;
    const again = await t.live.patch(`/auth/v1/api-keys/${key.api_key_id}`, { name: same.name, scopes: same.scopes });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data).toEqual(same);
    expect((await t.live.get('/v1/events?type=api_key.updated')).json().data).toHaveLength(types.length);
  });
});

describe('expiry', () => {
  it('answers 401 once the key has expired, and still lists it', async () => {
    const t = await tenant(app);
    const expires = now() + 3; // time to create the key and use it once on a loaded machine
    const key = await keyOf(t.live, { expires_at: expires });
    expect((await key.c.get('/v1/lists')).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, (expires - Date.now() / 1000) * 1000) + 50));
    for (const res of [await key.c.get('/v1/lists'), await key.c.post('/v1/lists', { name: 'x', type: 'contacts' }), await key.c.get('/auth/v1/scopes')]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ type: 'authentication_failed', detail: 'API key has expired' });
    }
    const listed = (await t.live.get('/auth/v1/api-keys')).json().data.keys.find((k: { api_key_id: string }) => k.api_key_id === key.api_key_id);
    expect(listed.expires_at).toBe(expires);
    expect((await t.live.get('/v1/lists')).json().pagination.total).toBe(0);
  });
});
