// Contact lists at scale, through HTTP: a title search answers exactly the same rows and total
// whether the tenant is small (scanned) or large (read through the trigram index), and cached list
// answers and totals never outlive a write, in this process or another one on the same store; an
// answer is kept from its second computation on.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { newId, nowSeconds } from '../../src/platform/ids.ts';
import { bumpCounter } from '../../src/platform/write.ts';
import { TITLE_SCAN_MAX } from '../../src/resources/contacts/contacts.store.ts';
import { client, tenant, testApp, type Client } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
});
afterAll(() => app.close());

// Titles that probe case folding (ASCII and beyond), LIKE's wildcards and FTS's quote character.
const SPECIAL_TITLES = ['Quantum Lead', 'QUANTUM lead', 'quantum', 'Head of Ärger', 'head of ärger', '100% quantum_x', 'say "quantum"', 'Qu'];
const titleOf = (i: number) => (i % 50 === 0 ? SPECIAL_TITLES[(i / 50) % SPECIAL_TITLES.length] : i % 7 === 0 ? null : `Engineer ${i % 13}`);

/** What the store's contains-filter means: SQLite's LIKE folds ASCII case only; PostgreSQL's ILIKE folds all. */
function matches(title: string | null, text: string, postgres: boolean): boolean {
  if (title === null) return false;
  const fold = (s: string) => (postgres ? s.toLowerCase() : s.replace(/[A-Z]/g, (c) => c.toLowerCase()));
  return fold(title).includes(fold(text));
}

/** Adds `count` contacts to the tenant's list directly through the store, moving its maintained totals. */
async function seed(orgId: string, listId: string, count: number): Promise<Array<{ id: string; title: string | null }>> {
  const { db } = app.services.database;
  const scope = { orgId, mode: 'live' as const };
  const base = Date.now() - count;
  const rows = Array.from({ length: count }, (_, i) => ({
    id: newId('con', base + i), org_id: orgId, mode: 'live' as const, list_id: listId, name: `Contact ${i}`, first_name: null, last_name: null,
    title: titleOf(i), company: null, company_id: null, work_email: null, email_domain: null, personal_email: null, phone: null, linkedin_url: null,
    city: null, country: null, seniority: null, department: null, tags: '[]', created_at: nowSeconds(), updated_at: nowSeconds(),
  }));
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < rows.length; i += 500) await tx.insertInto('contacts').values(rows.slice(i, i + 500)).execute();
    await bumpCounter(tx, app.services.database.dialect, scope, 'contacts', count);
    await tx.updateTable('lists').set((eb) => ({ member_count: eb('member_count', '+', count) })).where('id', '=', listId).execute();
  });
  return rows.map((r) => ({ id: r.id, title: r.title }));
}

async function makeList(c: Client): Promise<string> {
  const res = await c.post('/v1/lists', { name: 'People', type: 'contacts' });
  expect(res.statusCode).toBe(201);
  return res.json().data.id;
}

/** Every page of a search, walked with cursors: the ids (newest first) and the totals each page gave. */
async function walk(c: Client, title: string) {
  const ids: string[] = [];
  const totals = new Set<number>();
  let cursor: string | null = null;
  do {
    const res = await c.get(`/v1/contacts?limit=200&title=${encodeURIComponent(title)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    ids.push(...body.data.map((x: { id: string }) => x.id));
    totals.add(body.pagination.total);
    cursor = body.next_cursor;
  } while (cursor);
  return { ids, totals: [...totals] };
}

const SEARCHES = ['quantum', 'QUANTUM', 'ärger', 'Ärger', '100%', 'm_x', '"quantum"', 'qu', 'engineer 1', 'nothing like this'];

describe('GET /v1/contacts?title=', () => {
  /** Every search answers exactly the contains-matches of `size` seeded contacts, with their total. */
  async function expectExactSearches(size: number): Promise<void> {
    const t = await tenant(app);
    const listId = await makeList(t.live);
    const rows = await seed(t.org_id, listId, size);
    const postgres = app.services.database.dialect === 'postgres';
    for (const text of SEARCHES) {
      const expected = rows.filter((r) => matches(r.title, text, postgres)).map((r) => r.id).reverse();
      const { ids, totals } = await walk(t.live, text);
      expect(ids, text).toEqual(expected);
      expect(totals, text).toEqual([expected.length]);
    }
  }

  it('answers exactly the contains-matches, with their total, on a tenant large enough for the title index', () => expectExactSearches(TITLE_SCAN_MAX + 150), 120_000);

  it('answers the same way on a small tenant', () => expectExactSearches(400));
});

describe('cached list answers', () => {
  it('change with every write: the first page and a filtered total after a create, an update and a delete', async () => {
    const t = await tenant(app);
    const listId = await makeList(t.live);
    const first = () => t.live.get('/v1/contacts?limit=2');
    const titled = () => t.live.get('/v1/contacts?limit=2&title=pilot');
    expect((await first()).json().pagination.total).toBe(0);
    expect((await titled()).json().pagination.total).toBe(0);

    const created = (await t.live.post('/v1/contacts', { list_id: listId, title: 'Test Pilot' })).json().data;
    expect((await first()).json()).toMatchObject({ pagination: { total: 1 }, data: [{ id: created.id }] });
    expect((await titled()).json().pagination.total).toBe(1);

    await t.live.patch(`/v1/contacts/${created.id}`, { title: 'Navigator' });
    expect((await first()).json().data[0].title).toBe('Navigator');
    expect((await titled()).json().pagination.total).toBe(0);

    await t.live.delete(`/v1/contacts/${created.id}`);
    expect((await first()).json()).toMatchObject({ pagination: { total: 0 }, data: [] });
  });

  it('are kept from their second computation on: an answer asked once is not kept', async () => {
    const t = await tenant(app);
    const listId = await makeList(t.live);
    const { id } = (await t.live.post('/v1/contacts', { list_id: listId, title: 'Pilot' })).json().data;
    const url = '/v1/contacts?limit=5&title=pilot';
    const titled = async () => (await t.live.get(url)).json().data.map((c: { title: string }) => c.title);
    // A change made in the store directly moves no version: only an answer computed anew shows it.
    const retitle = (title: string) => app.services.database.db.updateTable('contacts').set({ title }).where('id', '=', id).execute();
    expect(await titled()).toEqual(['Pilot']);
    await retitle('Pilot One');
    expect(await titled()).toEqual(['Pilot One']);
    await retitle('Pilot Two');
    expect(await titled()).toEqual(['Pilot One']);
  });

  it('change with a write made by another instance on the same store', async () => {
    const other = await buildApp({ config: app.services.config, database: app.services.database, logger: app.log });
    try {
      const t = await tenant(app);
      const listId = await makeList(t.live);
      const here = t.live;
      const there = client(other, t.live_token);
      expect((await here.get('/v1/contacts')).json().pagination.total).toBe(0);
      const created = (await there.post('/v1/contacts', { list_id: listId, title: 'Elsewhere' })).json().data;
      expect((await here.get('/v1/contacts')).json()).toMatchObject({ pagination: { total: 1 }, data: [{ id: created.id }] });
    } finally {
      await other.close();
    }
  });

  it('are kept per tenant and mode', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const listA = await makeList(a.live);
    await a.live.post('/v1/contacts', { list_id: listA, title: 'Only in A' });
    expect((await a.live.get('/v1/contacts')).json().pagination.total).toBe(1);
    expect((await b.live.get('/v1/contacts')).json().pagination.total).toBe(0);
    expect((await a.test.get('/v1/contacts?title=only%20in%20a')).json().pagination.total).toBe(0);
  });
});
