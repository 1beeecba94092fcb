// Contacts through HTTP: every endpoint, the named errors, filters, moves between lists and
// suppression.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, tenant, testApp, type Client } from '../helpers/app.ts';
import { walk, type Json } from '../helpers/records.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
});
afterAll(() => app.close());

const MISSING_CONTACT = 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B';
const MISSING_LIST = 'lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B';

async function makeList(c: Client, type = 'contacts') {
  const res = await c.post('/v1/lists', { name: `${type} list`, type });
  expect(res.statusCode).toBe(201);
  return res.json().data.id as string;
}

async function makeContact(c: Client, body: Record<string, unknown>) {
  const res = await c.post('/v1/contacts', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

const memberCount = async (c: Client, listId: string) => (await c.get(`/v1/lists/${listId}`)).json().data.member_count as number;
const ids = async (c: Client, query: string) => (await c.get(`/v1/contacts?limit=200&${query}`)).json().data.map((x: { id: string }) => x.id).sort();

describe('POST /v1/contacts', () => {
  it('creates a contact with every field', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live);
    const input = {
      list_id: list, first_name: 'Ada', last_name: 'Lovelace', title: 'VP Engineering', company: 'Analytical Engines Ltd',
      work_email: 'Ada@Example.COM', personal_email: 'ADA@home.example', phone: '+44 20 7946 0000',
      linkedin_url: 'https://www.linkedin.com/in/ada', city: 'London', country: 'GB', seniority: 'vp', department: 'engineering', timezone: 'Europe/London', tags: ['vip', 'q4'],
    };
    const before = Math.floor(Date.now() / 1000);
    const res = await t.live.post('/v1/contacts', input);
    expect(res.statusCode).toBe(201);
    const contact = res.json().data;
    expect(contact).toEqual({
      ...input,
      id: expect.stringMatching(/^con_[0-9A-Z]{26}$/),
      name: 'Ada Lovelace', work_email: 'ada@example.com', personal_email: 'ada@home.example', phone: '+442079460000',
      company_id: null, suppressed: false, custom_fields: {}, created_at: expect.any(Number), updated_at: expect.any(Number),
    });
    expect(contact.created_at).toBeGreaterThanOrEqual(before);
    expect(contact.updated_at).toBe(contact.created_at);
    expect(await memberCount(t.live, list)).toBe(1);
    expect((await t.live.get(`/v1/contacts/${contact.id}`)).json().data).toEqual(contact);
  });

  it('fills absent fields with null and an empty tag list', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live, 'leads');
    const contact = await makeContact(t.live, { list_id: list });
    expect(contact).toMatchObject({ list_id: list, name: null, title: null, work_email: null, tags: [], suppressed: false });
    expect((await makeContact(t.live, { list_id: list, name: 'Given Name', first_name: 'Other' })).name).toBe('Given Name');
  });

  it('requires list_id with the spec\'s message', async () => {
    const t = await tenant(app);
    const res = await t.live.post('/v1/contacts', { work_email: 'a@example.com', name: 'No list' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ type: 'bad_request', detail: 'list_id is required when creating contacts', param: 'list_id' });
    expect((await t.live.post('/v1/contacts', {})).json()).toEqual({ type: 'bad_request', detail: 'list_id is required when creating contacts', param: 'list_id' });
    expect((await t.live.get('/v1/contacts')).json().pagination.total).toBe(0);
  });

  it('answers List not found for an unknown, foreign or other-mode list', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const theirs = await makeList(other.live);
    const testList = await makeList(t.test);
    for (const listId of [MISSING_LIST, theirs, testList]) {
      const res = await t.live.post('/v1/contacts', { list_id: listId, name: 'x' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ type: 'not_found', detail: 'List not found' });
    }
    expect(await memberCount(other.live, theirs)).toBe(0);
  });

  it('puts contacts only on lists of type contacts or leads', async () => {
    const t = await tenant(app);
    for (const type of ['companies', 'suppressions', 'deals']) {
      const res = await t.live.post('/v1/contacts', { list_id: await makeList(t.live, type), name: 'x' });
      expect(res.statusCode, type).toBe(400);
      expect(typeof res.json().detail).toBe('string');
    }
  });

  it('refuses a malformed e-mail address with 422', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live);
    for (const field of ['work_email', 'personal_email']) {
      const res = await t.live.post('/v1/contacts', { list_id: list, [field]: 'not-an-email' });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail).toEqual([{ loc: ['body', field], msg: 'value is not a valid email address', type: 'value_error.email' }]);
    }
    expect(await memberCount(t.live, list)).toBe(0);
  });
});

