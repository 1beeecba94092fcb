// Assert (upsert on a natural key) through HTTP: contacts by work e-mail then LinkedIn URL,
// companies by normalized domain, then a unique custom field (?match=); noop without an event or an
// updated_at move; batches with per-record outcomes; concurrent asserts; Idempotency-Key.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => app.close());

const put = (c: Client, url: string, body: unknown, headers?: Record<string, string>) => c('PUT', url, body, headers);

async function contactList(c: Client, name = 'People') {
  const res = await c.post('/v1/lists', { name, type: 'contacts' });
  expect(res.statusCode).toBe(201);
  return res.json().data.id as string;
}

const eventCount = async (c: Client, type: string) => (await c.get(`/v1/events?type=${type}&limit=200`)).json().pagination.total as number;

describe('assert one record', () => {
  it('creates a contact, then updates it by work e-mail (any case), then does nothing', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = await contactList(t.live);
    const created = await put(t.live, '/v1/contacts/assert', { list_id: list, work_email: 'Ada@Example.com', title: 'Engineer' });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ action: 'created', data: { work_email: 'ada@example.com', title: 'Engineer' } });
    const id = created.json().data.id;

    const updated = await put(t.live, '/v1/contacts/assert', { list_id: list, work_email: 'ADA@example.COM', title: 'CTO' });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({ action: 'updated', data: { id, title: 'CTO' } });
    expect(await eventCount(t.live, 'contact.updated')).toBe(1);
    const [event] = (await t.live.get('/v1/events?type=contact.updated')).json().data;
    expect(event.previous_attributes).toMatchObject({ title: 'Engineer' });

    const before = (await t.live.get(`/v1/contacts/${id}`)).json().data;
    const noop = await put(t.live, '/v1/contacts/assert', { list_id: list, work_email: 'ada@example.com', title: 'CTO', tags: [] });
    expect(noop.statusCode).toBe(200);
    expect(noop.json()).toEqual({ action: 'noop', data: before });
    expect(await eventCount(t.live, 'contact.updated')).toBe(1);
    expect((await t.live.get('/v1/contacts')).json().pagination.total).toBe(1);
  });

  it('matches by LinkedIn URL when there is no e-mail match, and by ?match= on a unique custom field', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = await contactList(t.live);
    await t.live.post('/v1/fields', { object: 'contacts', name: 'crm_id', data_type: 'text', unique: true });
    const a = (await put(t.live, '/v1/contacts/assert', { list_id: list, linkedin_url: 'https://linkedin.com/in/ada', custom_fields: { crm_id: 'C1' } })).json().data;
    const byUrl = await put(t.live, '/v1/contacts/assert', { list_id: list, work_email: 'ada@example.com', linkedin_url: 'https://linkedin.com/in/ada' });
    expect(byUrl.json()).toMatchObject({ action: 'updated', data: { id: a.id, work_email: 'ada@example.com' } });
    const byCrm = await put(t.live, '/v1/contacts/assert?match=crm_id', { list_id: list, title: 'CEO', custom_fields: { crm_id: 'C1' } });
    expect(byCrm.statusCode, byCrm.body).toBe(200);
    expect(byCrm.json()).toMatchObject({ action: 'updated', data: { id: a.id, title: 'CEO' } });
    const fresh = await put(t.live, '/v1/contacts/assert?match=crm_id', { list_id: list, custom_fields: { crm_id: 'C2' } });
    expect(fresh.statusCode).toBe(201);

    const notUnique = await put(t.live, '/v1/contacts/assert?match=title', { list_id: list, work_email: 'x@example.com' });
    expect(notUnique.statusCode).toBe(422);
    expect(notUnique.json().detail[0].loc).toEqual(['query', 'match']);
    const keyless = await put(t.live, '/v1/contacts/assert', { list_id: list, title: 'No key' });
    expect(keyless.statusCode).toBe(422);
    expect((await put(t.live, '/v1/contacts/assert', { work_email: 'y@example.com' })).json().detail).toBe('list_id is required when creating contacts');
    expect((await put(t.live, '/v1/contacts/assert', { list_id: 'lst_missing', work_email: 'y@example.com' })).statusCode).toBe(404);
  });

  it('asserts companies by normalized domain', async () => {
    const t = await tenant(app, { sandbox: false });
    const created = await put(t.live, '/v1/companies/assert', { name: 'Acme', domain: 'https://www.Acme.com/about' });
    expect(created.statusCode, created.body).toBe(201);
    const again = await put(t.live, '/v1/companies/assert', { name: 'Acme', domain: 'acme.com' });
    expect(again.json()).toMatchObject({ action: 'noop', data: { id: created.json().data.id } });
    const renamed = await put(t.live, '/v1/companies/assert', { name: 'Acme Inc', domain: 'WWW.ACME.COM' });
    expect(renamed.json()).toMatchObject({ action: 'updated', data: { name: 'Acme Inc', domain: 'acme.com' } });
    expect((await t.live.get('/v1/companies')).json().pagination.total).toBe(1);
    // Another tenant asserting the same domain gets its own company.
    const other = await tenant(app, { sandbox: false });
    expect((await put(other.live, '/v1/companies/assert', { name: 'Acme', domain: 'acme.com' })).statusCode).toBe(201);
  });

  it('never creates two records for one key under concurrent asserts', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = await contactList(t.live);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => put(t.live, '/v1/contacts/assert', { list_id: list, work_email: `race${round}@example.com`, title: `T${i % 2}` })));
      expect(answers.every((a) => a.statusCode === 200 || a.statusCode === 201)).toBe(true);
      expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
      expect(new Set(answers.map((a) => a.json().data.id)).size).toBe(1);
    }
    const companies = await Promise.all(Array.from({ length: 8 }, () => put(t.live, '/v1/companies/assert', { name: 'Same', domain: 'same.example' })));
    expect(companies.filter((a) => a.statusCode === 201)).toHaveLength(1);
    expect((await t.live.get('/v1/companies')).json().pagination.total).toBe(1);
  });

  it('replays an assert sent again with the same Idempotency-Key', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = await contactList(t.live);
    const headers = { 'idempotency-key': 'assert-1' };
    const first = await put(t.live, '/v1/contacts/assert', { list_id: list, work_email: 'i@example.com' }, headers);
    const second = await put(t.live, '/v1/contacts/assert', { list_id: list, work_email: 'i@example.com' }, headers);
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
    const other = await put(t.live, '/v1/contacts/assert', { list_id: list, work_email: 'j@example.com' }, headers);
    expect(other.statusCode).toBe(422);
  });
});

