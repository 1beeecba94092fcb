// Custom field values through HTTP, beyond their types (fields.test.ts): text is stored and compared
// in one form (Unicode NFC, trimmed), so a unique field cannot hold one text twice in forms a reader
// cannot tell apart; and the fields of a list apply only to the records on it: a record moved to
// another list loses their values (named in its event's previous_attributes), null clears any value,
// and a list's fields are deleted with the list.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => app.close());

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function ok(res: Promise<{ statusCode: number; body: string; json(): Json }>, status = 200): Promise<Json> {
  const r = await res;
  expect(r.statusCode, r.body).toBe(status);
  return r.json().data;
}

const defineField = (c: Client, body: Json) => ok(c.post('/v1/fields', body), 201);
const contactList = async (c: Client, name: string) => (await ok(c.post('/v1/lists', { name, type: 'contacts' }), 201)).id as string;
const eventsOf = async (c: Client, type: string): Promise<Json[]> => (await c.get(`/v1/events?type=${type}&limit=200`)).json().data;
const ids = (page: Json[]) => page.map((r) => r.id).sort();

const COMPOSED = 'Caf\u00e9';
const DECOMPOSED = 'Cafe\u0301';

describe('text values', () => {
  it('are stored NFC and trimmed, so the composed, decomposed and padded forms of a unique value collide', async () => {
    const t = await tenant(app);
    await defineField(t.live, { object: 'companies', name: 'external_id', data_type: 'text', unique: true });
    const holder = await ok(t.live.post('/v1/companies', { name: 'A', custom_fields: { external_id: COMPOSED } }), 201);
    for (const form of [DECOMPOSED, `${COMPOSED} `, `  ${DECOMPOSED}\t`, `\n${COMPOSED}`]) {
      const again = await t.live.post('/v1/companies', { name: 'B', custom_fields: { external_id: form } });
      expect(again.statusCode, JSON.stringify(form)).toBe(409);
      expect(again.json()).toEqual({ type: 'conflict', detail: `Custom field external_id value ${COMPOSED} already belongs to company ${holder.id}` });
    }
    const other = await ok(t.live.post('/v1/companies', { name: 'C' }), 201);
    expect((await t.live.patch(`/v1/companies/${other.id}`, { custom_fields: { external_id: `${DECOMPOSED} ` } })).statusCode).toBe(409);
    expect((await t.live.get('/v1/companies')).json().pagination.total).toBe(2);

    // Any form finds the holder, and is the value it holds: writing it again changes nothing.
    const found = await t.live.get(`/v1/companies?custom_fields.external_id=${encodeURIComponent(`${DECOMPOSED} `)}`);
    expect(ids(found.json().data)).toEqual([holder.id]);
    for (const operator of ['eq', 'contains', 'starts_with']) {
      const searched = await t.live.post('/v1/search/companies', { filters: [{ field: 'custom_fields.external_id', operator, value: DECOMPOSED }] });
      expect([operator, searched.statusCode, ids(searched.json().data)]).toEqual([operator, 200, [holder.id]]);
    }
    const same = await ok(t.live.patch(`/v1/companies/${holder.id}`, { custom_fields: { external_id: DECOMPOSED } }));
    expect(same.updated_at).toBe(holder.updated_at);
    expect(await eventsOf(t.live, 'company.updated')).toHaveLength(0);
  });

  it('are answered in the form stored, on create, update and read', async () => {
    const t = await tenant(app);
    const list = await contactList(t.live, 'People');
    await defineField(t.live, { object: 'contacts', name: 'note', data_type: 'text' });
    await defineField(t.live, { object: 'contacts', name: 'billing_email', data_type: 'email' });
    const made = await ok(t.live.post('/v1/contacts', { list_id: list, custom_fields: { note: `  ${DECOMPOSED} au lait \n`, billing_email: ` Cafe\u0301@Example.com ` } }), 201);
    expect(made.custom_fields).toEqual({ note: `${COMPOSED} au lait`, billing_email: 'caf\u00e9@example.com' });
    expect((await ok(t.live.get(`/v1/contacts/${made.id}`))).custom_fields).toEqual(made.custom_fields);
    const changed = await ok(t.live.patch(`/v1/contacts/${made.id}`, { custom_fields: { note: ` ${DECOMPOSED} ` } }));
    expect(changed.custom_fields.note).toBe(COMPOSED);
  });
});

