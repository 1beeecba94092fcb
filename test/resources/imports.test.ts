// CSV imports through HTTP with real multipart bodies, on the suite's store: mapping (given and
// guessed), modes, malformed rows, delimiters, cancel, isolation, resuming, URLs and the size limit.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawConnection } from '../helpers/raw-http.ts';
import { receiver } from '../helpers/receiver.ts';
import { databaseUrl, isPostgres, tenant, testApp } from '../helpers/app.ts';
import { upload, waitFor } from '../helpers/imports.ts';
import { DEFAULT_MAX_ATTEMPTS } from '../../src/platform/jobs/kinds.ts';
import { importJob, runImport } from '../../src/resources/imports/imports.jobs.ts';
import { jobsByHand } from '../helpers/jobs-by-hand.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => {
  await app.close();
});

type T = Awaited<ReturnType<typeof tenant>>;

async function list(t: T, type = 'contacts'): Promise<string> {
  const res = await t.live.post('/v1/lists', { name: `Imported ${type}`, type });
  expect(res.statusCode).toBe(201);
  return res.json().data.id as string;
}

async function contactsOf(t: T, listId: string) {
  const res = await t.live.get(`/v1/contacts?list_id=${listId}&limit=200`);
  expect(res.statusCode).toBe(200);
  return res.json().data as Array<Record<string, unknown>>;
}

async function importAndWait(t: T, given: Parameters<typeof upload>[2]) {
  const res = await upload(app, t.live_token, given);
  expect(res.statusCode, res.body).toBe(201);
  const created = res.json().data as Record<string, unknown>;
  return { created, done: await waitFor(app, t.live_token, `/v1/imports/${String(created.id)}`) };
}

