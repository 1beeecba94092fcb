// CSV exports through HTTP: filters or a search, progress, the streamed file, a round trip through an
// import, and an export whose job cannot finish.
import { parse } from 'csv-parse/sync';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_ATTEMPTS } from '../../src/platform/jobs/kinds.ts';
import { exportJob } from '../../src/resources/exports/exports.jobs.ts';
import { tenant, testApp } from '../helpers/app.ts';
import { upload, waitFor } from '../helpers/imports.ts';
import { jobsByHand } from '../helpers/jobs-by-hand.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => {
  await app.close();
});

type T = Awaited<ReturnType<typeof tenant>>;
const ENDED = new Set(['completed', 'failed']);

async function exportCsv(t: T, body: object): Promise<string> {
  const res = await t.live.post('/v1/exports', body);
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().data.id as string;
  expect(res.json().data).toMatchObject({ status: 'queued', download_url: null });
  expect(res.json().data.filters).toEqual((body as { filters?: object }).filters ?? {});
  expect(res.json().data.search).toEqual((body as { search?: object }).search ?? null);
  const done = await waitFor(app, t.live_token, `/v1/exports/${id}`, ENDED);
  expect(done).toMatchObject({ status: 'completed', download_url: `/v1/exports/${id}/file` });
  const file = await t.live.get(`/v1/exports/${id}/file`);
  expect(file.statusCode).toBe(200);
  expect(file.headers['content-type']).toMatch(/^text\/csv/);
  return file.body;
}

const comparable = (records: Array<Record<string, unknown>>) => records
  .map(({ id: _id, created_at: _c, updated_at: _u, list_id: _l, company_id: _cid, ...rest }) => rest)
  .sort((a, b) => String(a.name).localeCompare(String(b.name)));