describe('GET /v1/contacts/{id}', () => {
  it('answers Contact not found for unknown, foreign, other-mode and deleted ids', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const contact = await makeContact(t.live, { list_id: await makeList(t.live), name: 'Mine' });
    for (const [c, id] of [[t.live, MISSING_CONTACT], [t.live, 'x'], [other.live, contact.id], [t.test, contact.id]] as const) {
      const res = await c.get(`/v1/contacts/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ type: 'not_found', detail: 'Contact not found' });
    }
    await t.live.delete(`/v1/contacts/${contact.id}`);
    expect((await t.live.get(`/v1/contacts/${contact.id}`)).json()).toEqual({ type: 'not_found', detail: 'Contact not found' });
    expect((await client(app, undefined).get(`/v1/contacts/${contact.id}`)).statusCode).toBe(401);
  });
});

describe('PATCH /v1/contacts/{id}', () => {
  it('changes the fields given and clears fields set to null', async () => {
    const t = await tenant(app);
    const contact = await makeContact(t.live, { list_id: await makeList(t.live), name: 'Ada', title: 'CTO', city: 'London', tags: ['a'] });
    const res = await t.live.patch(`/v1/contacts/${contact.id}`, { title: 'CEO', city: null, work_email: 'ADA@New.Example', tags: ['b', 'c'] });
    expect(res.statusCode).toBe(200);
    const updated = res.json().data;
    expect(updated).toEqual({ ...contact, title: 'CEO', city: null, work_email: 'ada@new.example', tags: ['b', 'c'], updated_at: expect.any(Number) });
    expect(updated.updated_at).toBeGreaterThanOrEqual(contact.updated_at);
    expect((await t.live.get(`/v1/contacts/${contact.id}`)).json().data).toEqual(updated);
  });

  it('refuses an empty body with No fields to update', async () => {
    const t = await tenant(app);
    const contact = await makeContact(t.live, { list_id: await makeList(t.live) });
    const res = await t.live.patch(`/v1/contacts/${contact.id}`, {});
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ type: 'bad_request', detail: 'No fields to update' });
  });

  it('answers Contact not found for unknown and foreign ids', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const theirs = await makeContact(other.live, { list_id: await makeList(other.live), title: 'Theirs' });
    for (const id of [MISSING_CONTACT, theirs.id]) {
      const res = await t.live.patch(`/v1/contacts/${id}`, { title: 'Hijacked' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ type: 'not_found', detail: 'Contact not found' });
    }
    expect((await other.live.get(`/v1/contacts/${theirs.id}`)).json().data.title).toBe('Theirs');
  });

  it('refuses read-only fields and bad values', async () => {
    const t = await tenant(app);
    const contact = await makeContact(t.live, { list_id: await makeList(t.live) });
    for (const body of [{ id: 'con_other' }, { suppressed: true }, { company_id: 'cmp_x' }, { created_at: 1 }]) {
      const res = await t.live.patch(`/v1/contacts/${contact.id}`, body);
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0]).toMatchObject({ loc: ['body', Object.keys(body)[0]], type: 'extra_forbidden' });
    }
    expect((await t.live.patch(`/v1/contacts/${contact.id}`, { work_email: 'nope' })).statusCode).toBe(422);
    expect((await t.live.patch(`/v1/contacts/${contact.id}`, { tags: 'vip' })).statusCode).toBe(422);
  });

  it('moves a contact to another list with list_id', async () => {
    const t = await tenant(app);
    const from = await makeList(t.live);
    const to = await makeList(t.live, 'leads');
    const contact = await makeContact(t.live, { list_id: from, name: 'Mover' });
    await makeContact(t.live, { list_id: from, name: 'Stayer' });
    expect([await memberCount(t.live, from), await memberCount(t.live, to)]).toEqual([2, 0]);

    const moved = await t.live.patch(`/v1/contacts/${contact.id}`, { list_id: to });
    expect(moved.statusCode).toBe(200);
    expect(moved.json().data.list_id).toBe(to);
    expect([await memberCount(t.live, from), await memberCount(t.live, to)]).toEqual([1, 1]);
    expect(await ids(t.live, `list_id=${to}`)).toEqual([contact.id]);
    expect((await t.live.get(`/v1/contacts?list_id=${from}`)).json().pagination.total).toBe(1);

    // Moving to the list it is on changes nothing.
    await t.live.patch(`/v1/contacts/${contact.id}`, { list_id: to });
    expect([await memberCount(t.live, from), await memberCount(t.live, to)]).toEqual([1, 1]);
  });

  it('refuses a move to an unknown list or a list that cannot hold contacts, changing nothing', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const from = await makeList(t.live);
    const contact = await makeContact(t.live, { list_id: from, title: 'Before' });
    for (const listId of [MISSING_LIST, await makeList(other.live)]) {
      const res = await t.live.patch(`/v1/contacts/${contact.id}`, { list_id: listId, title: 'After' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ type: 'not_found', detail: 'List not found' });
    }
    const companies = await makeList(t.live, 'companies');
    expect((await t.live.patch(`/v1/contacts/${contact.id}`, { list_id: companies })).statusCode).toBe(400);
    expect((await t.live.get(`/v1/contacts/${contact.id}`)).json().data).toMatchObject({ list_id: from, title: 'Before' });
    expect(await memberCount(t.live, from)).toBe(1);
    expect(await memberCount(t.live, companies)).toBe(0);
  });
});

describe('DELETE /v1/contacts/{id}', () => {
  it('deletes a contact and its membership', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live);
    const contact = await makeContact(t.live, { list_id: list });
    const res = await t.live.delete(`/v1/contacts/${contact.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { id: contact.id, deleted: true } });
    expect(await memberCount(t.live, list)).toBe(0);
    expect((await t.live.get('/v1/contacts')).json().pagination.total).toBe(0);
    const again = await t.live.delete(`/v1/contacts/${contact.id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ type: 'not_found', detail: 'Contact not found' });
  });

  it('answers Contact not found for another tenant\'s contact and leaves it alone', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const theirs = await makeContact(other.live, { list_id: await makeList(other.live) });
    const res = await t.live.delete(`/v1/contacts/${theirs.id}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ type: 'not_found', detail: 'Contact not found' });
    expect((await other.live.get(`/v1/contacts/${theirs.id}`)).statusCode).toBe(200);
  });
});

