// Pagination (spec section 4): limits, page numbers, cursors that walk every row once, and cursors
// that are refused anywhere but where they were issued.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  // Tests here create dozens of rows per tenant through the API: lift the rate limit out of the way.
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
});
afterAll(() => app.close());

async function withContacts(count: number, listCount = 1) {
  const t = await tenant(app);
  const lists: string[] = [];
  for (let i = 0; i < listCount; i++) lists.push((await t.live.post('/v1/lists', { name: `L${i}`, type: 'contacts' })).json().data.id);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await t.live.post('/v1/contacts', { list_id: lists[i % listCount], name: `Person ${i}`, title: i % 2 ? 'Engineer' : 'Manager' });
    expect(res.statusCode).toBe(201);
    ids.push(res.json().data.id);
  }
  return { ...t, lists, ids };
}

const expectCursorError = (res: LightMyRequestResponse) => {
  expect(res.statusCode).toBe(400);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(['detail', 'param', 'type']);
  expect(body.type).toBe('bad_request');
  expect(body.param).toBe('cursor');
  expect(typeof body.detail).toBe('string');
};

async function walk(c: Client, url: string, from: string | null = null) {
  const sep = url.includes('?') ? '&' : '?';
  const pages = [];
  let cursor = from;
  do {
    const res: LightMyRequestResponse = await c.get(cursor ? `${url}${sep}cursor=${encodeURIComponent(cursor)}` : url);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    pages.push(body);
    cursor = body.next_cursor;
    expect(body.pagination.next_cursor).toBe(cursor);
    expect(pages.length).toBeLessThan(100);
  } while (cursor);
  return pages;
}

describe('limit and page', () => {
  it('refuses a limit outside 1 to 200 in the error shape', async () => {
    const t = await tenant(app);
    // A query that fails validation is 422 with the field errors (DESIGN.md, docs/api.md), as a body is.
    for (const [url, field] of [
      ...['0', '201', '-1', '1.5', 'ten'].map((limit) => [`/v1/contacts?limit=${limit}`, 'limit']),
      ...['0', '-3', 'x'].map((page) => [`/v1/lists?page=${page}`, 'page']),
    ]) {
      const res = await t.live.get(url);
      expect(res.statusCode, url).toBe(422);
      expect(res.json(), url).toMatchObject({ type: 'validation_error', param: field });
      expect(res.json().detail.map((d: { loc: string[] }) => d.loc), url).toEqual([['query', field]]);
    }
    expect((await t.live.get('/v1/contacts?limit=200')).statusCode).toBe(200);
    expect((await t.live.get('/v1/contacts?limit=1')).statusCode).toBe(200);
  });

  it('pages by 50 by default and by number', async () => {
    const t = await withContacts(57);
    const first = (await t.live.get('/v1/contacts')).json();
    expect(first.data).toHaveLength(50);
    expect(first.pagination).toMatchObject({ page: 1, limit: 50, total: 57, has_next: true });
    expect(typeof first.next_cursor).toBe('string');

    const second = (await t.live.get('/v1/contacts?page=2')).json();
    expect(second.data).toHaveLength(7);
    expect(second.pagination).toEqual({ page: 2, limit: 50, total: 57, has_next: false, next_cursor: null });
    expect(second.next_cursor).toBeNull();
    const all = [...first.data, ...second.data].map((c: { id: string }) => c.id);
    expect(new Set(all).size).toBe(57);
    expect([...all].sort()).toEqual([...t.ids].sort());

    const beyond = (await t.live.get('/v1/contacts?page=9&limit=10')).json();
    expect(beyond.data).toEqual([]);
    expect(beyond.pagination).toEqual({ page: 9, limit: 10, total: 57, has_next: false, next_cursor: null });
  });
});