describe('exports', () => {
  it('exports contacts matching filters, and the file imports back as the same records', async () => {
    const source = await tenant(app, { sandbox: false });
    const target = await tenant(app, { sandbox: false });
    for (const t of [source, target]) expect((await t.live.post('/v1/fields', { object: 'contacts', name: 'plan', data_type: 'text' })).statusCode).toBe(201);
    const from = (await source.live.post('/v1/lists', { name: 'From', type: 'contacts' })).json().data.id as string;
    const elsewhere = (await source.live.post('/v1/lists', { name: 'Elsewhere', type: 'contacts' })).json().data.id as string;
    await source.live.post('/v1/contacts', { list_id: from, name: 'Ada Lovelace', work_email: 'ada@example.com', title: 'CTO, Engines', tags: ['vip', 'q4'], custom_fields: { plan: 'pro' } });
    await source.live.post('/v1/contacts', { list_id: from, name: 'Grace Hopper', work_email: 'grace@example.com', city: 'New "York"\nNY' });
    await source.live.post('/v1/contacts', { list_id: elsewhere, name: 'Not exported', work_email: 'no@example.com' });

    const csv = await exportCsv(source, { object: 'contacts', filters: { list_id: from } });
    expect(csv.split('\r\n')[0]).toMatch(/^id,list_id,name,.*,custom_fields\.plan,created_at,updated_at$/);
    expect(csv).not.toContain('no@example.com');

    const into = (await target.live.post('/v1/lists', { name: 'Into', type: 'contacts' })).json().data.id as string;
    const imported = await upload(app, target.live_token, { csv, fields: { object: 'contacts', list_id: into, mapping: { list_id: null, work_email: 'work_email', name: 'name', title: 'title', city: 'city', tags: 'tags', 'custom_fields.plan': 'custom_fields.plan' } } });
    expect(imported.statusCode, imported.body).toBe(201);
    expect(await waitFor(app, target.live_token, `/v1/imports/${imported.json().data.id as string}`)).toMatchObject({ status: 'completed', created: 2 });

    const original = (await source.live.get(`/v1/contacts?list_id=${from}`)).json().data;
    const copy = (await target.live.get(`/v1/contacts?list_id=${into}`)).json().data;
    expect(comparable(copy)).toEqual(comparable(original));
  });

  it('writes text a spreadsheet would read as a formula behind a quote, keeps numbers, and the file imports back exactly', async () => {
    const source = await tenant(app, { sandbox: false });
    const target = await tenant(app, { sandbox: false });
    for (const t of [source, target]) expect((await t.live.post('/v1/fields', { object: 'contacts', name: 'balance', data_type: 'number' })).statusCode).toBe(201);
    const from = (await source.live.post('/v1/lists', { name: 'Formulas', type: 'contacts' })).json().data.id as string;
    // Each first character a spreadsheet reads as a formula, a value already escaped, and plain text.
    const names = ['=HYPERLINK("http://x","c")', '+1+1', '-2+3', '@SUM(A1)', '\t=1+1', '\r=1+1', "'=A1", "''+1", 'Ada'];
    for (const [i, name] of names.entries()) {
      const made = await source.live.post('/v1/contacts', { list_id: from, name, work_email: `p${i}@example.com`, phone: '+44 20 7946 0000', tags: ['-vip'], custom_fields: { balance: -5 - i } });
      expect([made.statusCode, made.json().data?.name], made.body).toEqual([201, name]);
    }
    const csv = await exportCsv(source, { object: 'contacts', filters: { list_id: from } });
    const [header, ...rows] = parse(csv) as string[][];
    const column = (name: string) => rows.map((row) => row[header.indexOf(name)]).sort();
    expect(column('name')).toEqual(names.map((n) => (n === 'Ada' ? n : `'${n}`)).sort());
    expect(new Set(column('phone'))).toEqual(new Set(["'+442079460000"]));
    expect(new Set(column('tags'))).toEqual(new Set(["'-vip"]));
    // A number is data, not a formula: written as it is.
    expect(column('custom_fields.balance')).toEqual(names.map((_, i) => String(-5 - i)).sort());
    for (const row of rows) for (const cell of row) expect(cell).not.toMatch(/^[=+@\t\r]|^-(?!\d+$)/);

    const into = (await target.live.post('/v1/lists', { name: 'Into', type: 'contacts' })).json().data.id as string;
    const imported = await upload(app, target.live_token, { csv, fields: { object: 'contacts', list_id: into, mapping: { list_id: null, name: 'name', work_email: 'work_email', phone: 'phone', tags: 'tags', 'custom_fields.balance': 'custom_fields.balance' } } });
    expect(imported.statusCode, imported.body).toBe(201);
    expect(await waitFor(app, target.live_token, `/v1/imports/${imported.json().data.id as string}`)).toMatchObject({ status: 'completed', created: names.length });
    const copy = (await target.live.get(`/v1/contacts?list_id=${into}&limit=100`)).json().data as Array<Record<string, unknown>>;
    const original = (await source.live.get(`/v1/contacts?list_id=${from}&limit=100`)).json().data as Array<Record<string, unknown>>;
    expect(comparable(copy)).toEqual(comparable(original));
  });

  it('exports exactly the contacts of a creation-time window', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = (await t.live.post('/v1/lists', { name: 'Window', type: 'contacts' })).json().data.id as string;
    const made: Array<{ id: string; created_at: number }> = [];
    for (const name of ['One', 'Two', 'Three']) made.push((await t.live.post('/v1/contacts', { list_id: list, name })).json().data);
    const exportedIds = async (filters: object) => (await exportCsv(t, { object: 'contacts', filters })).trim().split('\r\n').slice(1).map((line) => line.split(',')[0]).sort();
    const created = made.map((c) => c.created_at);
    const from = Math.min(...created);
    const idsWhere = (keep: (at: number) => boolean) => made.filter((c) => keep(c.created_at)).map((c) => c.id).sort();
    expect(await exportedIds({ created_after: from, created_before: from + 1 })).toEqual(idsWhere((at) => at === from));
    expect(await exportedIds({ created_after: from })).toEqual(idsWhere(() => true));
    expect(await exportedIds({ created_before: from })).toEqual([]);
  });

  it('exports companies, with progress and a round trip', async () => {
    const source = await tenant(app, { sandbox: false });
    await source.live.post('/v1/companies', { name: 'Engines Ltd', domain: 'engines.example', employee_count: 250, industry: 'Software' });
    await source.live.post('/v1/companies', { name: 'Small Co', domain: 'small.example', employee_count: 5 });
    const csv = await exportCsv(source, { object: 'companies', filters: { min_employees: 100 } });
    expect(csv.trim().split('\r\n')).toHaveLength(2);
    const target = await tenant(app, { sandbox: false });
    const imported = await upload(app, target.live_token, { csv, fields: { object: 'companies' } });
    expect(imported.json().data.mapping).toMatchObject({ name: 'name', domain: 'domain', employee_count: 'employee_count' });
    await waitFor(app, target.live_token, `/v1/imports/${imported.json().data.id as string}`);
    const copy = (await target.live.get('/v1/companies')).json().data;
    const original = (await source.live.get('/v1/companies?min_employees=100')).json().data;
    expect(comparable(copy)).toEqual(comparable(original));
  });

  it('refuses bad filters, hides exports from other tenants, and 409s a download before completion', async () => {
    const t = await tenant(app, { sandbox: false });
    const other = await tenant(app, { sandbox: false });
    const bad = await t.live.post('/v1/exports', { object: 'companies', filters: { min_employees: 'many' } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'filters', 'min_employees']);
    expect((await t.live.post('/v1/exports', { object: 'companies', filters: { limit: 5 } })).statusCode).toBe(422);
    // A value of another JSON type is refused, never converted: a filter takes its type or text as the query string gives it.
    for (const [object, filters, type] of [
      ['contacts', { list_id: 5 }, 'string_type'], ['contacts', { list_id: true }, 'string_type'], ['contacts', { title: null }, 'string_type'],
      ['companies', { min_employees: true }, 'integer_type'], ['companies', { min_employees: null }, 'integer_type'],
    ] as const) {
      const mistyped = await t.live.post('/v1/exports', { object, filters });
      expect(mistyped.statusCode, JSON.stringify(filters)).toBe(422);
      expect(mistyped.json().detail[0]).toMatchObject({ loc: ['body', 'filters', Object.keys(filters)[0]], type });
    }
    // A custom field that is not defined is refused at once, as the list route refuses it.
    const unknown = await t.live.post('/v1/exports', { object: 'contacts', filters: { 'custom_fields.nope': 'x' } });
    expect(unknown.statusCode, unknown.body).toBe(422);
    expect(unknown.json().detail[0].loc).toEqual(['body', 'filters', 'custom_fields.nope']);
    const id = (await t.live.post('/v1/exports', { object: 'companies' })).json().data.id as string;
    expect((await other.live.get(`/v1/exports/${id}`)).json()).toEqual({ type: 'not_found', detail: 'Export not found' });
    expect((await other.live.get(`/v1/exports/${id}/file`)).statusCode).toBe(404);
    await waitFor(app, t.live_token, `/v1/exports/${id}`, ENDED);
    expect((await t.live.get('/v1/exports')).json().pagination.total).toBe(1);
  });

  it('exports the matches of a search in its order, across pages of the file', async () => {
    const t = await tenant(app, { sandbox: false });
    expect((await t.live.post('/v1/fields', { object: 'contacts', name: 'score', data_type: 'number' })).statusCode).toBe(201);
    const list = (await t.live.post('/v1/lists', { name: 'Scored', type: 'contacts' })).json().data.id as string;
    // 1,100 contacts, scores with ties, two in three engineers: more matches than a page of the export (500).
    for (let batch = 0; batch < 11; batch++) {
      const records = Array.from({ length: 100 }, (_, k) => {
        const i = batch * 100 + k;
        return { list_id: list, first_name: `P${i}`, work_email: `p${i}@example.com`, title: i % 3 === 0 ? 'Account Executive' : 'Software Engineer', custom_fields: { score: i % 37 } };
      });
      const res = await t.live('PUT', '/v1/contacts/assert/batch', { records });
      expect(res.json().data.created, res.body).toBe(100);
    }
    const search = { filters: [{ field: 'title', operator: 'contains', value: 'engineer' }], sort: [{ field: 'custom_fields.score', direction: 'desc' }] };
    const walked: string[] = [];
    for (let cursor: string | null = null; ;) {
      const page = (await t.live.post('/v1/search/contacts', { ...search, limit: 200, ...(cursor ? { cursor } : {}) })).json() as { data: Array<{ id: string }>; next_cursor: string | null };
      walked.push(...page.data.map((c) => c.id));
      cursor = page.next_cursor;
      if (!cursor) break;
    }
    expect(walked).toHaveLength(733);
    const csv = await exportCsv(t, { object: 'contacts', search });
    expect(csv.trim().split('\r\n').slice(1).map((line) => line.split(',')[0])).toEqual(walked);
    const exports = (await t.live.get('/v1/exports')).json().data;
    expect(exports[0]).toMatchObject({ filters: {}, search, rows_total: 733, rows_processed: 733 });

    // Full text too: the file holds exactly the search's matches.
    const byWords = await exportCsv(t, { object: 'contacts', search: { q: 'p1099' } });
    expect(byWords.trim().split('\r\n').slice(1).map((line) => line.split(',')[0])).toEqual((await t.live.post('/v1/search/contacts', { q: 'p1099' })).json().data.map((c: { id: string }) => c.id));
  });

  it('checks a search as the search route does, at its place under search', async () => {
    const t = await tenant(app, { sandbox: false });
    const post = (body: object) => t.live.post('/v1/exports', { object: 'contacts', ...body });
    const both = await post({ filters: { title: 'VP' }, search: { q: 'ada' } });
    expect([both.statusCode, both.json().detail[0]]).toEqual([422, { loc: ['body', 'search'], msg: 'Give filters or search, not both', type: 'value_error' }]);
    const paged = await post({ search: { q: 'ada', limit: 10, cursor: 'x' } });
    expect(paged.statusCode).toBe(422);
    expect(paged.json().detail.map((e: { loc: string[] }) => e.loc)).toEqual([['body', 'search', 'limit'], ['body', 'search', 'cursor']]);
    const shape = await post({ search: { filters: 'title' } });
    expect([shape.statusCode, shape.json().detail[0].loc]).toEqual([422, ['body', 'search', 'filters']]);
    const value = await post({ search: { filters: [{ field: 'created_at', operator: 'gte', value: 'soon' }] } });
    expect([value.statusCode, value.json().detail[0].loc]).toEqual([422, ['body', 'search', 'filters', '0', 'value']]);
    const unknown = await post({ search: { filters: [{ field: 'custom_fields.nope', operator: 'eq', value: 1 }] } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().detail).toContain('custom_fields.nope');
    const companies = await t.live.post('/v1/exports', { object: 'companies', search: { filters: [{ field: 'title', operator: 'contains', value: 'x' }] } });
    expect([companies.statusCode, companies.json().detail]).toEqual([400, expect.stringContaining('title')]);
    expect((await t.live.get('/v1/exports')).json().pagination.total).toBe(0);
  });
});

