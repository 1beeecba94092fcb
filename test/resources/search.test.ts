// Search through HTTP: every operator on contacts and companies, filter groups, full text with prefix
// matching kept current by writes, sorts with keyset cursors (also while others write), errors that
// name what is wrong, tenant isolation and GET /v1/search across objects.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_COLUMNS } from '../../src/db/migrations/0007-search.ts';
import { DEAL_SEARCH_COLUMNS } from '../../src/db/migrations/0011-checklists.ts';
import { TASK_NOTE_SEARCH_COLUMNS } from '../../src/db/migrations/0012-tasks-notes.ts';
import { QUOTE_SEARCH_COLUMNS } from '../../src/db/migrations/0013-quotes.ts';
import { resources } from '../../src/resources/registry.ts';
import { tenant, testApp, type Client } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
});
afterAll(() => app.close());

type Tenant = Awaited<ReturnType<typeof tenant>>;
type Filter = { field: string; operator: string; value?: unknown };

async function created(c: Client, path: string, body: Record<string, unknown>) {
  const res = await c.post(path, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

const search = (c: Client, plural: string, body: Record<string, unknown>) => c.post(`/v1/search/${plural}`, body);

async function names(c: Client, plural: string, body: Record<string, unknown>): Promise<string[]> {
  const res = await search(c, plural, { limit: 200, ...body });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().pagination.total).toBe(res.json().data.length);
  return res.json().data.map((r: { name: string }) => r.name).sort();
}

/** Every record of a search, walked with cursors of `limit`. */
async function walk(c: Client, plural: string, body: Record<string, unknown>, limit: number, between?: () => Promise<void>) {
  const out: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  do {
    const res = await search(c, plural, { ...body, limit, ...(cursor ? { cursor } : {}) });
    expect(res.statusCode, res.body).toBe(200);
    out.push(...res.json().data);
    cursor = res.json().next_cursor;
    await between?.();
  } while (cursor);
  return out;
}

describe('contacts', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant(app);
    const list = (await created(t.live, '/v1/lists', { name: 'People', type: 'contacts' })).id;
    const people = [
      { name: 'Ada Lovelace', title: 'VP Engineering', work_email: 'ada@analytical.example', city: 'London', tags: ['vip', 'q4'] },
      { name: 'Charles Babbage', title: 'Engineer', work_email: 'charles@analytical.example', city: 'London', tags: ['q4'] },
      { name: 'Grace Hopper', title: 'Rear Admiral', work_email: 'grace@navy.example', city: '', tags: ['vip'] },
      { name: 'Alan Turing', title: null, work_email: null, city: null, tags: [] },
    ];
    for (const p of people) await created(t.live, '/v1/contacts', { list_id: list, ...p });
  });

  it.each<[string, Filter[], string[]]>([
    ['eq', [{ field: 'city', operator: 'eq', value: 'London' }], ['Ada Lovelace', 'Charles Babbage']],
    ['eq normalizes e-mail like a write', [{ field: 'work_email', operator: 'eq', value: 'ADA@analytical.example' }], ['Ada Lovelace']],
    ['neq includes records without a value', [{ field: 'city', operator: 'neq', value: 'London' }], ['Alan Turing', 'Grace Hopper']],
    ['any_of', [{ field: 'city', operator: 'any_of', value: ['London', 'Paris'] }], ['Ada Lovelace', 'Charles Babbage']],
    ['none_of', [{ field: 'title', operator: 'none_of', value: ['Engineer'] }], ['Ada Lovelace', 'Alan Turing', 'Grace Hopper']],
    ['contains ignores case', [{ field: 'title', operator: 'contains', value: 'ENGINEER' }], ['Ada Lovelace', 'Charles Babbage']],
    ['contains matches wildcards literally', [{ field: 'title', operator: 'contains', value: '%' }], []],
    ['starts_with', [{ field: 'work_email', operator: 'starts_with', value: 'gr' }], ['Grace Hopper']],
    ['is_empty: null or empty text', [{ field: 'city', operator: 'is_empty' }], ['Alan Turing', 'Grace Hopper']],
    ['is_not_empty', [{ field: 'city', operator: 'is_not_empty' }], ['Ada Lovelace', 'Charles Babbage']],
    ['exists: not null', [{ field: 'city', operator: 'exists' }], ['Ada Lovelace', 'Charles Babbage', 'Grace Hopper']],
    ['exists false', [{ field: 'title', operator: 'exists', value: false }], ['Alan Turing']],
    ['tags any_of', [{ field: 'tags', operator: 'any_of', value: ['vip', 'nope'] }], ['Ada Lovelace', 'Grace Hopper']],
    ['tags all_of', [{ field: 'tags', operator: 'all_of', value: ['vip', 'q4'] }], ['Ada Lovelace']],
    ['tags none_of', [{ field: 'tags', operator: 'none_of', value: ['vip'] }], ['Alan Turing', 'Charles Babbage']],
    ['tags is_empty', [{ field: 'tags', operator: 'is_empty' }], ['Alan Turing']],
    ['filters AND', [{ field: 'city', operator: 'eq', value: 'London' }, { field: 'tags', operator: 'any_of', value: ['vip'] }], ['Ada Lovelace']],
    ['created_at', [{ field: 'created_at', operator: 'gt', value: 0 }, { field: 'created_at', operator: 'between', value: [0, 1e10] }], ['Ada Lovelace', 'Alan Turing', 'Charles Babbage', 'Grace Hopper']],
  ])('%s', async (_name, filters, expected) => {
    expect(await names(t.live, 'contacts', { filters })).toEqual(expected);
  });

  it('filter groups: at least one group holds, beside the filters', async () => {
    const filter_groups = [[{ field: 'city', operator: 'eq', value: 'London' }, { field: 'title', operator: 'eq', value: 'Engineer' }], [{ field: 'title', operator: 'exists', value: false }]];
    expect(await names(t.live, 'contacts', { filter_groups })).toEqual(['Alan Turing', 'Charles Babbage']);
    expect(await names(t.live, 'contacts', { filter_groups, filters: [{ field: 'work_email', operator: 'exists' }] })).toEqual(['Charles Babbage']);
  });

  it('q: every word begins a word of a searched field, ignoring case and punctuation', async () => {
    expect(await names(t.live, 'contacts', { q: 'ada' })).toEqual(['Ada Lovelace']);
    expect(await names(t.live, 'contacts', { q: 'LOVE ad' })).toEqual(['Ada Lovelace']);
    expect(await names(t.live, 'contacts', { q: 'analytical' })).toEqual(['Ada Lovelace', 'Charles Babbage']);
    expect(await names(t.live, 'contacts', { q: 'engin' })).toEqual(['Ada Lovelace', 'Charles Babbage']);
    expect(await names(t.live, 'contacts', { q: 'ngineer' })).toEqual([]);
    expect(await names(t.live, 'contacts', { q: 'a', filters: [{ field: 'tags', operator: 'any_of', value: ['vip'] }] })).toEqual(['Ada Lovelace', 'Grace Hopper']);
    expect(await names(t.live, 'contacts', { q: '"grace" -- (hopper*)' })).toEqual(['Grace Hopper']);
  });

  it('errors name what is wrong', async () => {
    const unknown = await search(t.live, 'contacts', { filters: [{ field: 'shoe_size', operator: 'eq', value: 1 }] });
    expect([unknown.statusCode, unknown.json().detail]).toEqual([400, 'Unknown field shoe_size: not a field of this object']);
    const unfit = await search(t.live, 'contacts', { filters: [{ field: 'name', operator: 'gt', value: 'a' }] });
    expect(unfit.statusCode).toBe(400);
    expect(unfit.json().detail).toMatch(/^Operator gt does not fit field name, which holds text; use one of: eq, neq/);
    const badOp = await search(t.live, 'contacts', { filters: [{ field: 'name', operator: 'like', value: 'a' }] });
    expect(badOp.statusCode).toBe(400);
    expect(badOp.json().detail).toMatch(/operator/);
    const badValue = await search(t.live, 'contacts', { filter_groups: [[{ field: 'created_at', operator: 'gte', value: 'yesterday' }]] });
    expect(badValue.statusCode).toBe(422);
    expect(badValue.json().detail[0].loc).toEqual(['body', 'filter_groups', '0', '0', 'value']);
    const fraction = await search(t.live, 'contacts', { filters: [{ field: 'created_at', operator: 'gt', value: 1.5 }] });
    expect(fraction.statusCode).toBe(422);
    const noValue = await search(t.live, 'contacts', { filters: [{ field: 'tags', operator: 'any_of', value: [] }] });
    expect(noValue.statusCode).toBe(422);
    const noWords = await search(t.live, 'contacts', { q: '!!' });
    expect([noWords.statusCode, noWords.json()]).toEqual([400, { type: 'bad_request', detail: 'q has no words to search for: give letters or digits', param: 'q' }]);
    const sortTags = await search(t.live, 'contacts', { sort: [{ field: 'tags' }] });
    expect([sortTags.statusCode, sortTags.json().detail]).toEqual([400, 'Cannot sort by tags, which holds a list of tags']);
    const computed = await search(t.live, 'contacts', { filters: [{ field: 'suppressed', operator: 'eq', value: true }] });
    expect(computed.statusCode).toBe(400);
    const extra = await search(t.live, 'contacts', { filter: [] });
    expect(extra.statusCode).toBe(422);
    const custom = await search(t.live, 'contacts', { filters: [{ field: 'custom_fields.plan', operator: 'eq', value: 'pro' }] });
    expect([custom.statusCode, custom.json().detail]).toEqual([400, 'Unknown field custom_fields.plan: not a field of this object']);
  });

  it('a cursor is good only for the search that issued it', async () => {
    const first = await search(t.live, 'contacts', { limit: 1, sort: [{ field: 'name' }] });
    const cursor = first.json().next_cursor;
    const other = await search(t.live, 'contacts', { limit: 1, sort: [{ field: 'name', direction: 'desc' }], cursor });
    expect([other.statusCode, other.json().type]).toEqual([400, 'bad_request']);
    const elsewhere = await search(t.live, 'companies', { limit: 1, sort: [{ field: 'name' }], cursor });
    expect(elsewhere.statusCode).toBe(400);
    const otherTenant = await search((await tenant(app)).live, 'contacts', { limit: 1, sort: [{ field: 'name' }], cursor });
    expect(otherTenant.statusCode).toBe(400);
  });

  it('sees only its own tenant and mode', async () => {
    const other = await tenant(app);
    expect(await names(other.live, 'contacts', { q: 'ada' })).toEqual([]);
    expect(await names(t.test, 'contacts', { filters: [{ field: 'work_email', operator: 'eq', value: 'ada@analytical.example' }] })).toEqual([]);
    const global = await other.live.get('/v1/search?q=ada');
    expect(global.json().data.contacts).toEqual({ total: 0, data: [] });
  });
});