describe('GET /v1/contacts filters', () => {
  it('filters by title, list, company, e-mail, tag and creation time', async () => {
    const t = await tenant(app);
    const a = await makeList(t.live);
    const b = await makeList(t.live, 'leads');
    const eng = await makeContact(t.live, { list_id: a, title: 'Senior Software ENGINEER', company: 'Acme', work_email: 'eng@acme.example', tags: ['vip'] });
    const mgr = await makeContact(t.live, { list_id: a, title: 'Engineering Manager', company: 'acme', tags: ['q4', 'vip'] });
    const sales = await makeContact(t.live, { list_id: b, title: 'Account Executive', company: 'Acme', work_email: 'sales@other.example' });
    const pct = await makeContact(t.live, { list_id: b, title: '100% remote_ops' });
    const none = await makeContact(t.live, { list_id: b });
    const other = await tenant(app);
    await makeContact(other.live, { list_id: await makeList(other.live), title: 'Engineer', company: 'Acme', tags: ['vip'] });

    expect(await ids(t.live, 'title=engineer')).toEqual([eng.id, mgr.id].sort());
    expect(await ids(t.live, 'title=ENGINEERING')).toEqual([mgr.id]);
    expect(await ids(t.live, 'title=%25')).toEqual([pct.id]);
    expect(await ids(t.live, 'title=_')).toEqual([pct.id]);
    expect(await ids(t.live, 'title=nothing-like-this')).toEqual([]);
    expect(await ids(t.live, `list_id=${a}`)).toEqual([eng.id, mgr.id].sort());
    expect(await ids(t.live, `list_id=${b}`)).toEqual([sales.id, pct.id, none.id].sort());
    expect(await ids(t.live, `list_id=${MISSING_LIST}`)).toEqual([]);
    expect(await ids(t.live, 'company=Acme')).toEqual([eng.id, mgr.id, sales.id].sort());
    expect(await ids(t.live, 'work_email=ENG@ACME.example')).toEqual([eng.id]);
    expect(await ids(t.live, 'tag=vip')).toEqual([eng.id, mgr.id].sort());
    expect(await ids(t.live, 'tag=q4')).toEqual([mgr.id]);
    expect(await ids(t.live, 'tag=vi')).toEqual([]);
    expect(await ids(t.live, 'title=engineer&tag=q4')).toEqual([mgr.id]);
    expect(await ids(t.live, `title=engineer&list_id=${b}`)).toEqual([]);

    const created = eng.created_at as number;
    const all = [eng, mgr, sales, pct, none].map((c) => c.id).sort();
    expect(await ids(t.live, `created_after=${created - 10}`)).toEqual(all);
    expect(await ids(t.live, `created_after=${created + 3600}`)).toEqual([]);
    expect(await ids(t.live, `created_before=${created + 3600}`)).toEqual(all);
    expect(await ids(t.live, `created_before=${created - 10}`)).toEqual([]);
    expect(await ids(t.live, `created_after=${created - 10}&created_before=${created + 3600}&tag=vip`)).toEqual([eng.id, mgr.id].sort());

    const page = (await t.live.get('/v1/contacts?title=engineer&limit=1')).json();
    expect(page.pagination).toMatchObject({ total: 2, has_next: true, limit: 1 });
    expect((await t.live.get(`/v1/contacts?list_id=${b}`)).json().pagination.total).toBe(3);
  });
});

