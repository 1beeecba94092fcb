// CSV exports through HTTP: filters, progress, the streamed file, and a round trip through an import.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp } from '../helpers/app.ts';
import { upload, waitFor } from '../helpers/imports.ts';

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
    const source = await tenant(app);
    const target = await tenant(app);
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

  it('exports exactly the contacts of a creation-time window', async () => {
    const t = await tenant(app);
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
    const source = await tenant(app);
    await source.live.post('/v1/companies', { name: 'Engines Ltd', domain: 'engines.example', employee_count: 250, industry: 'Software' });
    await source.live.post('/v1/companies', { name: 'Small Co', domain: 'small.example', employee_count: 5 });
    const csv = await exportCsv(source, { object: 'companies', filters: { min_employees: 100 } });
    expect(csv.trim().split('\r\n')).toHaveLength(2);
    const target = await tenant(app);
    const imported = await upload(app, target.live_token, { csv, fields: { object: 'companies' } });
    expect(imported.json().data.mapping).toMatchObject({ name: 'name', domain: 'domain', employee_count: 'employee_count' });
    await waitFor(app, target.live_token, `/v1/imports/${imported.json().data.id as string}`);
    const copy = (await target.live.get('/v1/companies')).json().data;
    const original = (await source.live.get('/v1/companies?min_employees=100')).json().data;
    expect(comparable(copy)).toEqual(comparable(original));
  });

  it('refuses bad filters, hides exports from other tenants, and 409s a download before completion', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const bad = await t.live.post('/v1/exports', { object: 'companies', filters: { min_employees: 'many' } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'filters', 'min_employees']);
    expect((await t.live.post('/v1/exports', { object: 'companies', filters: { limit: 5 } })).statusCode).toBe(422);
    const id = (await t.live.post('/v1/exports', { object: 'companies' })).json().data.id as string;
    expect((await other.live.get(`/v1/exports/${id}`)).json()).toEqual({ detail: 'Export not found' });
    expect((await other.live.get(`/v1/exports/${id}/file`)).statusCode).toBe(404);
    await waitFor(app, t.live_token, `/v1/exports/${id}`, ENDED);
    expect((await t.live.get('/v1/exports')).json().pagination.total).toBe(1);
  });
});
