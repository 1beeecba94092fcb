// Notes through HTTP: content and its 100 KB limit, newest first (pinned ones by filter), the
// notes of a contact, company or deal, associations and their 404s, full-text search (alone and in
// GET /v1/search), assert, events, paging, isolation and the sandbox's notes.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ids, ok, records, walk } from '../helpers/records.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());

const note = (c: Client, path: string, body: object) => ok(c.post(path, body), 201);

describe('notes', () => {
  it('creates on a record, reads back, changes and deletes, recording events', async () => {
    const t = await tenant(app);
    const r = await records(t.live);
    const made = await note(t.live, `/v1/contacts/${r.contact.id}/notes`, { content: 'Called Ada; sending **pricing** Monday', created_by: 'grace@example.com' });
    expect(made).toMatchObject({
      content: 'Called Ada; sending **pricing** Monday', created_by: 'grace@example.com', pinned: false, external_key: null, custom_fields: {},
      associations: { contact_ids: [r.contact.id], company_ids: [], deal_ids: [] },
    });
    expect(made.id).toMatch(/^nte_/);
    expect(await ok(t.live.get(`/v1/notes/${made.id}`))).toEqual(made);
    const changed = await ok(t.live.patch(`/v1/notes/${made.id}`, { pinned: true, associations: { deal_ids: [r.deal.id] } }));
    expect(changed).toMatchObject({ pinned: true, associations: { contact_ids: [r.contact.id], company_ids: [], deal_ids: [r.deal.id] } });
    const events = async (type: string) => (await t.live.get(`/v1/events?type=${type}`)).json().data;
    expect((await events('note.created'))[0].data.object).toEqual(made);
    expect((await events('note.updated'))[0].previous_attributes).toEqual({ pinned: false, associations: made.associations });
    expect(await ok(t.live.delete(`/v1/notes/${made.id}`))).toEqual({ id: made.id, deleted: true });
    expect((await events('note.deleted'))[0].data.object.id).toBe(made.id);
    await fails(t.live.get(`/v1/notes/${made.id}`), 404, 'Note not found');
    await fails(t.live.patch(`/v1/notes/${made.id}`, { pinned: false }), 404, 'Note not found');
    await fails(t.live.delete(`/v1/notes/${made.id}`), 404, 'Note not found');
    await fails(t.live.patch('/v1/notes/nte_missing', {}), 400, 'No fields to update');
  });

  it('needs content of at most 100 KB', async () => {
    const t = await tenant(app);
    const r = await records(t.live);
    const path = `/v1/companies/${r.company.id}/notes`;
    await fails(t.live.post(path, {}), 400, 'content is required', { param: 'content' });
    expect((await fails(t.live.post(path, { content: '' }), 422)).detail[0].loc).toEqual(['body', 'content']);
    expect((await note(t.live, path, { content: 'x'.repeat(100_000) })).content).toHaveLength(100_000);
    expect((await fails(t.live.post(path, { content: 'x'.repeat(100_001) }), 422)).detail[0].loc).toEqual(['body', 'content']);
    // The limit is in bytes: 50,001 two-byte characters are over it.
    expect((await fails(t.live.post(path, { content: 'é'.repeat(50_001) }), 422)).detail).toEqual([{ loc: ['body', 'content'], msg: 'content is larger than 100000 bytes (100 KB)', type: 'value_error.too_large' }]);
    const small = await note(t.live, path, { content: 'small' });
    expect((await fails(t.live.patch(`/v1/notes/${small.id}`, { content: 'é'.repeat(50_001) }), 422)).detail[0].loc).toEqual(['body', 'content']);
    expect((await t.live.get(path)).json().pagination.total).toBe(2);
  });

  it('lists a record\'s notes newest first; pinned ones are a filter, not a reordering', async () => {
    const t = await tenant(app);
    const r = await records(t.live);
    for (const [path, record, name] of [['contacts', r.contact, 'Contact'], ['companies', r.company, 'Company'], ['deals', r.deal, 'Deal']] as const) {
      const base = `/v1/${path}/${record.id}/notes`;
      const pinned = await note(t.live, base, { content: `Pinned on the ${path}`, pinned: true });
      const second = await note(t.live, base, { content: `Second on the ${path}`, created_by: 'ada@example.com' });
      const third = await note(t.live, base, { content: `Third on the ${path}` });
      expect(ids(await walk(t.live, base, 2))).toEqual([third.id, second.id, pinned.id]);
      expect(ids((await t.live.get(`${base}?pinned=true`)).json().data)).toEqual([pinned.id]);
      expect(ids((await t.live.get(`${base}?pinned=false`)).json().data)).toEqual([third.id, second.id]);
      expect(ids((await t.live.get(`${base}?created_by=ada@example.com`)).json().data)).toEqual([second.id]);
      await fails(t.live.get(`/v1/${path}/${path.slice(0, 3)}_missing/notes`), 404, `${name} not found`);
      await fails(t.live.post(`/v1/${path}/${path.slice(0, 3)}_missing/notes`, { content: 'x' }), 404, `${name} not found`);
    }
    // GET /v1/notes and its association filters see the same notes.
    expect((await t.live.get('/v1/notes')).json().pagination.total).toBe(9);
    expect((await t.live.get(`/v1/notes?deal_id=${r.deal.id}`)).json().pagination.total).toBe(3);
    const page = (await t.live.get(`/v1/contacts/${r.contact.id}/notes?limit=2&page=2`)).json();
    expect(page.data.map((n: { content: string }) => n.content)).toEqual(['Pinned on the contacts']);
  });

  it('checks associations in the tenant and loses them with their records', async () => {
    const t = await tenant(app);
    const r = await records(t.live);
    const other = await records((await tenant(app)).live, 'Other');
    await fails(t.live.post(`/v1/contacts/${r.contact.id}/notes`, { content: 'x', associations: { deal_ids: [other.deal.id] } }), 404, 'Deal not found');
    await fails(t.live.post('/v1/notes', { content: 'x', associations: { company_ids: ['cmp_missing'] } }), 404, 'Company not found');
    expect((await t.live.get('/v1/notes')).json().pagination.total).toBe(0);
    const made = await note(t.live, `/v1/deals/${r.deal.id}/notes`, { content: 'On both', associations: { contact_ids: [r.contact.id] } });
    await ok(t.live.delete(`/v1/contacts/${r.contact.id}`));
    expect((await ok(t.live.get(`/v1/notes/${made.id}`))).associations).toEqual({ contact_ids: [], company_ids: [], deal_ids: [r.deal.id] });
  });

  it('is found by full-text search, alone and among every object', async () => {
    const t = await tenant(app);
    const r = await records(t.live);
    const made = await note(t.live, `/v1/contacts/${r.contact.id}/notes`, { content: 'Discussed the *procurement* timeline with legal' });
    await note(t.live, `/v1/contacts/${r.contact.id}/notes`, { content: 'Nothing to see' });
    const hits = (await ok(t.live.post('/v1/search/notes', { q: 'procure legal' }))) as unknown as Array<{ id: string }>;
    expect(ids(hits)).toEqual([made.id]);
    const pinnedOnly = await ok(t.live.post('/v1/search/notes', { q: 'procurement', filters: [{ field: 'pinned', operator: 'eq', value: true }] }));
    expect(pinnedOnly).toEqual([]);
    const global = (await t.live.get('/v1/search?q=procurement')).json().data;
    expect(global.notes.total).toBe(1);
    expect(global.notes.data[0]).toEqual(made);
    await fails(t.live.post('/v1/search/notes', { q: '!!!' }), 400);
  });

  it('asserts on external_key', async () => {
    const t = await tenant(app);
    const first = await t.live('PUT', '/v1/notes/assert', { external_key: 'crm-n-1', content: 'Imported' });
    expect(first.statusCode, first.body).toBe(201);
    const same = await t.live('PUT', '/v1/notes/assert', { external_key: 'crm-n-1', content: 'Imported' });
    expect(same.json()).toMatchObject({ data: { id: first.json().data.id } });
    await fails(t.live.post('/v1/notes', { content: 'x', external_key: 'crm-n-1' }), 409);
  });

  it('keeps every tenant\'s notes to itself', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const r = await records(a.live);
    const mine = await note(a.live, `/v1/contacts/${r.contact.id}/notes`, { content: 'Confidential roadmap' });
    for (const intruder of [b.live, b.test, a.test]) {
      await fails(intruder.get(`/v1/notes/${mine.id}`), 404, 'Note not found');
      await fails(intruder.delete(`/v1/notes/${mine.id}`), 404, 'Note not found');
      await fails(intruder.get(`/v1/contacts/${r.contact.id}/notes`), 404, 'Contact not found');
      expect((await intruder.post('/v1/search/notes', { q: 'roadmap' })).json().data).toEqual([]);
      expect((await intruder.get('/v1/search?q=roadmap')).json().data.notes.total).toBe(0);
    }
  });

  it('gives test mode sample notes on contacts and deals', async () => {
    const t = await tenant(app);
    const all = await walk(t.test, '/v1/notes', 200);
    expect(all).toHaveLength(6);
    expect(all.filter((n) => n.pinned)).toHaveLength(1);
    expect(all.some((n) => n.associations.deal_ids.length > 0) && all.some((n) => n.associations.contact_ids.length > 0)).toBe(true);
    expect((await t.live.get('/v1/notes')).json().pagination.total).toBe(0);
  });
});