describe('GET /v1/contacts by creation time', () => {
  // A page of a creation-time window walks the key over the ids its records can have: every
  // boundary must still give exactly the records created in the window, page after page.
  const idsOf = (records: Json[]) => records.map((r) => r.id as string);
  const within = (records: Json[], after?: number, before?: number) =>
    idsOf(records.filter((r) => (after === undefined || r.created_at >= after) && (before === undefined || r.created_at < before)));

  it('gives exactly the sandbox contacts of each window, created over months', async () => {
    const t = await tenant(app);
    const everyone = await walk(t.test, '/v1/contacts', 200);
    const times = [...new Set(everyone.map((c) => c.created_at as number))].sort((a, b) => a - b);
    expect(times.length).toBeGreaterThan(20);
    const step = Math.ceil(times.length / 10);
    const picks = [...times.filter((_, i) => i % step === 0), times[times.length - 1]];
    for (const [i, v] of picks.entries()) {
      expect(idsOf(await walk(t.test, `/v1/contacts?created_after=${v}`, 40))).toEqual(within(everyone, v));
      expect(idsOf(await walk(t.test, `/v1/contacts?created_before=${v}`, 40))).toEqual(within(everyone, undefined, v));
      expect(idsOf(await walk(t.test, `/v1/contacts?created_after=${v}&created_before=${v + 1}`, 2))).toEqual(within(everyone, v, v + 1));
      const next = picks[i + 1] ?? v + 1;
      expect(idsOf(await walk(t.test, `/v1/contacts?created_after=${v}&created_before=${next}`, 7))).toEqual(within(everyone, v, next));
    }
  });

  it('gives exactly the contacts created in this second and the ones before', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live);
    const made: Json[] = [];
    for (let i = 0; i < 5; i++) made.push(await makeContact(t.live, { list_id: list, first_name: `C${i}` }));
    const newestFirst = [...made].reverse();
    for (const v of new Set(made.map((c) => c.created_at as number))) {
      expect(idsOf(await walk(t.live, `/v1/contacts?created_after=${v}`, 2))).toEqual(within(newestFirst, v));
      expect(idsOf(await walk(t.live, `/v1/contacts?created_before=${v}`, 2))).toEqual(within(newestFirst, undefined, v));
      expect(idsOf(await walk(t.live, `/v1/contacts?created_after=${v}&created_before=${v + 1}`, 2))).toEqual(within(newestFirst, v, v + 1));
    }
  });
});