describe('assert in a batch', () => {
  it('reports each record on its own and writes nothing of a failed one', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = await contactList(t.live);
    await t.live.post('/v1/fields', { object: 'contacts', name: 'crm_id', data_type: 'text', unique: true });
    const existing = (await t.live.post('/v1/contacts', { list_id: list, work_email: 'old@example.com', title: 'Old', custom_fields: { crm_id: 'TAKEN' } })).json().data;
    const same = (await t.live.post('/v1/contacts', { list_id: list, work_email: 'same@example.com' })).json().data;
    const res = await put(t.live, '/v1/contacts/assert/batch', {
      records: [
        { list_id: list, work_email: 'new@example.com', title: 'New' },
        { list_id: list, work_email: 'OLD@example.com', title: 'Changed' },
        { list_id: list, work_email: 'same@example.com' },
        { list_id: list, work_email: 'not-an-email' },
        { work_email: 'nolist@example.com' },
        { list_id: list, work_email: 'dup@example.com', custom_fields: { crm_id: 'TAKEN' } },
        { list_id: 'lst_missing', work_email: 'gone@example.com' },
        { list_id: list, work_email: 'new@example.com', title: 'Newer' },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({ total: 8, created: 1, updated: 2, noop: 1, failed: 4 });
    const created = data.results[0].id;
    expect(data.results).toEqual([
      { index: 0, action: 'created', id: created },
      { index: 1, action: 'updated', id: existing.id },
      { index: 2, action: 'noop', id: same.id },
      { index: 3, error: { status: 422, type: 'validation_error', detail: [expect.objectContaining({ loc: ['body', 'work_email'] })], param: 'work_email' } },
      { index: 4, error: { status: 400, type: 'bad_request', detail: 'list_id is required when creating contacts', param: 'list_id' } },
      { index: 5, error: { status: 409, type: 'conflict', detail: expect.stringContaining(existing.id) } },
      { index: 6, error: { status: 404, type: 'not_found', detail: 'List not found' } },
      { index: 7, action: 'updated', id: created },
    ]);
    const listed = (await t.live.get('/v1/contacts?limit=200')).json();
    expect(listed.pagination.total).toBe(3);
    expect(listed.data.map((c: { work_email: string }) => c.work_email).sort()).toEqual(['new@example.com', 'old@example.com', 'same@example.com']);
    expect((await t.live.get(`/v1/lists/${list}`)).json().data.member_count).toBe(3);
    expect(await eventCount(t.live, 'contact.created')).toBe(3);
    expect(await eventCount(t.live, 'contact.updated')).toBe(2);
  });

  it('gives each created contact its own list, company and suppression', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = await contactList(t.live);
    const leads = (await t.live.post('/v1/lists', { name: 'Leads', type: 'leads' })).json().data.id;
    const companiesList = (await t.live.post('/v1/lists', { name: 'Accounts', type: 'companies' })).json().data.id;
    const company = (await t.live.post('/v1/companies', { name: 'Acme', domain: 'acme.example' })).json().data;
    const suppressions = (await t.live.post('/v1/lists', { name: 'Blocked', type: 'suppressions' })).json().data.id;
    await t.live.post(`/v1/lists/${suppressions}/entries`, { values: ['blocked.example', 'me@private.example'] });
    const res = await put(t.live, '/v1/contacts/assert/batch', {
      records: [
        { list_id: list, work_email: 'a@acme.example' },
        { list_id: leads, work_email: 'b@blocked.example' },
        { list_id: companiesList, work_email: 'c@acme.example' },
        { list_id: list, work_email: 'd@other.example', personal_email: 'me@private.example' },
        { list_id: leads, work_email: 'E@ACME.EXAMPLE' },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const { results } = res.json().data;
    expect(results[2]).toEqual({ index: 2, error: { status: 400, type: 'bad_request', detail: expect.stringMatching(/^Contacts can only be on lists of type/) } });
    const read = async (i: number) => (await t.live.get(`/v1/contacts/${results[i].id}`)).json().data;
    expect(await Promise.all([0, 1, 3, 4].map(async (i) => {
      const c = await read(i);
      return [c.list_id, c.company_id, c.suppressed];
    }))).toEqual([[list, company.id, false], [leads, null, true], [list, null, true], [leads, company.id, false]]);
    expect((await t.live.get(`/v1/lists/${list}`)).json().data.member_count).toBe(2);
    expect((await t.live.get(`/v1/lists/${leads}`)).json().data.member_count).toBe(2);
  });

  it('matches a record created earlier in the same batch by its natural key', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = await contactList(t.live);
    const res = await put(t.live, '/v1/contacts/assert/batch', {
      records: [
        { list_id: list, work_email: 'a@example.com', title: 'First' },
        { list_id: list, work_email: 'b@example.com' },
        { list_id: list, work_email: 'A@Example.com', title: 'Second' },
        { list_id: list, linkedin_url: 'https://www.linkedin.com/in/c' },
        { list_id: list, linkedin_url: 'https://www.linkedin.com/in/c', title: 'Third' },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const { results } = res.json().data;
    expect(results.map((x: { action: string }) => x.action)).toEqual(['created', 'created', 'updated', 'created', 'updated']);
    expect([results[2].id, results[4].id]).toEqual([results[0].id, results[3].id]);
    expect((await t.live.get(`/v1/contacts/${results[0].id}`)).json().data.title).toBe('Second');
    expect((await t.live.get('/v1/contacts')).json().pagination.total).toBe(3);
    expect((await t.live.get(`/v1/lists/${list}`)).json().data.member_count).toBe(3);
  });

  it('matches a record created earlier in the same batch by ?match=', async () => {
    const t = await tenant(app, { sandbox: false });
    await t.live.post('/v1/fields', { object: 'deals', name: 'crm_id', data_type: 'text', unique: true });
    const res = await put(t.live, '/v1/deals/assert/batch?match=crm_id', {
      records: [
        { name: 'First', custom_fields: { crm_id: 'D-1' } },
        { name: 'Other', custom_fields: { crm_id: 'D-2' } },
        { name: 'Renamed', custom_fields: { crm_id: 'D-1' } },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const { results } = res.json().data;
    expect(results.map((x: { action: string }) => x.action)).toEqual(['created', 'created', 'updated']);
    expect(results[2].id).toBe(results[0].id);
    expect((await t.live.get(`/v1/deals/${results[0].id}`)).json().data.name).toBe('Renamed');
    expect((await t.live.get('/v1/deals')).json().pagination.total).toBe(2);
  });

  it('refuses more than 100 records with 400, and asserts 100 companies in one request', async () => {
    const t = await tenant(app, { sandbox: false });
    const tooMany = await put(t.live, '/v1/companies/assert/batch', { records: Array.from({ length: 101 }, (_, i) => ({ name: `C${i}`, domain: `c${i}.example` })) });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().detail).toMatch(/at most 100/);
    expect((await put(t.live, '/v1/companies/assert/batch', { records: [] })).statusCode).toBe(422);
    const records = Array.from({ length: 100 }, (_, i) => ({ name: `C${i}`, domain: `c${i}.example` }));
    const first = await put(t.live, '/v1/companies/assert/batch', { records });
    expect(first.json().data).toMatchObject({ total: 100, created: 100, failed: 0 });
    const second = await put(t.live, '/v1/companies/assert/batch', { records });
    expect(second.json().data).toMatchObject({ total: 100, noop: 100 });
    expect((await t.live.get('/v1/companies')).json().pagination.total).toBe(100);
  });
});
