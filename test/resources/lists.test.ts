// Lists and suppression-list entries through HTTP: every endpoint and every named error.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, tenant, testApp, type Client } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
});
afterAll(() => app.close());

const TYPES = ['contacts', 'companies', 'suppressions', 'deals', 'leads'];
const MISSING = 'lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B';

async function makeList(c: Client, type = 'contacts', name = 'A list') {
  const res = await c.post('/v1/lists', { name, type });
  expect(res.statusCode).toBe(201);
  return res.json().data as { id: string; member_count: number; type: string };
}

const getList = async (c: Client, id: string) => (await c.get(`/v1/lists/${id}`)).json().data;

describe('POST /v1/lists', () => {
  it('creates a list of every type', async () => {
    const t = await tenant(app);
    const before = Math.floor(Date.now() / 1000);
    for (const type of TYPES) {
      const res = await t.live.post('/v1/lists', { name: `${type} list`, type, description: 'Why this list exists' });
      expect(res.statusCode).toBe(201);
      const list = res.json().data;
      expect(list).toEqual({
        id: expect.stringMatching(/^lst_[0-9A-Z]{26}$/),
        name: `${type} list`, type, description: 'Why this list exists', member_count: 0,
        created_at: expect.any(Number), updated_at: list.created_at,
      });
      expect(list.created_at).toBeGreaterThanOrEqual(before);
    }
    const plain = (await t.live.post('/v1/lists', { name: 'No description', type: 'leads' })).json().data;
    expect(plain.description).toBeNull();
  });

  it('refuses an unrecognized type with 400 Invalid list type', async () => {
    const t = await tenant(app);
    for (const type of ['bogus', 'Contacts', '', 'contact', 42, null]) {
      const res = await t.live.post('/v1/lists', { name: 'L', type });
      expect(res.statusCode, String(type)).toBe(400);
      expect(res.json()).toEqual({ type: 'bad_request', detail: 'Invalid list type', param: 'type' });
    }
    expect((await t.live.get('/v1/lists')).json().pagination.total).toBe(0);
  });

  it('requires a name and a type', async () => {
    const t = await tenant(app);
    const noType = await t.live.post('/v1/lists', { name: 'L' });
    expect(noType.statusCode).toBe(400);
    expect(noType.json().detail).toMatch(/type/);
    const noName = await t.live.post('/v1/lists', { type: 'contacts' });
    expect(noName.statusCode).toBe(400);
    expect(noName.json().detail).toMatch(/name/);
    const empty = await t.live.post('/v1/lists', { name: '', type: 'contacts' });
    expect(empty.statusCode).toBe(422);
    expect(empty.json().detail[0].loc).toEqual(['body', 'name']);
  });
});

describe('GET /v1/lists', () => {
  it('lists the tenant\'s lists, newest first, filtered by type', async () => {
    const t = await tenant(app);
    const a = await makeList(t.live, 'contacts', 'first');
    const b = await makeList(t.live, 'suppressions', 'second');
    const c = await makeList(t.live, 'contacts', 'third');
    const all = (await t.live.get('/v1/lists')).json();
    expect(all.data.map((l: { id: string }) => l.id)).toEqual([c.id, b.id, a.id]);
    expect(all.pagination.total).toBe(3);
    const contacts = (await t.live.get('/v1/lists?type=contacts')).json();
    expect(contacts.data.map((l: { id: string }) => l.id)).toEqual([c.id, a.id]);
    expect(contacts.pagination.total).toBe(2);
    expect((await t.live.get('/v1/lists?type=deals')).json().pagination.total).toBe(0);

    const bad = await t.live.get('/v1/lists?type=bogus');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ type: 'bad_request', detail: 'Invalid list type', param: 'type' });
  });

  it('never shows another organization\'s or the other mode\'s lists', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const mine = await makeList(t.live);
    const sandboxBefore = (await t.test.get('/v1/lists?limit=200')).json().data.map((l: { id: string }) => l.id);
    await makeList(other.live);
    expect((await t.live.get('/v1/lists')).json().data.map((l: { id: string }) => l.id)).toEqual([mine.id]);
    expect(sandboxBefore).not.toContain(mine.id);
    expect((await t.test.get('/v1/lists?limit=200')).json().data.map((l: { id: string }) => l.id)).toEqual(sandboxBefore);
  });
});