describe('suppression', () => {
  it('marks contacts whose address or domain is on a suppression list', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live);
    const byEmail = await makeContact(t.live, { list_id: list, work_email: 'Blocked@Example.com' });
    const byDomain = await makeContact(t.live, { list_id: list, work_email: 'anyone@banned.example' });
    const byPersonal = await makeContact(t.live, { list_id: list, personal_email: 'me@private.example' });
    const byPersonalDomain = await makeContact(t.live, { list_id: list, work_email: 'her@fine.example', personal_email: 'her@banned.example' });
    const clean = await makeContact(t.live, { list_id: list, work_email: 'fine@example.com' });
    const sub = await makeContact(t.live, { list_id: list, work_email: 'x@sub.banned.example' });

    const suppressions = await makeList(t.live, 'suppressions');
    const added = (await t.live.post(`/v1/lists/${suppressions}/entries`, { values: ['blocked@example.com', 'BANNED.example', 'me@private.example'] })).json().data;

    const suppressed = async (id: string) => (await t.live.get(`/v1/contacts/${id}`)).json().data.suppressed as boolean;
    expect(await suppressed(byEmail.id)).toBe(true);
    expect(await suppressed(byDomain.id)).toBe(true);
    expect(await suppressed(byPersonal.id)).toBe(true);
    expect(await suppressed(clean.id)).toBe(false);
    expect(await suppressed(sub.id)).toBe(false);
    // A list's first answer and the one it keeps (on PostgreSQL read beside the page's rows).
    for (let i = 0; i < 2; i++) {
      const listed = (await t.live.get(`/v1/contacts?list_id=${list}`)).json().data;
      expect(Object.fromEntries(listed.map((c: { id: string; suppressed: boolean }) => [c.id, c.suppressed]))).toEqual({
        [byEmail.id]: true, [byDomain.id]: true, [byPersonal.id]: true, [byPersonalDomain.id]: true, [clean.id]: false, [sub.id]: false,
      });
    }
    expect((await makeContact(t.live, { list_id: list, work_email: 'new@banned.example' })).suppressed).toBe(true);

    const domainEntry = added.entries.find((e: { value: string }) => e.value === 'banned.example');
    await t.live.delete(`/v1/lists/${suppressions}/entries/${domainEntry.id}`);
    expect(await suppressed(byDomain.id)).toBe(false);
    expect(await suppressed(byEmail.id)).toBe(true);

    // Editing the address re-evaluates it.
    const edited = await t.live.patch(`/v1/contacts/${clean.id}`, { work_email: 'blocked@example.com' });
    expect(edited.json().data.suppressed).toBe(true);
  });

  it('applies only the tenant\'s own suppression lists', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const theirSuppressions = await makeList(other.live, 'suppressions');
    await other.live.post(`/v1/lists/${theirSuppressions}/entries`, { values: ['shared.example'] });
    const testSuppressions = await makeList(t.test, 'suppressions');
    await t.test.post(`/v1/lists/${testSuppressions}/entries`, { values: ['shared.example'] });
    const mine = await makeContact(t.live, { list_id: await makeList(t.live), work_email: 'a@shared.example' });
    expect(mine.suppressed).toBe(false);
    const theirs = await makeContact(other.live, { list_id: await makeList(other.live), work_email: 'a@shared.example' });
    expect(theirs.suppressed).toBe(true);
  });
});