describe('companies: sorts and cursors', () => {
  let t: Tenant;
  const rows: Array<{ name: string; employee_count: number | null; industry: string | null }> = [];
  beforeAll(async () => {
    t = await tenant(app);
    const industries = ['Software', 'software', 'Retail', null, 'Banking'];
    for (let i = 0; i < 23; i++) {
      const row = { name: `Company ${String(i).padStart(2, '0')}`, employee_count: i % 4 === 0 ? null : (i * 37) % 11, industry: industries[i % 5] };
      rows.push(row);
      await created(t.live, '/v1/companies', row);
    }
  });

  it('number filters and between', async () => {
    const expected = rows.filter((r) => r.employee_count !== null && r.employee_count >= 3 && r.employee_count <= 6).map((r) => r.name).sort();
    expect(await names(t.live, 'companies', { filters: [{ field: 'employee_count', operator: 'between', value: [3, 6] }] })).toEqual(expected);
    const none = rows.filter((r) => r.employee_count === null || r.employee_count <= 5).map((r) => r.name).sort();
    expect(await names(t.live, 'companies', { filters: [{ field: 'employee_count', operator: 'none_of', value: [6, 7, 8, 9, 10] }] })).toEqual(none);
  });

  it.each([['asc', 2], ['desc', 3], ['asc', 200]] as const)('walks every record once in order, %s by %i', async (direction, limit) => {
    const sort = [{ field: 'industry', direction }, { field: 'employee_count', direction: 'desc' }];
    const walked = await walk(t.live, 'companies', { sort }, limit);
    expect(walked).toHaveLength(rows.length);
    expect(new Set(walked.map((r) => r.id)).size).toBe(rows.length);
    const key = (r: Record<string, unknown>): [string | null, number | null] => [r.industry === null ? null : String(r.industry).toLowerCase(), r.employee_count as number | null];
    for (let i = 1; i < walked.length; i++) {
      const [a, b] = [key(walked[i - 1]), key(walked[i])];
      if (a[0] !== b[0]) {
        expect(b[0] === null || (a[0] !== null && (direction === 'asc' ? a[0] < b[0] : a[0] > b[0]))).toBe(true);
      } else if (a[1] !== b[1]) {
        expect(b[1] === null || (a[1] !== null && a[1] > b[1])).toBe(true);
      } else {
        expect(String(walked[i - 1].id) > String(walked[i].id)).toBe(true);
      }
    }
  });

  it('never skips or repeats a record that stays while others are created and deleted', async () => {
    const sort = [{ field: 'name', direction: 'asc' }];
    const before = await walk(t.live, 'companies', { sort }, 200);
    let n = 0;
    const churn = async () => {
      n++;
      const extra = await created(t.live, '/v1/companies', { name: `Company ${String(n % 23).padStart(2, '0')} b`, employee_count: n });
      if (n % 2 === 0) expect((await t.live.delete(`/v1/companies/${extra.id}`)).statusCode).toBe(200);
    };
    const during = await walk(t.live, 'companies', { sort }, 3, churn);
    const seen = during.map((r) => r.id);
    expect(new Set(seen).size).toBe(seen.length);
    for (const r of before) expect(seen).toContain(r.id);
  });

  it('answers the total as of the latest write on a page reached by cursor, and on an emptied one', async () => {
    const own = await tenant(app);
    for (let i = 0; i < 6; i++) await created(own.live, '/v1/companies', { name: `Firm ${i}`, industry: i % 2 ? 'Software' : 'Retail' });
    const body = { filters: [{ field: 'industry', operator: 'eq', value: 'Software' }], sort: [{ field: 'name', direction: 'asc' }], limit: 2 };
    const first = (await search(own.live, 'companies', body)).json();
    expect(first.pagination.total).toBe(3);
    const second = { ...body, cursor: first.next_cursor };
    expect((await search(own.live, 'companies', second)).json().pagination.total).toBe(3);
    // A write of the tenant makes the total counted before it stale: the page reads it anew.
    const late = await created(own.live, '/v1/companies', { name: 'Firm 9', industry: 'Software' });
    const after = (await search(own.live, 'companies', second)).json();
    expect(after.data.map((r: { id: string }) => r.id)).toEqual([after.data[0].id, late.id]);
    expect(after.data[0].name).toBe('Firm 5');
    expect(after.pagination.total).toBe(4);
    // Emptied, the page still answers the total counted anew.
    for (const r of after.data) expect((await own.live.delete(`/v1/companies/${r.id}`)).statusCode).toBe(200);
    const empty = (await search(own.live, 'companies', second)).json();
    expect(empty.data).toEqual([]);
    expect(empty.pagination.total).toBe(2);
  });
});