describe('GET /v1/lists/{id}', () => {
  it('reads a list, and answers List not found for unknown, foreign and other-mode ids', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const list = await makeList(t.live);
    const res = await t.live.get(`/v1/lists/${list.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual(list);

    for (const [c, id] of [[t.live, MISSING], [t.live, 'nonsense'], [other.live, list.id], [t.test, list.id]] as const) {
      const missing = await c.get(`/v1/lists/${id}`);
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ type: 'not_found', detail: 'List not found' });
    }
    expect((await client(app, undefined).get(`/v1/lists/${list.id}`)).statusCode).toBe(401);
  });
});

describe('PATCH /v1/lists/{id}', () => {
  it('changes the name and description', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live);
    const res = await t.live.patch(`/v1/lists/${list.id}`, { name: 'Renamed', description: 'Now described' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id: list.id, name: 'Renamed', description: 'Now described', type: 'contacts' });
    expect(res.json().data.updated_at).toBeGreaterThanOrEqual(res.json().data.created_at);
    const cleared = await t.live.patch(`/v1/lists/${list.id}`, { description: null });
    expect(cleared.json().data).toMatchObject({ name: 'Renamed', description: null });
    expect(await getList(t.live, list.id)).toEqual(cleared.json().data);
  });

  it('refuses an empty body with No fields to update', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live);
    const res = await t.live.patch(`/v1/lists/${list.id}`, {});
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ type: 'bad_request', detail: 'No fields to update' });
  });

  it('keeps the type fixed and refuses unknown lists', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const list = await makeList(t.live);
    const typed = await t.live.patch(`/v1/lists/${list.id}`, { type: 'leads' });
    expect(typed.statusCode).toBe(422);
    expect(typed.json().detail[0]).toMatchObject({ loc: ['body', 'type'], type: 'extra_forbidden' });
    for (const [c, id] of [[t.live, MISSING], [other.live, list.id]] as const) {
      const res = await c.patch(`/v1/lists/${id}`, { name: 'x' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ type: 'not_found', detail: 'List not found' });
    }
    expect((await getList(t.live, list.id)).name).toBe('A list');
  });
});

describe('DELETE /v1/lists/{id}', () => {
  it('deletes an empty list', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live);
    const res = await t.live.delete(`/v1/lists/${list.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { id: list.id, deleted: true } });
    for (const again of [await t.live.get(`/v1/lists/${list.id}`), await t.live.delete(`/v1/lists/${list.id}`)]) {
      expect(again.statusCode).toBe(404);
      expect(again.json()).toEqual({ type: 'not_found', detail: 'List not found' });
    }
  });

  it('refuses a list with members with 409, and deletes them with cascade=true', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live);
    const keep = await makeList(t.live, 'leads', 'keep');
    const members = [];
    for (let i = 0; i < 3; i++) members.push((await t.live.post('/v1/contacts', { list_id: list.id, name: `M${i}` })).json().data.id);
    const kept = (await t.live.post('/v1/contacts', { list_id: keep.id, name: 'Kept' })).json().data.id;

    for (const url of [`/v1/lists/${list.id}`, `/v1/lists/${list.id}?cascade=false`]) {
      const refused = await t.live.delete(url);
      expect(refused.statusCode).toBe(409);
      expect(refused.json().detail).toMatch(/3 members/);
    }
    expect((await getList(t.live, list.id)).member_count).toBe(3);
    expect((await t.live.get('/v1/contacts')).json().pagination.total).toBe(4);

    const cascaded = await t.live.delete(`/v1/lists/${list.id}?cascade=true`);
    expect(cascaded.statusCode).toBe(200);
    expect(cascaded.json()).toEqual({ data: { id: list.id, deleted: true } });
    for (const id of members) expect((await t.live.get(`/v1/contacts/${id}`)).json()).toEqual({ type: 'not_found', detail: 'Contact not found' });
    expect((await t.live.get(`/v1/contacts/${kept}`)).statusCode).toBe(200);
    expect((await t.live.get('/v1/contacts')).json().pagination.total).toBe(1);
    expect((await t.live.get(`/v1/contacts?list_id=${list.id}`)).json().pagination.total).toBe(0);
    expect((await t.live.get(`/v1/lists/${list.id}`)).statusCode).toBe(404);
  });

  it('refuses a suppression list with entries unless cascade=true', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live, 'suppressions');
    await t.live.post(`/v1/lists/${list.id}/entries`, { values: ['a@example.com'] });
    expect((await t.live.delete(`/v1/lists/${list.id}`)).statusCode).toBe(409);
    expect((await t.live.delete(`/v1/lists/${list.id}?cascade=true`)).statusCode).toBe(200);
    expect((await t.live.get(`/v1/lists/${list.id}/entries`)).json()).toEqual({ type: 'not_found', detail: 'List not found' });
  });

  it('answers List not found for another tenant\'s list and leaves it alone', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const list = await makeList(other.live);
    const res = await t.live.delete(`/v1/lists/${list.id}?cascade=true`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ type: 'not_found', detail: 'List not found' });
    expect((await other.live.get(`/v1/lists/${list.id}`)).statusCode).toBe(200);
  });
});

