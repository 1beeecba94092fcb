// Idempotency-Key on POST, PATCH and DELETE: replays, mismatches, races and scope.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
});
afterAll(() => app.close());

let keyCounter = 0;
const newKey = () => `idem-${Date.now()}-${++keyCounter}`;
const totalLists = async (c: Client) => (await c.get('/v1/lists')).json().pagination.total as number;
const totalContacts = async (c: Client) => (await c.get('/v1/contacts')).json().pagination.total as number;

describe('Idempotency-Key', () => {
  it('replays the first response and creates nothing new', async () => {
    const t = await tenant(app);
    const key = { 'idempotency-key': newKey() };
    const first = await t.live.post('/v1/lists', { name: 'Once', type: 'contacts' }, key);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    for (let i = 0; i < 3; i++) {
      const again = await t.live.post('/v1/lists', { name: 'Once', type: 'contacts' }, key);
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(first.body);
      expect(again.headers['content-type']).toMatch(/^application\/json/);
    }
    expect(await totalLists(t.live)).toBe(1);
    // Without the key the same body is a new request.
    expect((await t.live.post('/v1/lists', { name: 'Once', type: 'contacts' })).statusCode).toBe(201);
    expect(await totalLists(t.live)).toBe(2);
  });

  it('treats the same body with reordered keys as the same request', async () => {
    const t = await tenant(app);
    const key = { 'idempotency-key': newKey() };
    const first = await t.live.post('/v1/lists', { name: 'Same', type: 'leads', description: 'd' }, key);
    const again = await t.live.post('/v1/lists', { description: 'd', type: 'leads', name: 'Same' }, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
  });

  it('replays PATCH and DELETE too', async () => {
    const t = await tenant(app);
    const list = (await t.live.post('/v1/lists', { name: 'L', type: 'contacts' })).json().data.id;
    const contact = (await t.live.post('/v1/contacts', { list_id: list, name: 'A' })).json().data.id;

    const patchKey = { 'idempotency-key': newKey() };
    const patched = await t.live.patch(`/v1/contacts/${contact}`, { title: 'CTO' }, patchKey);
    expect(patched.statusCode).toBe(200);
    await t.live.patch(`/v1/contacts/${contact}`, { title: 'CEO' });
    const replayed = await t.live.patch(`/v1/contacts/${contact}`, { title: 'CTO' }, patchKey);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.json().data.title).toBe('CTO');
    expect((await t.live.get(`/v1/contacts/${contact}`)).json().data.title).toBe('CEO');

    const deleteKey = { 'idempotency-key': newKey() };
    const deleted = await t.live.delete(`/v1/contacts/${contact}`, deleteKey);
    expect(deleted.statusCode).toBe(200);
    const again = await t.live.delete(`/v1/contacts/${contact}`, deleteKey);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(deleted.body);
    expect((await t.live.delete(`/v1/contacts/${contact}`)).statusCode).toBe(404);
  });

  it('refuses the same key with a different request with 422', async () => {
    const t = await tenant(app);
    const key = { 'idempotency-key': newKey() };
    expect((await t.live.post('/v1/lists', { name: 'First', type: 'contacts' }, key)).statusCode).toBe(201);
    for (const [method, url, body] of [
      ['POST', '/v1/lists', { name: 'Second', type: 'contacts' }],
      ['POST', '/v1/lists', { name: 'First', type: 'leads' }],
      ['POST', '/auth/v1/api-keys', { name: 'First' }],
    ] as const) {
      const res = await t.live(method, url, body, key);
      expect(res.statusCode, `${method} ${url}`).toBe(422);
      expect(typeof res.json().detail).toBe('string');
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(await totalLists(t.live)).toBe(1);
  });

  it('creates exactly one record from concurrent identical requests', async () => {
    const t = await tenant(app);
    const key = { 'idempotency-key': newKey() };
    const results = await Promise.all(Array.from({ length: 10 }, () => t.live.post('/v1/lists', { name: 'Raced', type: 'contacts' }, key)));
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.every((s) => s === 201 || s === 409), statuses.join(',')).toBe(true);
    const originals = results.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(originals).toHaveLength(1);
    for (const r of results) {
      if (r.statusCode === 201) expect(r.json().data.id).toBe(originals[0].json().data.id);
      else expect(typeof r.json().detail).toBe('string');
    }
    expect(await totalLists(t.live)).toBe(1);
    // Once the first has finished, every retry replays it.
    const after = await t.live.post('/v1/lists', { name: 'Raced', type: 'contacts' }, key);
    expect(after.headers['idempotent-replayed']).toBe('true');
    expect(after.body).toBe(originals[0].body);
  });

  it('scopes keys to the organization and the mode', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const key = { 'idempotency-key': newKey() };
    const body = { name: 'Scoped', type: 'contacts' };
    const sandboxLists = await totalLists(t.test);
    const mine = await t.live.post('/v1/lists', body, key);
    const theirs = await other.live.post('/v1/lists', body, key);
    const test = await t.test.post('/v1/lists', body, key);
    for (const res of [mine, theirs, test]) {
      expect(res.statusCode).toBe(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(new Set([mine, theirs, test].map((r) => r.json().data.id)).size).toBe(3);
    expect(await totalLists(t.live)).toBe(1);
    expect(await totalLists(other.live)).toBe(1);
    expect(await totalLists(t.test)).toBe(sandboxLists + 1);
  });

  it('claims keys of several tenants at once, whatever printable characters they hold', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    // Characters that quote, escape or end a value in a statement or an array of values.
    const keys = ['a"b', 'c\\d', '{e,f}', 'NULL', "g'h;--", `${newKey()}`].map((k) => `${k}-${Date.now()}`);
    const clients = [t.live, t.test, other.live];
    const body = { name: 'Together', type: 'contacts' };
    const send = () => Promise.all(clients.flatMap((c) => keys.map((k) => c.post('/v1/lists', body, { 'idempotency-key': k }))));
    const first = await send();
    expect(first.map((r) => r.statusCode)).toEqual(first.map(() => 201));
    expect(first.every((r) => r.headers['idempotent-replayed'] === undefined)).toBe(true);
    expect(new Set(first.map((r) => r.json().data.id)).size).toBe(first.length);
    const again = await send();
    expect(again.map((r) => r.headers['idempotent-replayed'])).toEqual(again.map(() => 'true'));
    expect(again.map((r) => r.body)).toEqual(first.map((r) => r.body));
    expect(await totalLists(other.live)).toBe(keys.length);
  });

  it('replays an error response as well', async () => {
    const t = await tenant(app);
    const key = { 'idempotency-key': newKey() };
    const missing = 'lst_00000000000000000000000000';
    const first = await t.live.post('/v1/contacts', { list_id: missing, name: 'A' }, key);
    expect(first.statusCode).toBe(404);
    expect(first.json()).toEqual({ type: 'not_found', detail: 'List not found' });
    const again = await t.live.post('/v1/contacts', { list_id: missing, name: 'A' }, key);
    expect(again.statusCode).toBe(404);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);

    const emptyKey = { 'idempotency-key': newKey() };
    const list = (await t.live.post('/v1/lists', { name: 'L', type: 'contacts' })).json().data.id;
    const empty = await t.live.patch(`/v1/lists/${list}`, {}, emptyKey);
    expect(empty.statusCode).toBe(400);
    const emptyAgain = await t.live.patch(`/v1/lists/${list}`, {}, emptyKey);
    expect(emptyAgain.headers['idempotent-replayed']).toBe('true');
    expect(emptyAgain.json()).toEqual({ type: 'bad_request', detail: 'No fields to update' });
    expect(await totalContacts(t.live)).toBe(0);
  });

  it('refuses an invalid key with 400', async () => {
    const t = await tenant(app);
    for (const bad of ['x'.repeat(300), 'has space', 'tab\there', 'caf\u00e9']) {
      const res = await t.live.post('/v1/lists', { name: 'L', type: 'contacts' }, { 'idempotency-key': bad });
      expect(res.statusCode, bad).toBe(400);
      expect(typeof res.json().detail).toBe('string');
    }
    expect(await totalLists(t.live)).toBe(0);
    expect((await t.live.post('/v1/lists', { name: 'L', type: 'contacts' }, { 'idempotency-key': 'k'.repeat(255) })).statusCode).toBe(201);
  });

  it('leaves reads alone', async () => {
    const t = await tenant(app);
    const key = { 'idempotency-key': newKey() };
    const before = await t.live.get('/v1/lists', key);
    await t.live.post('/v1/lists', { name: 'L', type: 'contacts' });
    const after = await t.live.get('/v1/lists', key);
    expect(after.headers['idempotent-replayed']).toBeUndefined();
    expect(after.json().pagination.total).toBe(before.json().pagination.total + 1);
  });
});
