// Custom fields through HTTP: definitions (with the built-in fields of each object), values validated
// on every write, required and unique (also under concurrent writes), filters, and deletion.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => app.close());

async function defineField(c: Client, body: Record<string, unknown>) {
  const res = await c.post('/v1/fields', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

async function contactList(c: Client, name = 'People') {
  const res = await c.post('/v1/lists', { name, type: 'contacts' });
  expect(res.statusCode).toBe(201);
  return res.json().data.id as string;
}

const ids = (res: { json(): { data: Array<{ id: string }> } }) => res.json().data.map((r) => r.id).sort();

describe('field definitions', () => {
  it('lists built-in fields first, then custom ones, and pages through them', async () => {
    const t = await tenant(app);
    const field = await defineField(t.live, { object: 'contacts', name: 'segment', title: 'Segment', data_type: 'enum', options: { values: ['smb', 'enterprise'] }, description: 'Routing' });
    expect(field).toMatchObject({ object: 'contacts', name: 'segment', title: 'Segment', data_type: 'enum', is_global: false, options: { values: ['smb', 'enterprise'] }, required: false, unique: false, description: 'Routing', list_id: null });
    expect(field.id).toMatch(/^fld_/);

    const all = (await t.live.get('/v1/fields?object=contacts&limit=200')).json();
    const builtIn = all.data.filter((f: { is_global: boolean }) => f.is_global);
    expect(builtIn.map((f: { name: string }) => f.name)).toEqual(expect.arrayContaining(['id', 'work_email', 'list_id', 'suppressed', 'created_at']));
    expect(builtIn.find((f: { name: string }) => f.name === 'work_email')).toMatchObject({ data_type: 'email', id: 'contacts.work_email' });
    expect(builtIn.some((f: { name: string }) => f.name === 'custom_fields')).toBe(false);
    expect(all.data.at(-1)).toEqual(field);
    expect(all.pagination.total).toBe(all.data.length);

    let url = '/v1/fields?object=contacts&limit=5';
    const walked: string[] = [];
    for (;;) {
      const page = (await t.live.get(url)).json();
      walked.push(...page.data.map((f: { id: string }) => f.id));
      if (!page.next_cursor) break;
      url = `/v1/fields?object=contacts&limit=5&cursor=${encodeURIComponent(page.next_cursor)}`;
    }
    expect(walked).toEqual(all.data.map((f: { id: string }) => f.id));

    const companies = (await t.live.get('/v1/fields?object=companies&limit=200')).json().data;
    expect(companies.every((f: { object: string }) => f.object === 'companies')).toBe(true);
    expect((await t.live.get(`/v1/fields/${field.id}`)).json().data).toEqual(field);
    expect((await t.live.get('/v1/fields/contacts.work_email')).json().data.is_global).toBe(true);
    // Other tenants and the other mode see nothing of it.
    expect((await t.test.get(`/v1/fields/${field.id}`)).statusCode).toBe(404);
    expect((await (await tenant(app)).live.get(`/v1/fields/${field.id}`)).statusCode).toBe(404);
  });

  it('refuses bad names, built-in names, duplicates and options that do not fit the type', async () => {
    const t = await tenant(app);
    const bad = async (body: Record<string, unknown>, status: number) => {
      const res = await t.live.post('/v1/fields', body);
      expect(res.statusCode, res.body).toBe(status);
      return res.json().detail;
    };
    expect((await bad({ object: 'contacts', name: 'Bad Name', data_type: 'text' }, 422))[0].loc).toEqual(['body', 'name']);
    expect((await bad({ object: 'contacts', name: 'work_email', data_type: 'text' }, 422))[0].msg).toMatch(/built-in/);
    expect((await bad({ object: 'contacts', name: 'created_at', data_type: 'text' }, 422))[0].loc).toEqual(['body', 'name']);
    expect(await bad({ object: 'widgets', name: 'x', data_type: 'text' }, 400)).toMatch(/object/);
    expect(await bad({ object: 'contacts', name: 'x', data_type: 'color' }, 400)).toMatch(/data_type/);
    expect((await bad({ object: 'contacts', name: 'x', data_type: 'enum' }, 422))[0].loc).toEqual(['body', 'options']);
    expect(await bad({ object: 'deals', name: 'x', data_type: 'currency', options: { currency: 'ZZZ' } }, 422)).toEqual([{ loc: ['body', 'options', 'currency'], msg: 'value is not an ISO 4217 currency code', type: 'value_error.currency' }]);
    expect((await bad({ object: 'contacts', name: 'x', data_type: 'boolean', unique: true }, 422))[0].loc).toEqual(['body', 'unique']);
    expect((await bad({ object: 'companies', name: 'x', data_type: 'text', list_id: 'lst_x' }, 422))[0].loc).toEqual(['body', 'list_id']);
    expect(await bad({ object: 'contacts', name: 'x', data_type: 'text', list_id: 'lst_missing' }, 404)).toBe('List not found');
    const first = await defineField(t.live, { object: 'contacts', name: 'x', data_type: 'text' });
    expect(await bad({ object: 'contacts', name: 'x', data_type: 'number' }, 409)).toContain(first.id);
    await defineField(t.live, { object: 'companies', name: 'x', data_type: 'number' });
    expect((await t.live.patch('/v1/fields/contacts.work_email', { title: 'E' })).statusCode).toBe(400);
    expect((await t.live.delete('/v1/fields/contacts.work_email')).statusCode).toBe(400);
    // A built-in id that names no field is not found, as on GET, not read-only.
    for (const res of [await t.live.get('/v1/fields/contacts.bogus'), await t.live.patch('/v1/fields/companies.nonexistent', { title: 'x' }), await t.live.delete('/v1/fields/contacts.bogus')]) {
      expect([res.statusCode, res.json()]).toEqual([404, { type: 'not_found', detail: 'Field not found' }]);
    }
    expect((await t.live.patch(`/v1/fields/${first.id}`, {})).json().detail).toBe('No fields to update');
  });

  it('changes a definition, adds enum values but never removes one, and records events', async () => {
    const t = await tenant(app);
    const field = await defineField(t.live, { object: 'companies', name: 'tier', data_type: 'enum', options: { values: ['a', 'b'] } });
    const res = await t.live.patch(`/v1/fields/${field.id}`, { title: 'Tier', options: { values: ['a', 'b', 'c'] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ title: 'Tier', options: { values: ['a', 'b', 'c'] } });
    const removed = await t.live.patch(`/v1/fields/${field.id}`, { options: { values: ['a'] } });
    expect(removed.statusCode).toBe(422);
    const events = (await t.live.get('/v1/events')).json().data.map((e: { type: string }) => e.type);
    expect(events).toEqual(expect.arrayContaining(['field.created', 'field.updated']));
    const [updated] = (await t.live.get('/v1/events?type=field.updated')).json().data;
    expect(updated.previous_attributes).toEqual({ title: field.title, options: { values: ['a', 'b'] } });
    // The same title and values again: the field as it is, no event.
    const same = await t.live.patch(`/v1/fields/${field.id}`, { title: 'Tier', options: { values: ['a', 'b', 'c'] } });
    expect(same.json().data).toEqual(res.json().data);
    expect((await t.live.get('/v1/events?type=field.updated')).json().data).toHaveLength(1);
  });
});

describe('custom field values', () => {
  it('validates every type on create and update, answers and clears values', async () => {
    const t = await tenant(app);
    const list = await contactList(t.live);
    const types: Array<[string, Record<string, unknown>, unknown, unknown]> = [
      ['note', { data_type: 'text' }, 'hello', 42],
      ['seats', { data_type: 'number' }, 40.5, '40'],
      ['active', { data_type: 'boolean' }, true, 'yes'],
      ['renewal', { data_type: 'date' }, '2026-02-28', '2026-02-30'],
      ['seen_at', { data_type: 'datetime' }, 1767225600, '2026-01-01T00:00:00Z'],
      ['segment', { data_type: 'enum', options: { values: ['smb', 'ent'] } }, 'smb', 'mid'],
      ['products', { data_type: 'multi_enum', options: { values: ['a', 'b', 'c'] } }, ['c', 'a'], ['a', 'z']],
      ['billing_email', { data_type: 'email' }, 'Bill@Example.com', 'not-an-email'],
      ['site', { data_type: 'url' }, 'https://example.com/x', 'ftp://example.com'],
      ['budget', { data_type: 'currency', options: { currency: 'EUR' } }, 1200.5, '1200'],
    ];
    for (const [name, def] of types) await defineField(t.live, { object: 'contacts', name, ...def });
    const good = Object.fromEntries(types.map(([name, , ok]) => [name, ok]));
    const created = await t.live.post('/v1/contacts', { list_id: list, custom_fields: good });
    expect(created.statusCode, created.body).toBe(201);
    const contact = created.json().data;
    expect(contact.custom_fields).toEqual({ ...good, products: ['a', 'c'], billing_email: 'bill@example.com' });
    expect((await t.live.get(`/v1/contacts/${contact.id}`)).json().data.custom_fields).toEqual(contact.custom_fields);

    const bad = await t.live.post('/v1/contacts', { list_id: list, custom_fields: Object.fromEntries(types.map(([name, , , no]) => [name, no])) });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail.map((e: { loc: string[] }) => e.loc.join('.')).sort()).toEqual(types.map(([name]) => `body.custom_fields.${name}`).sort());
    const unstorable = await t.live.post('/v1/contacts', { list_id: list, custom_fields: { note: 'a\u0000b', billing_email: 'x\ud800@example.com' } });
    expect(unstorable.statusCode).toBe(422);
    expect(unstorable.json().detail.map((e: { type: string }) => e.type)).toEqual(['string_pattern_mismatch', 'string_pattern_mismatch']);
    const unknown = await t.live.post('/v1/contacts', { list_id: list, custom_fields: { nope: 1 } });
    expect(unknown.json().detail).toEqual([expect.objectContaining({ loc: ['body', 'custom_fields', 'nope'], type: 'extra_forbidden' })]);
    expect((await t.live.get('/v1/contacts')).json().pagination.total).toBe(1);

    const updated = await t.live.patch(`/v1/contacts/${contact.id}`, { custom_fields: { note: 'changed', seats: null } });
    expect(updated.statusCode, updated.body).toBe(200);
    const { seats: _seats, ...rest } = contact.custom_fields;
    expect(updated.json().data.custom_fields).toEqual({ ...rest, note: 'changed' });
    const badUpdate = await t.live.patch(`/v1/contacts/${contact.id}`, { custom_fields: { seats: 'many' } });
    expect(badUpdate.statusCode).toBe(422);
    expect(badUpdate.json().detail[0].loc).toEqual(['body', 'custom_fields', 'seats']);
    const [event] = (await t.live.get('/v1/events?type=contact.updated')).json().data;
    expect(event.data.object.custom_fields.note).toBe('changed');
  });

  it('enforces required fields on create, globally and per list', async () => {
    const t = await tenant(app);
    const list = await contactList(t.live);
    const other = await contactList(t.live, 'Other');
    await defineField(t.live, { object: 'contacts', name: 'source', data_type: 'text', list_id: list, required: true });
    const missing = await t.live.post('/v1/contacts', { list_id: list });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail).toEqual([{ loc: ['body', 'custom_fields', 'source'], msg: 'Field required', type: 'missing' }]);
    expect((await t.live.post('/v1/contacts', { list_id: other })).statusCode).toBe(201);
    const ok = await t.live.post('/v1/contacts', { list_id: list, custom_fields: { source: 'web' } });
    expect(ok.statusCode).toBe(201);
    // An update that does not name the field is fine; clearing a required field is not.
    expect((await t.live.patch(`/v1/contacts/${ok.json().data.id}`, { title: 'CEO' })).statusCode).toBe(200);
    expect((await t.live.patch(`/v1/contacts/${ok.json().data.id}`, { custom_fields: { source: null } })).statusCode).toBe(422);
    expect((await t.live.get(`/v1/fields?object=contacts&list_id=${other}&limit=200`)).json().data.some((f: { name: string }) => f.name === 'source')).toBe(false);
  });

  it('keeps unique values unique, also under concurrent writes, naming the holder', async () => {
    const t = await tenant(app);
    await defineField(t.live, { object: 'companies', name: 'external_id', data_type: 'text', unique: true });
    const first = await t.live.post('/v1/companies', { name: 'A', custom_fields: { external_id: 'X-1' } });
    expect(first.statusCode).toBe(201);
    const holder = first.json().data.id;
    const second = await t.live.post('/v1/companies', { name: 'B', custom_fields: { external_id: 'X-1' } });
    expect(second.statusCode).toBe(409);
    expect(second.json().detail).toContain(holder);
    const b = (await t.live.post('/v1/companies', { name: 'B' })).json().data;
    const move = await t.live.patch(`/v1/companies/${b.id}`, { custom_fields: { external_id: 'X-1' } });
    expect(move.statusCode).toBe(409);
    expect(move.json().detail).toContain(holder);
    // The holder may write its own value again.
    expect((await t.live.patch(`/v1/companies/${holder}`, { custom_fields: { external_id: 'X-1' } })).statusCode).toBe(200);

    for (let round = 0; round < 5; round++) {
      const value = `race-${round}`;
      const answers = await Promise.all([1, 2].map((n) => t.live.post('/v1/companies', { name: `R${n}`, custom_fields: { external_id: value } })));
      const statuses = answers.map((a) => a.statusCode).sort();
      expect(statuses).toEqual([201, 409]);
      const winner = answers.find((a) => a.statusCode === 201)!.json().data.id;
      expect(answers.find((a) => a.statusCode === 409)!.json().detail).toContain(winner);
    }
    // A deleted holder frees its value.
    expect((await t.live.delete(`/v1/companies/${holder}`)).statusCode).toBe(200);
    expect((await t.live.patch(`/v1/companies/${b.id}`, { custom_fields: { external_id: 'X-1' } })).statusCode).toBe(200);
  });

  it('filters lists by custom fields of each type', async () => {
    const t = await tenant(app);
    const list = await contactList(t.live);
    await defineField(t.live, { object: 'contacts', name: 'seats', data_type: 'number' });
    await defineField(t.live, { object: 'contacts', name: 'segment', data_type: 'text' });
    await defineField(t.live, { object: 'contacts', name: 'products', data_type: 'multi_enum', options: { values: ['a_b', 'ab', 'c'] } });
    await defineField(t.live, { object: 'contacts', name: 'renewal', data_type: 'date' });
    const make = async (custom: Record<string, unknown>) => (await t.live.post('/v1/contacts', { list_id: list, custom_fields: custom })).json().data.id as string;
    const one = await make({ seats: 10, segment: 'smb', products: ['a_b'], renewal: '2026-03-01' });
    const two = await make({ seats: 20, segment: 'smb', products: ['ab', 'c'] });
    await make({});
    const other = await tenant(app);
    await defineField(other.live, { object: 'contacts', name: 'segment', data_type: 'text' });
    const otherList = await contactList(other.live);
    await other.live.post('/v1/contacts', { list_id: otherList, custom_fields: { segment: 'smb' } });

    const res = await t.live.get('/v1/contacts?custom_fields.segment=smb');
    expect(res.statusCode, res.body).toBe(200);
    expect(ids(res)).toEqual([one, two].sort());
    expect(res.json().pagination.total).toBe(2);
    expect(ids(await t.live.get('/v1/contacts?custom_fields.seats=20'))).toEqual([two]);
    expect(ids(await t.live.get('/v1/contacts?custom_fields.products=a_b'))).toEqual([one]);
    expect(ids(await t.live.get('/v1/contacts?custom_fields.products=c&custom_fields.segment=smb'))).toEqual([two]);
    expect(ids(await t.live.get('/v1/contacts?custom_fields.renewal=2026-03-01'))).toEqual([one]);
    expect(ids(await t.live.get(`/v1/contacts?custom_fields.segment=smb&list_id=${list}`))).toEqual([one, two].sort());
    const unknown = await t.live.get('/v1/contacts?custom_fields.nope=1');
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().detail[0].loc).toEqual(['query', 'custom_fields.nope']);
    expect((await t.live.get('/v1/contacts?custom_fields.seats=many')).statusCode).toBe(422);
    expect((await t.live.get('/v1/contacts?custom_fields.Bad=1')).statusCode).toBe(422);
  });

  it('deleting a field removes it from every record and records field.deleted', async () => {
    const t = await tenant(app);
    const a = await defineField(t.live, { object: 'companies', name: 'score', data_type: 'number', required: true, unique: true });
    await defineField(t.live, { object: 'companies', name: 'keep', data_type: 'text' });
    const company = (await t.live.post('/v1/companies', { name: 'A', custom_fields: { score: 5, keep: 'k' } })).json().data;
    const del = await t.live.delete(`/v1/fields/${a.id}`);
    expect(del.statusCode, del.body).toBe(200);
    const read = (await t.live.get(`/v1/companies/${company.id}`)).json().data;
    expect(read.custom_fields).toEqual({ keep: 'k' });
    expect(read.updated_at).toBe(company.updated_at);
    expect((await t.live.get('/v1/companies?custom_fields.score=5')).statusCode).toBe(422);
    // The record still passes its own validation, and the name can be defined again afresh.
    expect((await t.live.patch(`/v1/companies/${company.id}`, { custom_fields: { keep: 'k2' } })).statusCode).toBe(200);
    await defineField(t.live, { object: 'companies', name: 'score', data_type: 'text', unique: true });
    expect((await t.live.post('/v1/companies', { name: 'B', custom_fields: { score: '5' } })).statusCode).toBe(201);
    expect((await t.live.get(`/v1/fields/${a.id}`)).statusCode).toBe(404);
    const [event] = (await t.live.get('/v1/events?type=field.deleted')).json().data;
    expect(event.data.object).toMatchObject({ id: a.id, name: 'score' });
  });
});