describe('suppression entries', () => {
  it('adds lower-cased addresses and domains once, and counts them', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live, 'suppressions');
    const res = await t.live.post(`/v1/lists/${list.id}/entries`, { values: ['Ada@Example.COM', 'blocked.org', ' ada@example.com '] });
    expect(res.statusCode).toBe(201);
    const body = res.json().data;
    expect(body.added).toBe(2);
    expect(body.existing).toBe(0);
    expect(body.entries.map((e: { value: string; kind: string }) => [e.value, e.kind]).sort()).toEqual([['ada@example.com', 'email'], ['blocked.org', 'domain']]);
    for (const e of body.entries) expect(e).toMatchObject({ id: expect.stringMatching(/^ent_/), list_id: list.id, created_at: expect.any(Number) });
    expect((await getList(t.live, list.id)).member_count).toBe(2);

    const again = (await t.live.post(`/v1/lists/${list.id}/entries`, { values: ['ADA@example.com', 'new.example'] })).json().data;
    expect(again).toMatchObject({ added: 1, existing: 1 });
    expect((await getList(t.live, list.id)).member_count).toBe(3);

    const page = (await t.live.get(`/v1/lists/${list.id}/entries`)).json();
    expect(page.object).toBe('list');
    expect(page.pagination.total).toBe(3);
    expect(page.data.map((e: { value: string }) => e.value).sort()).toEqual(['ada@example.com', 'blocked.org', 'new.example']);
  });

  it('removes an entry, then answers Entry not found', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live, 'suppressions');
    const [entry] = (await t.live.post(`/v1/lists/${list.id}/entries`, { values: ['gone@example.com'] })).json().data.entries;
    const res = await t.live.delete(`/v1/lists/${list.id}/entries/${entry.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { id: entry.id, deleted: true } });
    expect((await getList(t.live, list.id)).member_count).toBe(0);
    const again = await t.live.delete(`/v1/lists/${list.id}/entries/${entry.id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ type: 'not_found', detail: 'Entry not found' });
    expect((await t.live.get(`/v1/lists/${list.id}/entries`)).json().data).toEqual([]);
  });

  it('refuses entries on other list types, invalid values and unknown lists', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const contacts = await makeList(t.live, 'contacts');
    const suppressions = await makeList(t.live, 'suppressions');
    const wrongType = await t.live.post(`/v1/lists/${contacts.id}/entries`, { values: ['a@example.com'] });
    expect(wrongType.statusCode).toBe(400);
    expect(typeof wrongType.json().detail).toBe('string');

    const invalid = await t.live.post(`/v1/lists/${suppressions.id}/entries`, { values: ['not an address', 'ok@example.com'] });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().detail).toContain('not an address');
    expect((await getList(t.live, suppressions.id)).member_count).toBe(0);

    expect((await t.live.post(`/v1/lists/${suppressions.id}/entries`, { values: [] })).statusCode).toBe(422);
    expect((await t.live.post(`/v1/lists/${suppressions.id}/entries`, {})).statusCode).toBe(400);

    for (const [c, id] of [[t.live, MISSING], [other.live, suppressions.id]] as const) {
      for (const res of [await c.post(`/v1/lists/${id}/entries`, { values: ['a@example.com'] }), await c.get(`/v1/lists/${id}/entries`), await c.delete(`/v1/lists/${id}/entries/ent_x`)]) {
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({ type: 'not_found', detail: 'List not found' });
      }
    }
  });
});
