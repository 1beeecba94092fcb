// Companies through HTTP: fields and normalization, the unique domain (also under concurrent
// creation), filters, paging, and the contact ↔ company links kept from both sides.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => app.close());

type Tenant = Awaited<ReturnType<typeof tenant>>;

async function createCompany(c: Client, body: Record<string, unknown>) {
  const res = await c.post('/v1/companies', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

async function createContact(c: Client, listId: string, workEmail: string | null) {
  const res = await c.post('/v1/contacts', { list_id: listId, work_email: workEmail });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

async function contactList(c: Client) {
  const res = await c.post('/v1/lists', { name: 'People', type: 'contacts' });
  expect(res.statusCode).toBe(201);
  return res.json().data.id as string;
}

const companyOf = async (c: Client, contactId: string) => (await c.get(`/v1/contacts/${contactId}`)).json().data.company_id;
const eventsOf = async (c: Client, type: string) => (await c.get(`/v1/events?type=${type}`)).json().data;

/** Every id of a listing, walked with cursors. */
async function walk(c: Client, path: string, limit: number) {
  const ids: string[] = [];
  let url = `${path}${path.includes('?') ? '&' : '?'}limit=${limit}`;
  for (let i = 0; i < 20; i++) {
    const body = (await c.get(url)).json();
    ids.push(...body.data.map((r: { id: string }) => r.id));
    if (!body.pagination.has_next) {
      expect(body.next_cursor).toBeNull();
      return { ids, total: body.pagination.total };
    }
    url = `${path}${path.includes('?') ? '&' : '?'}limit=${limit}&cursor=${encodeURIComponent(body.pagination.next_cursor)}`;
  }
  throw new Error('too many pages');
}

describe('companies', () => {
  it('creates a company with every field, normalizes the domain and reads it back', async () => {
    const t = await tenant(app);
    const body = {
      name: 'Analytical Engines', domain: '  HTTPS://www.Example.COM:443/about?x=1 ', industry: 'Software', employee_count: 250,
      annual_revenue: 12_000_000, city: 'London', country: 'GB', linkedin_url: 'https://www.linkedin.com/company/ae',
      description: 'Machines', tags: ['target'],
    };
    const company = await createCompany(t.live, body);
    expect(company).toMatchObject({ ...body, domain: 'example.com', contact_count: 0 });
    expect(company.id).toMatch(/^cmp_[0-9A-Z]{26}$/);
    expect(company.created_at).toBe(company.updated_at);
    expect(Math.abs(company.created_at - Date.now() / 1000)).toBeLessThan(60);

    const read = await t.live.get(`/v1/companies/${company.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toEqual(company);

    const minimal = await createCompany(t.live, { name: 'Bare' });
    expect(minimal).toMatchObject({ domain: null, industry: null, employee_count: null, annual_revenue: null, tags: [], contact_count: 0 });

    const [created] = await eventsOf(t.live, 'company.created');
    expect(created.data.object).toEqual(minimal);
  });

  it('refuses a missing name, a bad domain and bad numbers', async () => {
    const t = await tenant(app);
    const missing = await t.live.post('/v1/companies', { domain: 'example.com' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ type: 'bad_request', detail: 'name is required', param: 'name' });

    for (const domain of ['not a domain', 'localhost', 'https://', 'ada@example.com', 'exa_mple.com']) {
      const res = await t.live.post('/v1/companies', { name: 'X', domain });
      expect(res.statusCode, domain).toBe(422);
      expect(res.json().detail[0]).toMatchObject({ loc: ['body', 'domain'], type: 'value_error.domain' });
    }
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ employee_count: -1 }, 'employee_count'], [{ employee_count: 'many' }, 'employee_count'],
      [{ annual_revenue: 1.5 }, 'annual_revenue'], [{ annual_revenue: -5 }, 'annual_revenue'],
      [{ tags: 'vip' }, 'tags'], [{ extra: 1 }, 'extra'], [{ name: '' }, 'name'],
    ];
    for (const [fields, field] of cases) {
      const res = await t.live.post('/v1/companies', { name: 'X', ...fields });
      expect(res.statusCode, field).toBe(422);
      expect(res.json().detail[0].loc, field).toEqual(['body', field]);
    }
    expect((await t.live.get('/v1/companies')).json().pagination.total).toBe(0);
  });

  it('answers 409 naming the company that already has the domain, in any spelling', async () => {
    const t = await tenant(app);
    const first = await createCompany(t.live, { name: 'Acme', domain: 'acme.io' });
    for (const domain of ['acme.io', 'WWW.ACME.IO', 'http://acme.io/contact']) {
      const res = await t.live.post('/v1/companies', { name: 'Acme again', domain });
      expect(res.statusCode, domain).toBe(409);
      expect(res.json().detail).toContain(first.id);
    }
    // The domain is unique per organization and mode, not globally.
    await createCompany(t.test, { name: 'Acme', domain: 'acme.io' });
    const other = await tenant(app);
    await createCompany(other.live, { name: 'Acme', domain: 'acme.io' });
    // Companies without a domain never conflict.
    await createCompany(t.live, { name: 'No domain 1' });
    await createCompany(t.live, { name: 'No domain 2' });
    expect((await t.live.get('/v1/companies')).json().pagination.total).toBe(3);
  });

  it('lets exactly one of two concurrent creations of one domain win', async () => {
    const t = await tenant(app);
    const results = await Promise.all([1, 2, 3].map((n) => t.live.post('/v1/companies', { name: `Racer ${n}`, domain: 'race.example' })));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([201, 409, 409]);
    const winner = results.find((r) => r.statusCode === 201)!.json().data;
    for (const loser of results.filter((r) => r.statusCode === 409)) expect(loser.json().detail).toContain(winner.id);
    const listed = (await t.live.get('/v1/companies?domain=race.example')).json();
    expect(listed.data.map((c: { id: string }) => c.id)).toEqual([winner.id]);
    expect((await t.live.get('/v1/companies')).json().pagination.total).toBe(1);
  });

  it('updates the fields given, records the previous values, and refuses an empty or conflicting update', async () => {
    const t = await tenant(app);
    const company = await createCompany(t.live, { name: 'Old name', domain: 'one.example', industry: 'Retail', city: 'Paris' });
    const taken = await createCompany(t.live, { name: 'Holder', domain: 'two.example' });

    const res = await t.live.patch(`/v1/companies/${company.id}`, { name: 'New name', city: null, employee_count: 40, tags: ['a', 'b'] });
    expect(res.statusCode).toBe(200);
    const updated = res.json().data;
    expect(updated).toMatchObject({ id: company.id, name: 'New name', city: null, employee_count: 40, tags: ['a', 'b'], industry: 'Retail', domain: 'one.example' });
    expect((await t.live.get(`/v1/companies/${company.id}`)).json().data).toEqual(updated);
    const [event] = await eventsOf(t.live, 'company.updated');
    expect(event.data.object).toEqual(updated);
    expect(event.previous_attributes).toEqual({ name: 'Old name', city: 'Paris', employee_count: null, tags: [] });

    const empty = await t.live.patch(`/v1/companies/${company.id}`, {});
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toEqual({ type: 'bad_request', detail: 'No fields to update' });

    const conflict = await t.live.patch(`/v1/companies/${company.id}`, { domain: 'https://www.two.example' });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().detail).toContain(taken.id);

    const same = await t.live.patch(`/v1/companies/${company.id}`, { domain: 'WWW.one.example' });
    expect(same.statusCode).toBe(200);
    expect(same.json().data.domain).toBe('one.example');

    const bad = await t.live.patch(`/v1/companies/${company.id}`, { domain: 'nope' });
    expect(bad.statusCode).toBe(422);

    const unknown = await t.live.patch('/v1/companies/cmp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', { name: 'x' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ type: 'not_found', detail: 'Company not found' });
  });

  it('deletes a company; afterwards it is 404 everywhere and the total drops', async () => {
    const t = await tenant(app);
    const company = await createCompany(t.live, { name: 'Doomed', domain: 'doomed.example' });
    await createCompany(t.live, { name: 'Stays' });
    expect((await t.live.get('/v1/companies')).json().pagination.total).toBe(2);

    const res = await t.live.delete(`/v1/companies/${company.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { id: company.id, deleted: true } });
    const [event] = await eventsOf(t.live, 'company.deleted');
    expect(event.data.object).toEqual(company);

    for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'x' }], ['DELETE', undefined]] as const) {
      const again = await t.live(method, `/v1/companies/${company.id}`, body);
      expect(again.statusCode, method).toBe(404);
      expect(again.json()).toEqual({ type: 'not_found', detail: 'Company not found' });
    }
    expect((await t.live.get('/v1/companies')).json().pagination.total).toBe(1);
    // The domain is free again.
    await createCompany(t.live, { name: 'Reborn', domain: 'doomed.example' });
  });

  it('answers another organization or mode exactly like a missing company', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const company = await createCompany(t.live, { name: 'Private', domain: 'private.example' });
    for (const c of [other.live, other.test, t.test]) {
      for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'x' }], ['DELETE', undefined]] as const) {
        const res = await c(method, `/v1/companies/${company.id}`, body);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({ type: 'not_found', detail: 'Company not found' });
      }
    }
    expect((await other.live.get('/v1/companies')).json().data).toEqual([]);
    expect((await t.live.get(`/v1/companies/${company.id}`)).json().data.name).toBe('Private');
  });

  it('filters by name, domain, industry, country and employee range, with exact totals', async () => {
    const t = await tenant(app);
    const a = await createCompany(t.live, { name: 'Acme Rockets', domain: 'acme.io', industry: 'Aerospace', country: 'US', employee_count: 500 });
    const b = await createCompany(t.live, { name: 'ACME Foods', domain: 'acmefoods.com', industry: 'Food', country: 'US', employee_count: 50 });
    const c = await createCompany(t.live, { name: 'Bakery 100%', domain: 'bakery.fr', industry: 'Food', country: 'FR', employee_count: 8 });
    const d = await createCompany(t.live, { name: 'Unknown size', industry: 'Food', country: 'FR' });

    const ids = async (query: string) => {
      const body = (await t.live.get(`/v1/companies?${query}`)).json();
      expect(body.pagination.total, query).toBe(body.data.length);
      return body.data.map((r: { id: string }) => r.id).sort();
    };
    const sorted = (...rows: Array<{ id: string }>) => rows.map((r) => r.id).sort();
    expect(await ids('name=acme')).toEqual(sorted(a, b));
    expect(await ids('name=ROCKET')).toEqual(sorted(a));
    expect(await ids('name=100%25')).toEqual(sorted(c));
    expect(await ids('name=_')).toEqual([]);
    expect(await ids('domain=acme.io')).toEqual(sorted(a));
    expect(await ids(`domain=${encodeURIComponent('https://WWW.Acme.io/')}`)).toEqual(sorted(a));
    expect(await ids('domain=acme')).toEqual([]);
    expect(await ids('industry=Food')).toEqual(sorted(b, c, d));
    expect(await ids('industry=food')).toEqual([]);
    expect(await ids('country=FR')).toEqual(sorted(c, d));
    expect(await ids('min_employees=50')).toEqual(sorted(a, b));
    expect(await ids('max_employees=50')).toEqual(sorted(b, c));
    expect(await ids('min_employees=10&max_employees=499')).toEqual(sorted(b));
    expect(await ids('industry=Food&country=US')).toEqual(sorted(b));
    expect(await ids('')).toEqual(sorted(a, b, c, d));

    const bad = await t.live.get('/v1/companies?min_employees=-1');
    expect(bad.statusCode).toBe(422);
    const unknownFilter = await t.live.get('/v1/companies?size=big');
    expect(unknownFilter.statusCode).toBe(422);
  });

  it('pages through companies by cursor and by page number, newest first', async () => {
    const t = await tenant(app);
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await createCompany(t.live, { name: `Company ${i}`, industry: 'Paged' })).id);
    await createCompany(t.live, { name: 'Other', industry: 'Elsewhere' });
    const expected = [...created].sort().reverse();

    const walked = await walk(t.live, '/v1/companies?industry=Paged', 2);
    expect(walked).toEqual({ ids: expected, total: 5 });

    const pages = [];
    for (const page of [1, 2, 3]) {
      const body = (await t.live.get(`/v1/companies?industry=Paged&limit=2&page=${page}`)).json();
      expect(body.pagination).toMatchObject({ page, limit: 2, total: 5, has_next: page < 3 });
      pages.push(...body.data.map((r: { id: string }) => r.id));
    }
    expect(pages).toEqual(expected);

    const all = (await t.live.get('/v1/companies?limit=200')).json();
    expect(all.pagination.total).toBe(6);

    // A cursor is bound to its filters.
    const first = (await t.live.get('/v1/companies?industry=Paged&limit=2')).json();
    const foreign = await t.live.get(`/v1/companies?industry=Elsewhere&limit=2&cursor=${encodeURIComponent(first.next_cursor)}`);
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().type).toBe('bad_request');
  });

  describe('links to contacts', () => {
    async function setup(): Promise<Tenant & { listId: string }> {
      const t = await tenant(app);
      return { ...t, listId: await contactList(t.live) };
    }

    it('links existing contacts of the domain when the company is created, and new ones as they come', async () => {
      const t = await setup();
      const before = await createContact(t.live, t.listId, 'ada@acme.io');
      const stranger = await createContact(t.live, t.listId, 'bob@other.io');
      const noEmail = await createContact(t.live, t.listId, null);
      expect(before.company_id).toBeNull();

      const company = await createCompany(t.live, { name: 'Acme', domain: 'www.acme.io' });
      expect(company.contact_count).toBe(1);
      expect(await companyOf(t.live, before.id)).toBe(company.id);
      expect(await companyOf(t.live, stranger.id)).toBeNull();
      expect(await companyOf(t.live, noEmail.id)).toBeNull();

      const after = await createContact(t.live, t.listId, 'Grace@ACME.io');
      expect(after.company_id).toBe(company.id);
      expect((await t.live.get(`/v1/companies/${company.id}`)).json().data.contact_count).toBe(2);

      // A contact that changes e-mail leaves; one that moves in joins.
      await t.live.patch(`/v1/contacts/${after.id}`, { work_email: 'grace@other.io' });
      await t.live.patch(`/v1/contacts/${stranger.id}`, { work_email: 'bob@acme.io' });
      expect((await t.live.get(`/v1/companies/${company.id}`)).json().data.contact_count).toBe(2);
      expect(await companyOf(t.live, after.id)).toBeNull();
      expect(await companyOf(t.live, stranger.id)).toBe(company.id);

      // Another mode's contacts of the same domain are not linked.
      const testList = await contactList(t.test);
      const testContact = await createContact(t.test, testList, 'ada@acme.io');
      expect(testContact.company_id).toBeNull();
      expect((await t.live.get(`/v1/companies/${company.id}`)).json().data.contact_count).toBe(2);
    });

    it('moves the links when the domain changes and drops them when it is cleared', async () => {
      const t = await setup();
      const oldOne = await createContact(t.live, t.listId, 'a@old.example');
      const newOne = await createContact(t.live, t.listId, 'b@new.example');
      const company = await createCompany(t.live, { name: 'Moving', domain: 'old.example' });
      expect(await companyOf(t.live, oldOne.id)).toBe(company.id);

      const moved = await t.live.patch(`/v1/companies/${company.id}`, { domain: 'new.example' });
      expect(moved.statusCode).toBe(200);
      expect(moved.json().data).toMatchObject({ domain: 'new.example', contact_count: 1 });
      expect(await companyOf(t.live, oldOne.id)).toBeNull();
      expect(await companyOf(t.live, newOne.id)).toBe(company.id);

      const cleared = await t.live.patch(`/v1/companies/${company.id}`, { domain: null });
      expect(cleared.json().data).toMatchObject({ domain: null, contact_count: 0 });
      expect(await companyOf(t.live, newOne.id)).toBeNull();

      // Other fields leave the links alone.
      await t.live.patch(`/v1/companies/${company.id}`, { domain: 'old.example' });
      await t.live.patch(`/v1/companies/${company.id}`, { name: 'Renamed' });
      expect(await companyOf(t.live, oldOne.id)).toBe(company.id);
    });

    it('unlinks the contacts of a deleted company', async () => {
      const t = await setup();
      const company = await createCompany(t.live, { name: 'Gone', domain: 'gone.example' });
      const contact = await createContact(t.live, t.listId, 'x@gone.example');
      expect(contact.company_id).toBe(company.id);
      expect((await t.live.delete(`/v1/companies/${company.id}`)).statusCode).toBe(200);
      expect(await companyOf(t.live, contact.id)).toBeNull();
      // A new company of the domain picks the contact up again.
      const again = await createCompany(t.live, { name: 'Back', domain: 'gone.example' });
      expect(await companyOf(t.live, contact.id)).toBe(again.id);
    });

    it('counts contacts for every company of a page', async () => {
      const t = await setup();
      const counts = { 'a.example': 3, 'b.example': 1, 'c.example': 0 } as Record<string, number>;
      for (const [domain, n] of Object.entries(counts)) {
        await createCompany(t.live, { name: domain, domain });
        for (let i = 0; i < n; i++) await createContact(t.live, t.listId, `p${i}@${domain}`);
      }
      const page = (await t.live.get('/v1/companies')).json();
      expect(Object.fromEntries(page.data.map((c: { domain: string; contact_count: number }) => [c.domain, c.contact_count]))).toEqual(counts);
    });
  });
});