describe('exports run by a worker', () => {
  let quiet: FastifyInstance;
  jobsByHand({ file: () => app, rebuilt: (a) => (app = a), quiet: (a) => (quiet = a) });

  const contextFor = (orgId: string, attempt: number) => ({
    database: quiet.services.database, config: quiet.services.config, signal: new AbortController().signal,
    job: { id: 'job_test', orgId, mode: 'live' as const, attempt, ranBefore: false },
  }) as unknown as Parameters<typeof exportJob.run>[1];
  const failedEvents = async (t: T, id: string) => ((await t.live.get('/v1/events?type=export.failed')).json().data as Array<{ data: { object: { id: string } } }>)
    .filter((e) => e.data.object.id === id);

  it('fails at once, saying why, when its search or filters no longer apply', async () => {
    const t = await tenant(quiet, { sandbox: false });
    const field = (await t.live.post('/v1/fields', { object: 'contacts', name: 'tier', data_type: 'text' })).json().data.id as string;
    const bySearch = (await t.live.post('/v1/exports', { object: 'contacts', search: { filters: [{ field: 'custom_fields.tier', operator: 'eq', value: 'gold' }] } })).json().data.id as string;
    const byFilters = (await t.live.post('/v1/exports', { object: 'contacts', filters: { 'custom_fields.tier': 'gold' } })).json().data.id as string;
    expect((await t.live.delete(`/v1/fields/${field}`)).statusCode).toBe(200);
    for (const id of [bySearch, byFilters]) {
      await expect(exportJob.run({ export_id: id }, contextFor(t.org_id, 1))).rejects.toThrow();
      const ended = (await t.live.get(`/v1/exports/${id}`)).json().data;
      expect(ended).toMatchObject({ status: 'failed', download_url: null, error: expect.stringMatching(/^The export no longer applies: .*custom_fields\.tier/) });
      expect((await t.live.get(`/v1/exports/${id}/file`)).statusCode).toBe(409);
      expect(await failedEvents(t, id)).toHaveLength(1);
    }
  });

  it('ends failed, not running for good, when its job fails its last attempt', async () => {
    const t = await tenant(quiet, { sandbox: false });
    const id = (await t.live.post('/v1/exports', { object: 'contacts' })).json().data.id as string;
    // A stored export its job cannot run: an object no longer exportable.
    await quiet.services.database.db.updateTable('exports').set({ object: 'gone' }).where('org_id', '=', t.org_id).where('id', '=', id).execute();
    await expect(exportJob.run({ export_id: id }, contextFor(t.org_id, 1))).rejects.toThrow();
    expect((await t.live.get(`/v1/exports/${id}`)).json().data.status).toBe('queued');
    await expect(exportJob.run({ export_id: id }, contextFor(t.org_id, DEFAULT_MAX_ATTEMPTS))).rejects.toThrow();
    expect((await t.live.get(`/v1/exports/${id}`)).json().data).toMatchObject({ status: 'failed', error: `The export stopped after ${DEFAULT_MAX_ATTEMPTS} failed attempts` });
    expect(await failedEvents(t, id)).toHaveLength(1);
  });
});