describe('cursors', () => {
  it('walk every row exactly once with an exact total', async () => {
    const t = await withContacts(23);
    const pages = await walk(t.live, '/v1/contacts?limit=5');
    expect(pages.map((p) => p.data.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.map((p) => p.pagination.page)).toEqual([1, 2, 3, 4, 5]);
    for (const p of pages) expect(p.pagination.total).toBe(23);
    expect(pages.slice(0, -1).every((p) => p.pagination.has_next)).toBe(true);
    const last = pages.at(-1);
    expect(last.pagination.has_next).toBe(false);
    expect(last.next_cursor).toBeNull();
    const seen = pages.flatMap((p) => p.data.map((c: { id: string }) => c.id));
    expect(seen).toHaveLength(23);
    expect(new Set(seen).size).toBe(23);
    expect([...seen].sort()).toEqual([...t.ids].sort());
  });

  it('walk a filtered list and keep the filter', async () => {
    const t = await withContacts(14, 2);
    const pages = await walk(t.live, `/v1/contacts?list_id=${t.lists[0]}&limit=3`);
    const seen = pages.flatMap((p) => p.data);
    expect(seen).toHaveLength(7);
    expect(seen.every((c: { list_id: string }) => c.list_id === t.lists[0])).toBe(true);
    expect(pages.every((p) => p.pagination.total === 7)).toBe(true);
    const engineers = (await walk(t.live, '/v1/contacts?title=engineer&limit=2')).flatMap((p) => p.data);
    expect(engineers).toHaveLength(7);
  });

  it('never skip or repeat a row while others are written', async () => {
    const t = await withContacts(10);
    const first = (await t.live.get('/v1/contacts?limit=4')).json();
    for (let i = 0; i < 3; i++) await t.live.post('/v1/contacts', { list_id: t.lists[0], name: `Late ${i}` });
    const rest = (await walk(t.live, '/v1/contacts?limit=4', first.next_cursor)).flatMap((p) => p.data);
    const seen = [...first.data, ...rest].map((c: { id: string }) => c.id);
    expect([...seen].sort()).toEqual([...t.ids].sort());
  });

  it('answer the total as of the latest write on every page, kept or counted anew', async () => {
    const t = await tenant(app);
    const make = async (name: string, industry: string) => {
      const res = await t.live.post('/v1/companies', { name, industry });
      expect(res.statusCode).toBe(201);
      return res.json().data.id as string;
    };
    for (let i = 0; i < 6; i++) await make(`Company ${i}`, i % 2 ? 'Software' : 'Retail');
    const url = '/v1/companies?industry=Software&limit=2';
    const first = (await t.live.get(url)).json();
    expect(first.pagination.total).toBe(3);
    const second = `${url}&cursor=${encodeURIComponent(first.next_cursor)}`;
    expect((await t.live.get(second)).json().pagination.total).toBe(3);
    // A write of the tenant (none of the page's rows) makes the total counted before it stale.
    await make('Late', 'Software');
    const after = (await t.live.get(second)).json();
    expect(after.data).toHaveLength(1);
    expect(after.pagination.total).toBe(4);
    // Its one row deleted, the page is empty, and its total still counted anew.
    expect((await t.live.delete(`/v1/companies/${after.data[0].id}`)).statusCode).toBe(200);
    const empty = (await t.live.get(second)).json();
    expect(empty.data).toEqual([]);
    expect(empty.pagination.total).toBe(3);
  });

  it('take precedence over page', async () => {
    const t = await withContacts(12);
    const first = (await t.live.get('/v1/contacts?limit=5')).json();
    const byCursor = (await t.live.get(`/v1/contacts?limit=5&page=3&cursor=${encodeURIComponent(first.next_cursor)}`)).json();
    const byPage = (await t.live.get('/v1/contacts?limit=5&page=2')).json();
    expect(byCursor.pagination.page).toBe(2);
    expect(byCursor.data.map((c: { id: string }) => c.id)).toEqual(byPage.data.map((c: { id: string }) => c.id));
  });

  it('refuse a tampered or malformed cursor', async () => {
    const t = await withContacts(3);
    const cursor: string = (await t.live.get('/v1/contacts?limit=1')).json().next_cursor;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const dot = cursor.indexOf('.');
    const variants = [
      flip(cursor, 0),
      flip(cursor, dot - 1),
      flip(cursor, dot + 1),
      flip(cursor, dot + 5),
      cursor.slice(0, -2),
      `${cursor}A`,
      cursor.slice(0, dot),
      `${Buffer.from(JSON.stringify({ k: 'con_ZZZZ', p: 2 })).toString('base64url')}${cursor.slice(dot)}`,
      'not-a-cursor',
      '!!!',
      '.',
      'e30.e30',
    ];
    for (const bad of variants) expectCursorError(await t.live.get(`/v1/contacts?limit=1&cursor=${encodeURIComponent(bad)}`));
    expect((await t.live.get(`/v1/contacts?limit=1&cursor=${encodeURIComponent(cursor)}`)).statusCode).toBe(200);
    // Given twice (a list), or longer than a route's schema allows: malformed too, never a 422.
    expectCursorError(await t.live.get(`/v1/contacts?limit=1&cursor=${encodeURIComponent(cursor)}&cursor=${encodeURIComponent(cursor)}`));
    expectCursorError(await t.live.get(`/v1/tasks?cursor=a&cursor=b`));
    expectCursorError(await t.live.get(`/v1/deals/pipelines?cursor=${'A'.repeat(600)}`));
  });

  it('refuse a cursor from another endpoint, other filters, another organization or the other mode', async () => {
    const t = await withContacts(6, 2);
    for (let i = 0; i < 3; i++) await t.live.post('/v1/lists', { name: `extra ${i}`, type: 'leads' });
    const cursor: string = (await t.live.get('/v1/contacts?limit=2')).json().next_cursor;
    const filtered: string = (await t.live.get(`/v1/contacts?limit=1&list_id=${t.lists[0]}`)).json().next_cursor;
    const c = encodeURIComponent(cursor);

    expectCursorError(await t.live.get(`/v1/lists?limit=2&cursor=${c}`));
    expectCursorError(await t.live.get(`/v1/contacts?limit=2&title=engineer&cursor=${c}`));
    expectCursorError(await t.live.get(`/v1/contacts?limit=1&list_id=${t.lists[1]}&cursor=${encodeURIComponent(filtered)}`));
    expectCursorError(await t.live.get(`/v1/contacts?limit=1&cursor=${encodeURIComponent(filtered)}`));

    const other = await tenant(app);
    expectCursorError(await other.live.get(`/v1/contacts?limit=2&cursor=${c}`));
    expectCursorError(await t.test.get(`/v1/contacts?limit=2&cursor=${c}`));
    expect((await t.live.get(`/v1/contacts?limit=2&cursor=${c}`)).statusCode).toBe(200);
  });
});