describe('full text stays current and spans objects', () => {
  it('follows creates, updates and deletes, and GET /v1/search groups the best hits by object', async () => {
    const t = await tenant(app);
    const list = (await created(t.live, '/v1/lists', { name: 'People', type: 'contacts' })).id;
    const company = await created(t.live, '/v1/companies', { name: 'Zephyr Analytics', domain: 'zephyr.example', industry: 'Software' });
    const strong = await created(t.live, '/v1/contacts', { list_id: list, name: 'Zephyr Zephyrson', title: 'Zephyr lead', work_email: 'z@zephyr.example' });
    const weak = await created(t.live, '/v1/contacts', { list_id: list, name: 'Pat Doe', title: 'Office manager', work_email: 'pat@zephyr.example' });
    let res = await t.live.get('/v1/search?q=zeph&limit=5');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.companies.total).toBe(1);
    expect(res.json().data.companies.data[0].id).toBe(company.id);
    expect(res.json().data.contacts.total).toBe(2);
    expect(res.json().data.contacts.data.map((c: { id: string }) => c.id)).toEqual([strong.id, weak.id]);
    res = await t.live.get('/v1/search?q=zeph&limit=1');
    expect(res.json().data.contacts).toMatchObject({ total: 2, data: [{ id: strong.id }] });

    await t.live.patch(`/v1/contacts/${weak.id}`, { work_email: 'pat@other.example', name: 'Pat Quill' });
    expect((await search(t.live, 'contacts', { q: 'zephyr' })).json().pagination.total).toBe(1);
    expect((await search(t.live, 'contacts', { q: 'quil' })).json().data[0].id).toBe(weak.id);
    await t.live.delete(`/v1/contacts/${strong.id}`);
    expect((await search(t.live, 'contacts', { q: 'zephyr' })).json().pagination.total).toBe(0);
    expect((await t.live.get('/v1/search?q=%21')).statusCode).toBe(400);
    expect((await t.live.get('/v1/search')).statusCode).toBe(400);
  });

  it('indexes exactly the fields each definition declares', () => {
    const declared = Object.fromEntries(resources.filter((r) => r.search).map((r) => [r.table, r.search]));
    expect(declared).toEqual({ ...SEARCH_COLUMNS, deals: DEAL_SEARCH_COLUMNS, ...TASK_NOTE_SEARCH_COLUMNS, ...QUOTE_SEARCH_COLUMNS });
  });
});