describe('imports', () => {
  it('links each created contact as a create would: its company by domain and its suppression, a refused row between', async () => {
    const t = await tenant(app);
    const listId = await list(t);
    const company = (await t.live.post('/v1/companies', { name: 'Engines', domain: 'engines.example' })).json().data;
    const suppressions = await list(t, 'suppressions');
    expect((await t.live.post(`/v1/lists/${suppressions}/entries`, { values: ['blocked.example'] })).statusCode).toBe(201);
    const csv = 'Email,Name\nada@engines.example,Ada\nnot-an-address,Nobody\nbob@blocked.example,Bob\ncy@elsewhere.example,Cy\n';
    const { done } = await importAndWait(t, { csv, fields: { object: 'contacts', list_id: listId, mapping: { Email: 'work_email', Name: 'name' } } });
    expect(done).toMatchObject({ status: 'completed_with_errors', created: 3, failed: 1 });
    const people = Object.fromEntries((await contactsOf(t, listId)).map((p) => [p.name, [p.company_id, p.suppressed]]));
    expect(people).toEqual({ Ada: [company.id, false], Bob: [null, true], Cy: [null, false] });
    // The same as creating them one by one through the API.
    const one = (await t.live.post('/v1/contacts', { name: 'Dee', work_email: 'dee@engines.example', list_id: listId })).json().data;
    expect([one.company_id, one.suppressed]).toEqual([company.id, false]);
  });

  it('imports mapped contacts with custom fields onto a list, with progress events', async () => {
    const t = await tenant(app);
    expect((await t.live.post('/v1/fields', { object: 'contacts', name: 'plan', data_type: 'text' })).statusCode).toBe(201);
    const listId = await list(t);
    const csv = 'Email,Job Title,Plan,Full Name\nada@example.com,CTO,pro,Ada Lovelace\ngrace@example.com,Admiral,free,Grace Hopper\n';
    const mapping = { Email: 'work_email', 'Job Title': 'title', Plan: 'custom_fields.plan', 'Full Name': 'name' };
    const { created, done } = await importAndWait(t, { csv, fields: { object: 'contacts', list_id: listId, mapping } });
    expect(created).toMatchObject({ object: 'contacts', mode: 'create', status: 'queued', rows_total: 2, mapping, source: 'upload', filename: 'people.csv' });
    expect(done).toMatchObject({ status: 'completed', rows_total: 2, rows_processed: 2, created: 2, updated: 0, skipped: 0, failed: 0 });
    expect(done.started_at).toBeTypeOf('number');
    expect(done.finished_at).toBeTypeOf('number');
    const people = await contactsOf(t, listId);
    expect(people.map((p) => [p.work_email, p.title, p.name, (p.custom_fields as Record<string, unknown>).plan]).sort()).toEqual([
      ['ada@example.com', 'CTO', 'Ada Lovelace', 'pro'], ['grace@example.com', 'Admiral', 'Grace Hopper', 'free'],
    ]);
    // Each record is made as the API makes it, events included; progress is one event per batch.
    const events = (await t.live.get('/v1/events?limit=200')).json().data as Array<{ type: string }>;
    expect(events.filter((e) => e.type === 'contact.created')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'import.progress')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'import.completed')).toHaveLength(1);
    const types = (await t.live.get('/v1/webhooks/event-types')).json().data as Array<{ type: string }>;
    expect(types.map((x) => x.type)).toEqual(expect.arrayContaining(['import.progress', 'import.completed', 'import.failed']));
    const listed = (await t.live.get('/v1/imports')).json();
    expect(listed.data.map((i: { id: string }) => i.id)).toEqual([created.id]);
    expect(listed.pagination.total).toBe(1);
  });

  it('upserts by the natural key: updates existing contacts and creates the others', async () => {
    const t = await tenant(app);
    const listId = await list(t);
    const existing = (await t.live.post('/v1/contacts', { list_id: listId, work_email: 'ada@example.com', title: 'Engineer' })).json().data;
    const csv = 'work_email,title\nADA@example.com,CTO\nnew@example.com,Founder\n';
    const { done } = await importAndWait(t, { csv, fields: { object: 'contacts', list_id: listId, mode: 'upsert' } });
    expect(done).toMatchObject({ status: 'completed', created: 1, updated: 1, skipped: 0, failed: 0, mode: 'upsert' });
    const people = await contactsOf(t, listId);
    expect(people).toHaveLength(2);
    expect(people.find((p) => p.id === existing.id)).toMatchObject({ title: 'CTO' });
    // Again: nothing changes, every row is skipped.
    const again = await importAndWait(t, { csv, fields: { object: 'contacts', list_id: listId, mode: 'upsert' } });
    expect(again.done).toMatchObject({ created: 0, updated: 0, skipped: 2 });
    // Update mode: rows matching no contact are skipped, never created.
    const update = await importAndWait(t, { csv: 'work_email,title\nnew@example.com,CEO\nnobody@example.com,X\n', fields: { object: 'contacts', mode: 'update' } });
    expect(update.done).toMatchObject({ status: 'completed', created: 0, updated: 1, skipped: 1 });
    expect(await contactsOf(t, listId)).toHaveLength(2);
  });

  it('guesses the mapping from the headers and shows it back', async () => {
    const t = await tenant(app);
    const listId = await list(t);
    const csv = 'E-mail,First Name,Last Name,Company Name,Notes\nada@example.com,Ada,Lovelace,Engines,ignored\n';
    const { created, done } = await importAndWait(t, { csv, fields: { object: 'contacts', list_id: listId } });
    expect(created.mapping).toEqual({ 'E-mail': 'work_email', 'First Name': 'first_name', 'Last Name': 'last_name', 'Company Name': 'company' });
    expect(done.status).toBe('completed');
    expect((await contactsOf(t, listId))[0]).toMatchObject({ work_email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', company: 'Engines', name: 'Ada Lovelace' });
    // A mapping naming a column the file lacks, or a field that does not exist, is 422.
    const bad = await upload(app, t.live_token, { csv, fields: { object: 'contacts', list_id: listId, mapping: { Mail: 'work_email', 'First Name': 'nickname' } } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail.map((d: { loc: string[] }) => d.loc)).toEqual([['body', 'mapping', 'Mail'], ['body', 'mapping', 'First Name']]);
    // Contacts need a list.
    const noList = await upload(app, t.live_token, { csv, fields: { object: 'contacts' } });
    expect(noList.statusCode).toBe(400);
    expect(noList.json().detail).toMatch(/list_id is required/);
  });

  it('reports malformed and invalid rows with their row numbers and imports the rest', async () => {
    const t = await tenant(app);
    const listId = await list(t);
    const csv = [
      'Email,Title',
      'ok1@example.com,One',
      'not-an-email,Two', // row 3: an invalid field
      '"stray"quote@example.com,Three', // row 4: a stray quote is kept (read leniently), so an invalid e-mail
      'ok2@example.com,Four',
      '"open@example.com,Five', // row 6: malformed CSV (a quote never closed)
    ].join('\n');
    const { done } = await importAndWait(t, { csv, fields: { object: 'contacts', list_id: listId } });
    expect(done).toMatchObject({ status: 'completed_with_errors', rows_total: 5, rows_processed: 5, created: 2, failed: 3 });
    const errors = (await t.live.get(`/v1/imports/${String(done.id)}/errors`)).json();
    expect(errors.pagination.total).toBe(3);
    expect(errors.data[0]).toMatchObject({ row: 3, column: 'Email', message: 'value is not a valid email address' });
    expect(errors.data[1]).toMatchObject({ row: 4, column: 'Email' });
    expect(errors.data[2]).toMatchObject({ row: 6, column: null });
    expect(errors.data[2].message).toBe('Line 6: a quoted field is never closed: the file ends first');
    const page = (await t.live.get(`/v1/imports/${String(done.id)}/errors?limit=2`)).json();
    const next = (await t.live.get(`/v1/imports/${String(done.id)}/errors?limit=2&cursor=${page.next_cursor as string}`)).json();
    expect(next.data.map((e: { row: number }) => e.row)).toEqual([6]);
    const asCsv = await t.live.get(`/v1/imports/${String(done.id)}/errors.csv`);
    expect(asCsv.statusCode).toBe(200);
    expect(asCsv.headers['content-type']).toMatch(/^text\/csv/);
    expect(asCsv.body.split('\r\n')[0]).toBe('row,column,message');
    expect(asCsv.body).toContain('3,Email,value is not a valid email address');
    expect((await contactsOf(t, listId)).map((c) => c.work_email).sort()).toEqual(['ok1@example.com', 'ok2@example.com']);
    expect((await t.live.get(`/v1/lists/${listId}`)).json().data.member_count).toBe(2);
  });

  it('fails only the rows the store refuses, leaving nothing of them (a batch refused in part runs again row by row)', async () => {
    const t = await tenant(app);
    expect((await t.live.post('/v1/fields', { object: 'contacts', name: 'badge', data_type: 'text', unique: true })).statusCode).toBe(201);
    expect((await t.live.post('/v1/fields', { object: 'contacts', name: 'plan', data_type: 'text' })).statusCode).toBe(201);
    const listId = await list(t);
    // Row 3 holds the badge row 2 took; every other row is new, across batches and in each.
    const csv = `Email,Badge,Plan\na@example.com,B-1,gold\nb@example.com,B-1,gold\nc@example.com,B-2,silver\n`;
    const { done } = await importAndWait(t, { csv, fields: { object: 'contacts', list_id: listId, mapping: { Email: 'work_email', Badge: 'custom_fields.badge', Plan: 'custom_fields.plan' } } });
    expect(done).toMatchObject({ status: 'completed_with_errors', created: 2, failed: 1 });
    const errors = (await t.live.get(`/v1/imports/${String(done.id)}/errors`)).json().data;
    expect(errors).toHaveLength(1);
    // The refused row left nothing: no record, no event, no value, no member counted.
    const people = await contactsOf(t, listId);
    expect(people.map((p) => [p.work_email, p.custom_fields]).sort()).toEqual([['a@example.com', { badge: 'B-1', plan: 'gold' }], ['c@example.com', { badge: 'B-2', plan: 'silver' }]]);
    const holder = people.find((p) => p.work_email === 'a@example.com')!;
    expect(errors[0]).toMatchObject({ row: 3, message: `Custom field badge value B-1 already belongs to contact ${String(holder.id)}` });
    const events = (await t.live.get('/v1/events?limit=200')).json().data as Array<{ type: string; data: { object: { work_email?: string } } }>;
    expect(events.filter((e) => e.type === 'contact.created').map((e) => e.data.object.work_email).sort()).toEqual(['a@example.com', 'c@example.com']);
    expect((await t.live.get(`/v1/lists/${listId}`)).json().data.member_count).toBe(2);
    const gold = (await t.live.get(`/v1/contacts?list_id=${listId}&custom_fields.plan=gold`)).json();
    expect(gold.data.map((p: { work_email: string }) => p.work_email)).toEqual(['a@example.com']);
  });

  it('writes every row of large batches with their custom field values', async () => {
    const t = await tenant(app);
    expect((await t.live.post('/v1/fields', { object: 'contacts', name: 'plan', data_type: 'text' })).statusCode).toBe(201);
    const listId = await list(t);
    // 1,103 rows: batches of 500, 500 and 103, each inserted in statements of 256, 128, … rows.
    const rows = 1103;
    const csv = `Email,Plan\n${Array.from({ length: rows }, (_, i) => `p${i}@example.com,${i % 3 === 0 ? 'gold' : 'silver'}`).join('\n')}\n`;
    const { done } = await importAndWait(t, { csv, fields: { object: 'contacts', list_id: listId, mapping: { Email: 'work_email', Plan: 'custom_fields.plan' } } });
    expect(done).toMatchObject({ status: 'completed', created: rows, failed: 0 });
    const count = async (query: string) => (await t.live.get(`/v1/contacts?list_id=${listId}&limit=1${query}`)).json().pagination.total as number;
    expect(await count('')).toBe(rows);
    expect(await count('&custom_fields.plan=gold')).toBe(Math.ceil(rows / 3));
    expect(await count('&custom_fields.plan=silver')).toBe(rows - Math.ceil(rows / 3));
    const last = (await t.live.get(`/v1/contacts?list_id=${listId}&work_email=p${rows - 1}@example.com`)).json().data;
    expect(last).toHaveLength(1);
    expect(last[0].custom_fields).toEqual({ plan: (rows - 1) % 3 === 0 ? 'gold' : 'silver' });
  });

  it('reads a BOM, semicolons, tabs and quoted newlines', async () => {
    const t = await tenant(app);
    const listId = await list(t);
    const semicolons = '\uFEFFEmail;Title;City\n"a@example.com";"Head of\nSales";"Paris; France"\nb@example.com;CFO;Lyon\n';
    const first = await importAndWait(t, { csv: semicolons, fields: { object: 'contacts', list_id: listId } });
    expect(first.created.mapping).toEqual({ Email: 'work_email', Title: 'title', City: 'city' });
    expect(first.done).toMatchObject({ status: 'completed', rows_total: 2, created: 2 });
    const tabs = 'Email\tTitle\nc@example.com\tCOO\n';
    expect((await importAndWait(t, { csv: tabs, fields: { object: 'contacts', list_id: listId } })).done).toMatchObject({ status: 'completed', created: 1 });
    const people = await contactsOf(t, listId);
    expect(people.find((p) => p.work_email === 'a@example.com')).toMatchObject({ title: 'Head of\nSales', city: 'Paris; France' });
    expect(people.find((p) => p.work_email === 'c@example.com')).toMatchObject({ title: 'COO' });
  });

  it('imports companies onto a list of companies', async () => {
    const t = await tenant(app);
    const listId = await list(t, 'companies');
    const csv = 'Company,Website,Employees,Tags\nEngines Ltd,https://www.engines.example,250,"vip, q4"\n';
    const { done } = await importAndWait(t, { csv, fields: { object: 'companies', list_id: listId } });
    expect(done).toMatchObject({ status: 'completed', created: 1 });
    const companies = (await t.live.get(`/v1/companies?list_id=${listId}`)).json().data;
    expect(companies).toHaveLength(1);
    expect(companies[0]).toMatchObject({ name: 'Engines Ltd', domain: 'engines.example', employee_count: 250, tags: ['vip', 'q4'] });
  });

  it('goes on answering requests while it runs: a poll over a socket sees it part way', async () => {
    const t = await tenant(app);
    const listId = await list(t);
    const rows = 6000;
    const csv = `Email,Name\n${Array.from({ length: rows }, (_, i) => `bulk${i}@example.com,Person ${i}`).join('\n')}\n`;
    if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const res = await upload(app, t.live_token, { csv, fields: { object: 'contacts', list_id: listId } });
    expect(res.statusCode).toBe(201);
    // Twelve batches of 500 rows: between two of them, the poll waiting on the socket is answered.
    const seen: Array<{ status: string; rows_processed: number; created: number }> = [];
    for (;;) {
      const poll = await fetch(`http://127.0.0.1:${port}/v1/imports/${String(res.json().data.id)}`, { headers: { authorization: `Bearer ${t.live_token}` } });
      expect(poll.status).toBe(200);
      seen.push(((await poll.json()) as { data: (typeof seen)[number] }).data);
      if (!['queued', 'running'].includes(seen.at(-1)!.status)) break;
      // 40 polls a second at most: within the key's rate limit.
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(seen.some((s) => s.status === 'running' && s.rows_processed > 0 && s.rows_processed < rows)).toBe(true);
    expect(seen.at(-1)).toMatchObject({ status: 'completed', rows_processed: rows, created: rows });
  });

  it('is visible to its own tenant only', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const listId = await list(t);
    const { created } = await importAndWait(t, { csv: 'Email\nx@example.com\n', fields: { object: 'contacts', list_id: listId } });
    for (const path of ['', '/errors', '/errors.csv']) {
      const res = await other.live.get(`/v1/imports/${String(created.id)}${path}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ type: 'not_found', detail: 'Import not found' });
    }
    expect((await other.live.post(`/v1/imports/${String(created.id)}/cancel`)).statusCode).toBe(404);
    expect((await t.test.get(`/v1/imports/${String(created.id)}`)).statusCode).toBe(404);
  });
});

describe('imports run by a worker', () => {
  let quiet: FastifyInstance;
  jobsByHand({ env: { IMPORT_BATCH_ROWS: '2' }, file: () => app, rebuilt: (a) => (app = a), quiet: (a) => (quiet = a) });

  it('cancels a queued import; an ended one is 409', async () => {
    const t = await tenant(quiet);
    const listId = await list(t);
    const res = await upload(quiet, t.live_token, { csv: 'Email\na@example.com\n', fields: { object: 'contacts', list_id: listId } });
    const id = res.json().data.id as string;
    const cancelled = await t.live.post(`/v1/imports/${id}/cancel`);
    expect(cancelled.statusCode).toBe(201);
    expect(cancelled.json().data).toMatchObject({ status: 'cancelled' });
    expect((await t.live.post(`/v1/imports/${id}/cancel`)).json()).toEqual({ type: 'conflict', detail: 'Import is already cancelled' });
    await runImport(quiet.services.database, { orgId: t.org_id, mode: 'live' }, id, { batchRows: 2 });
    expect(await contactsOf(t, listId)).toHaveLength(0);
  });

  it('resumes after an interrupted run without writing a row twice', async () => {
    const t = await tenant(quiet);
    const listId = await list(t);
    const csv = `Email\n${Array.from({ length: 7 }, (_, i) => `p${i}@example.com`).join('\n')}\n`;
    const id = (await upload(quiet, t.live_token, { csv, fields: { object: 'contacts', list_id: listId } })).json().data.id as string;
    const scope = { orgId: t.org_id, mode: 'live' as const };
    // The first run is stopped (as at shutdown, or a worker losing its lease) after its first batch.
    const stop = new AbortController();
    await expect(runImport(quiet.services.database, scope, id, { batchRows: 2, signal: stop.signal, onBatch: () => stop.abort() })).rejects.toThrow(/interrupted/);
    expect((await t.live.get(`/v1/imports/${id}`)).json().data).toMatchObject({ status: 'running', rows_processed: 2, created: 2 });
    // A second run from the same offset, as a worker taking the job over: then the next one resumes.
    await runImport(quiet.services.database, scope, id, { batchRows: 2 });
    expect((await t.live.get(`/v1/imports/${id}`)).json().data).toMatchObject({ status: 'completed', rows_processed: 7, created: 7 });
    const people = await contactsOf(t, listId);
    expect(people.map((p) => p.work_email).sort()).toEqual(Array.from({ length: 7 }, (_, i) => `p${i}@example.com`).sort());
    const progress = ((await t.live.get('/v1/events?type=import.progress&limit=200')).json().data as unknown[]);
    expect(progress).toHaveLength(4); // batches of 2, 2, 2 and 1
  });

  it('writes a batch larger than one statement may carry', async () => {
    const t = await tenant(quiet);
    expect((await t.live.post('/v1/fields', { object: 'contacts', name: 'plan', data_type: 'text' })).statusCode).toBe(201);
    const listId = await list(t);
    // One batch of 4,000 rows queues more than 65,535 parameters (PostgreSQL's limit per statement).
    const rows = 4000;
    const csv = `Email,Name,Title,Plan\n${Array.from({ length: rows }, (_, i) => `w${i}@example.com,Person ${i},Engineer,gold`).join('\n')}\n`;
    const mapping = { Email: 'work_email', Name: 'name', Title: 'title', Plan: 'custom_fields.plan' };
    const id = (await upload(quiet, t.live_token, { csv, fields: { object: 'contacts', list_id: listId, mapping } })).json().data.id as string;
    await runImport(quiet.services.database, { orgId: t.org_id, mode: 'live' }, id, { batchRows: rows });
    expect((await t.live.get(`/v1/imports/${id}`)).json().data).toMatchObject({ status: 'completed', rows_processed: rows, created: rows });
    expect((await t.live.get(`/v1/contacts?list_id=${listId}&custom_fields.plan=gold&limit=1`)).json().pagination.total).toBe(rows);
    expect((await t.live.get(`/v1/events?type=contact.created&limit=1`)).json().data).toHaveLength(1);
  });

  it('ends failed, not running for good, when its job fails its last attempt', async () => {
    const t = await tenant(quiet);
    const listId = await list(t);
    const db = quiet.services.database.db;
    // A stored import its job cannot run: an object no longer importable.
    const id = (await upload(quiet, t.live_token, { csv: 'Email\nx@example.com\n', fields: { object: 'contacts', list_id: listId } })).json().data.id as string;
    await db.updateTable('imports').set({ object: 'gone' }).where('org_id', '=', t.org_id).where('id', '=', id).execute();
    const job = { id: 'job_test', orgId: t.org_id, mode: 'live' as const, attempt: 1, ranBefore: false };
    const context = { database: quiet.services.database, config: quiet.services.config, job, signal: new AbortController().signal } as unknown as Parameters<typeof importJob.run>[1];
    await expect(importJob.run({ import_id: id }, context)).rejects.toThrow();
    expect((await t.live.get(`/v1/imports/${id}`)).json().data.status).toBe('queued');
    await expect(importJob.run({ import_id: id }, { ...context, job: { ...job, attempt: DEFAULT_MAX_ATTEMPTS } })).rejects.toThrow();
    const ended = (await t.live.get(`/v1/imports/${id}`)).json().data;
    expect(ended).toMatchObject({ status: 'failed', error: `The import stopped after ${DEFAULT_MAX_ATTEMPTS} failed attempts; the first 0 rows were processed` });
    expect(ended.finished_at).toBeTypeOf('number');
    expect((await t.live.get(`/v1/events?type=import.failed`)).json().data.filter((e: { data: { object: { id: string } } }) => e.data.object.id === id)).toHaveLength(1);
  });
});

describe('imports from a URL', () => {
  it('fetches the CSV through the outbound guard: allowed to a local receiver, refused when private networks are not', async () => {
    const served = await receiver(() => ({ status: 200, headers: { 'content-type': 'text/csv' }, body: 'Email,Title\nurl@example.com,CTO\n' }));
    const t = await tenant(app);
    const listId = await list(t);
    const res = await t.live.post('/v1/imports', { url: served.url, object: 'contacts', list_id: listId });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({ source: 'url', filename: served.url, rows_total: 1 });
    expect(await waitFor(app, t.live_token, `/v1/imports/${res.json().data.id as string}`)).toMatchObject({ status: 'completed', created: 1 });

    const guarded = await testApp({ env: { OUTBOUND_ALLOW_PRIVATE: 'false', WORKERS: 'off' } });
    try {
      const g = await tenant(guarded);
      const refused = await g.live.post('/v1/imports', { url: served.url, object: 'contacts', list_id: await list(g) });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().detail).toMatch(/^url: .*private/);
      expect(served.received).toHaveLength(1);
    } finally {
      await guarded.close();
    }
  });
});

describe('malformed multipart bodies', () => {
  it('are refused with 400 naming the problem, leaving no import and no stored bytes', async () => {
    const t = await tenant(app);
    const bodies: Array<[string, string]> = [
      ['multipart/form-data; boundary=x', '{"object":"contacts","url":""}'],
      ['multipart/form-data', '--x\r\nContent-Disposition: form-data; name="object"\r\n\r\ncontacts\r\n--x--\r\n'],
      ['multipart/form-data; boundary=x', '--x\r\ngarbage'],
      // A file part cut off in the middle: its first bytes were stored, then dropped.
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nEmail\nx@example.com\n'],
    ];
    for (const [contentType, payload] of bodies) {
      const res = await app.inject({ method: 'POST', url: '/v1/imports', headers: { authorization: `Bearer ${t.live_token}`, 'content-type': contentType }, payload });
      expect(res.statusCode, `${contentType} ${payload}`).toBe(400);
      expect(res.json().detail).toMatch(/^The multipart body is malformed: /);
    }
    expect((await t.live.get('/v1/imports')).json().data).toHaveLength(0);
    const chunks = await app.services.database.db.selectFrom('file_chunks').select('file_id').where('org_id', '=', t.org_id).execute();
    expect(chunks).toEqual([]);
  });
});

describe('the size limit', () => {
  it('refuses a file over the limit with 413 in the error shape, as it streams', async () => {
    const small = await testApp({ env: { IMPORT_MAX_BYTES: '2048', WORKERS: 'off' } });
    try {
      const t = await tenant(small);
      const listId = await list(t);
      const big = `Email\n${'x@example.com\n'.repeat(400)}`;
      const res = await upload(small, t.live_token, { csv: big, fields: { object: 'contacts', list_id: listId } });
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual({ type: 'payload_too_large', detail: 'The file exceeds the 2048 bytes limit of an import' });
      expect((await t.live.get('/v1/imports')).json().data).toHaveLength(0);
    } finally {
      await small.close();
    }
  });

  it('refuses a declared body over 100 MiB before reading it', async () => {
    const server = await testApp();
    await server.listen({ port: 0, host: '127.0.0.1' });
    try {
      const t = await tenant(server);
      const port = (server.server.address() as { port: number }).port;
      const conn = await RawConnection.open(port);
      conn.socket.write(`POST /v1/imports HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.live_token}\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: ${101 * 1024 * 1024}\r\n\r\n--x\r\n`);
      const reply = await conn.response();
      expect(reply.status).toBe(413);
      expect(reply.json()).toEqual({ type: 'payload_too_large', detail: 'The file exceeds the 100 MiB limit of an import' });
      conn.socket.destroy();
    } finally {
      await server.close();
    }
  });
});

describe('cli import', () => {
  it('imports a file and prints progress lines when not on a terminal', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'import-'));
    const file = join(dir, 'companies.csv');
    await writeFile(file, `Name,Domain\n${Array.from({ length: 5 }, (_, i) => `Company ${i},c${i}.example`).join('\n')}\n`);
    // The CLI is another process: on SQLite it needs a file both can open.
    const env = { ...process.env, DATABASE_URL: isPostgres() ? databaseUrl() : `sqlite:${join(dir, 'cli.db')}`, IMPORT_BATCH_ROWS: '2' };
    const cli = (...args: string[]) => promisify(execFile)('./node_modules/.bin/node', ['src/cli.ts', ...args], { env });
    const org = JSON.parse((await cli('orgs', 'create', '--name', 'CLI import')).stdout) as { org_id: string };
    const { stdout, stderr } = await cli('import', '--org', org.org_id, '--file', file, '--object', 'companies');
    expect(JSON.parse(stdout)).toMatchObject({ object: 'companies', status: 'completed', rows_total: 5, created: 5 });
    // One line per batch (on PostgreSQL a worker of the suite may take some batches over: fewer lines).
    const lines = stderr.trim().split('\n');
    for (const line of lines) expect(line).toMatch(/^\d\/5 rows \(\d+%\), \d+ rows\/s, ETA \d+s$/);
    expect(lines.at(-1)).toMatch(/^5\/5 rows \(100%\)/);
    if (!isPostgres()) expect(lines).toHaveLength(3);
    const refused = await cli('import', '--org', org.org_id, '--file', file).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/list_id is required when importing contacts/) });
  });
});