// Creates that arrive together share one transaction (group commit), and a run of contact creates
// reads their lists, companies and suppression entries in one statement before the first of them
// runs (ReadAhead in platform/write.ts). Each must still answer what it would alone.
describe('contacts created together', () => {
  it('answers each create its own list, company and suppression', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live);
    const leads = await makeList(t.live, 'leads');
    const company = (await t.live.post('/v1/companies', { name: 'Acme', domain: 'acme.example' })).json().data;
    const suppressions = await makeList(t.live, 'suppressions');
    await t.live.post(`/v1/lists/${suppressions}/entries`, { values: ['blocked.example', 'me@private.example'] });
    const bodies = [
      { list_id: list, work_email: 'a@acme.example' },
      { list_id: leads, work_email: 'B@ACME.EXAMPLE' },
      { list_id: list, work_email: 'c@blocked.example' },
      { list_id: list, work_email: 'd@other.example', personal_email: 'me@private.example' },
      { list_id: leads, work_email: 'e@other.example' },
      { list_id: list, first_name: 'No', last_name: 'Mail' },
    ];
    const created = await Promise.all(bodies.map((body) => t.live.post('/v1/contacts', body)));
    expect(created.map((r) => r.statusCode)).toEqual(bodies.map(() => 201));
    const answers = created.map((r) => r.json().data);
    expect(answers.map((c) => [c.list_id, c.company_id, c.suppressed])).toEqual([
      [list, company.id, false], [leads, company.id, false], [list, null, true], [list, null, true], [leads, null, false], [list, null, false],
    ]);
    for (const answer of answers) expect((await t.live.get(`/v1/contacts/${answer.id}`)).json().data).toEqual(answer);
    expect(await memberCount(t.live, list)).toBe(4);
    expect(await memberCount(t.live, leads)).toBe(2);
  });

  it('refuses only the creates naming an unknown list or one that cannot hold contacts', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live);
    const companiesList = await makeList(t.live, 'companies');
    const other = await tenant(app);
    const theirs = await makeList(other.live);
    const bodies = [list, MISSING_LIST, list, companiesList, theirs, list].map((listId, i) => ({ list_id: listId, work_email: `p${i}@example.com` }));
    const answered = await Promise.all(bodies.map((body) => t.live.post('/v1/contacts', body)));
    expect(answered.map((r) => r.statusCode)).toEqual([201, 404, 201, 400, 404, 201]);
    expect(answered[1].json()).toEqual({ type: 'not_found', detail: 'List not found' });
    expect(answered[4].json()).toEqual({ type: 'not_found', detail: 'List not found' });
    expect(answered[3].json().detail).toMatch(/^Contacts can only be on lists of type/);
    expect(await memberCount(t.live, list)).toBe(3);
    expect(await memberCount(t.live, companiesList)).toBe(0);
    expect(await memberCount(other.live, theirs)).toBe(0);
    expect(await ids(t.live, `list_id=${list}`)).toEqual(answered.filter((r) => r.statusCode === 201).map((r) => r.json().data.id).sort());
  });

  it('reads what the writes before its run in the same transaction changed', async () => {
    const t = await tenant(app);
    const list = await makeList(t.live);
    const suppressions = await makeList(t.live, 'suppressions');
    const create = (local: string) => t.live.post('/v1/contacts', { list_id: list, work_email: `${local}@new.example` });
    // A company and a suppression entry written in the same group commit, between runs of creates.
    const answered = await Promise.all([
      create('a'), create('b'),
      t.live.post('/v1/companies', { name: 'New', domain: 'new.example' }),
      create('c'), create('d'),
      t.live.post(`/v1/lists/${suppressions}/entries`, { values: ['new.example'] }),
      create('e'), create('f'),
    ]);
    expect(answered.map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201, 201, 201, 201]);
    const company = answered[2].json().data;
    const contacts = [0, 1, 3, 4, 6, 7].map((i) => answered[i].json().data);
    expect(contacts.map((c) => [c.company_id, c.suppressed])).toEqual([
      [null, false], [null, false], [company.id, false], [company.id, false], [company.id, true], [company.id, true],
    ]);
    // The company links the contacts of its domain created before it.
    for (const c of contacts) expect((await t.live.get(`/v1/contacts/${c.id}`)).json().data).toMatchObject({ company_id: company.id });
  });
});