describe('the fields of a list', () => {
  async function setUp(c: Client) {
    const first = await contactList(c, 'First');
    const second = await contactList(c, 'Second');
    const source = await defineField(c, { object: 'contacts', name: 'source', data_type: 'text', list_id: first, unique: true });
    const score = await defineField(c, { object: 'contacts', name: 'score', data_type: 'number', list_id: second });
    await defineField(c, { object: 'contacts', name: 'segment', data_type: 'text' });
    return { first, second, source, score };
  }

  it('lose their values when the record moves to another list, named in the update event', async () => {
    const t = await tenant(app);
    const { first, second } = await setUp(t.live);
    const contact = await ok(t.live.post('/v1/contacts', { list_id: first, name: 'Ada', custom_fields: { source: 'web', segment: 'smb' } }), 201);

    const moved = await ok(t.live.patch(`/v1/contacts/${contact.id}`, { list_id: second }));
    expect(moved).toMatchObject({ list_id: second, custom_fields: { segment: 'smb' } });
    expect((await ok(t.live.get(`/v1/contacts/${contact.id}`))).custom_fields).toEqual({ segment: 'smb' });
    const [event] = await eventsOf(t.live, 'contact.updated');
    expect(event.data.object).toMatchObject({ id: contact.id, list_id: second, custom_fields: { segment: 'smb' } });
    expect(event.previous_attributes).toMatchObject({ list_id: first, custom_fields: { source: 'web', segment: 'smb' } });

    // The value is gone from the index too: no filter finds it, and the unique value is free.
    expect((await t.live.get('/v1/contacts?custom_fields.source=web')).json().data).toEqual([]);
    await ok(t.live.post('/v1/contacts', { list_id: first, name: 'Bea', custom_fields: { source: 'web' } }), 201);

    // A field of another list takes no value; a move and the new list's values go in one write.
    const refused = await t.live.patch(`/v1/contacts/${contact.id}`, { custom_fields: { source: 'mail' } });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toEqual({ type: 'validation_error', detail: [{ loc: ['body', 'custom_fields', 'source'], msg: `Custom field source applies only to contacts on list ${first}`, type: 'extra_forbidden' }], param: 'custom_fields.source' });
    const back = await ok(t.live.patch(`/v1/contacts/${contact.id}`, { list_id: first, custom_fields: { source: 'event', score: null } }));
    expect(back.custom_fields).toEqual({ segment: 'smb', source: 'event' });
    // A move that leaves nothing behind changes only the list.
    const plain = await ok(t.live.post('/v1/contacts', { list_id: first, name: 'Cy', custom_fields: { segment: 'ent' } }), 201);
    await ok(t.live.patch(`/v1/contacts/${plain.id}`, { list_id: second }));
    const [last] = await eventsOf(t.live, 'contact.updated');
    expect(last.data.object.id).toBe(plain.id);
    expect(Object.keys(last.previous_attributes).sort()).toEqual(['list_id']);
  });

  it('are cleared by null, whether they apply to the record or not', async () => {
    const t = await tenant(app);
    const { first, second } = await setUp(t.live);
    const contact = await ok(t.live.post('/v1/contacts', { list_id: second, name: 'Ada', custom_fields: { score: 3, segment: 'smb' } }), 201);
    const cleared = await ok(t.live.patch(`/v1/contacts/${contact.id}`, { custom_fields: { score: null, source: null } }));
    expect(cleared.custom_fields).toEqual({ segment: 'smb' });
    expect((await t.live.get('/v1/contacts?custom_fields.score=3')).json().data).toEqual([]);
    const [event] = await eventsOf(t.live, 'contact.updated');
    expect(event.previous_attributes).toEqual({ custom_fields: { score: 3, segment: 'smb' } });
    // Moving and clearing the former list's field at once.
    const other = await ok(t.live.post('/v1/contacts', { list_id: first, name: 'Bea', custom_fields: { source: 'web' } }), 201);
    expect((await ok(t.live.patch(`/v1/contacts/${other.id}`, { list_id: second, custom_fields: { source: null } }))).custom_fields).toEqual({});
    // A name no field has is still refused, null or not.
    const unknown = await t.live.patch(`/v1/contacts/${contact.id}`, { custom_fields: { nope: null } });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json()).toMatchObject({ type: 'validation_error', detail: [{ loc: ['body', 'custom_fields', 'nope'], type: 'extra_forbidden' }], param: 'custom_fields.nope' });
  });

  it('are deleted with the list, each with field.deleted, and their names are free again', async () => {
    const t = await tenant(app);
    const { first, second, source, score } = await setUp(t.live);
    await ok(t.live.post('/v1/contacts', { list_id: first, name: 'Ada', custom_fields: { source: 'web', segment: 'smb' } }), 201);
    const stays = await ok(t.live.post('/v1/contacts', { list_id: second, name: 'Bea', custom_fields: { score: 1 } }), 201);

    expect((await t.live.delete(`/v1/lists/${first}`)).statusCode).toBe(409);
    expect((await t.live.get(`/v1/fields/${source.id}`)).statusCode).toBe(200);
    await ok(t.live.delete(`/v1/lists/${first}?cascade=true`));
    expect((await t.live.get(`/v1/fields/${source.id}`)).statusCode).toBe(404);
    const names = (await t.live.get('/v1/fields?object=contacts&limit=200')).json().data.filter((f: Json) => !f.is_global).map((f: Json) => f.name);
    expect(names.sort()).toEqual(['score', 'segment']);
    const deleted = await eventsOf(t.live, 'field.deleted');
    expect(deleted.map((e) => e.data.object.id)).toEqual([source.id]);

    // An empty list goes with its fields without cascade; the records of other lists keep theirs.
    const empty = await contactList(t.live, 'Empty');
    const note = await defineField(t.live, { object: 'contacts', name: 'note', data_type: 'text', list_id: empty });
    await ok(t.live.delete(`/v1/lists/${empty}`));
    expect((await t.live.get(`/v1/fields/${note.id}`)).statusCode).toBe(404);
    expect((await t.live.get(`/v1/fields/${score.id}`)).statusCode).toBe(200);
    expect((await ok(t.live.get(`/v1/contacts/${stays.id}`))).custom_fields).toEqual({ score: 1 });

    // The names can be defined afresh, globally this time.
    for (const name of ['source', 'note']) await defineField(t.live, { object: 'contacts', name, data_type: 'text' });
    expect((await ok(t.live.patch(`/v1/contacts/${stays.id}`, { custom_fields: { source: 'web' } }))).custom_fields).toEqual({ score: 1, source: 'web' });
  });
});
