// Members through HTTP: fields and defaults, the unique e-mail, IANA time zones, roles, every filter,
// scopes, tenant isolation, members as task assignees (a member id must exist, free text stays free),
// the refusal to delete a member who has open tasks, and the sandbox's members.
import { afterAll, describe, expect, it } from 'vitest';
import { client, tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ids, ok, type Json } from '../helpers/records.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());

const member = (c: Client, body: object) => ok(c.post('/v1/members', body), 201);
const task = (c: Client, body: object) => ok(c.post('/v1/tasks', body), 201);
const listed = async (c: Client, query: string) => {
  const page = (await c.get(`/v1/members?limit=200&${query}`)).json();
  expect(page.pagination.total).toBe(page.data.length);
  return ids(page.data).sort();
};
const events = async (c: Client, type: string) => (await c.get(`/v1/events?type=${type}&limit=200`)).json().data as Json[];
const noSandbox = { sandbox: false };

describe('members', () => {
  it('creates with defaults, reads back, updates and deletes, recording each event', async () => {
    const t = await tenant(app, noSandbox);
    const ada = await member(t.live, { name: 'Ada Lovelace', email: 'Ada@Example.COM' });
    expect(ada).toEqual({
      id: expect.stringMatching(/^mem_/), name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'UTC', role: 'member', is_active: true,
      created_at: expect.any(Number), updated_at: expect.any(Number),
    });
    expect(await ok(t.live.get(`/v1/members/${ada.id}`))).toEqual(ada);
    expect((await events(t.live, 'member.created'))[0].data.object).toEqual(ada);

    const changed = await ok(t.live.patch(`/v1/members/${ada.id}`, { role: 'admin', timezone: 'europe/london', is_active: false }));
    expect(changed).toMatchObject({ role: 'admin', timezone: 'Europe/London', is_active: false });
    const [updated] = await events(t.live, 'member.updated');
    expect(updated.data.object).toEqual(changed);
    expect(updated.previous_attributes).toMatchObject({ role: 'member', timezone: 'UTC', is_active: true });

    expect(await ok(t.live.delete(`/v1/members/${ada.id}`))).toEqual({ id: ada.id, deleted: true });
    expect((await events(t.live, 'member.deleted'))[0].data.object.id).toBe(ada.id);
    await fails(t.live.get(`/v1/members/${ada.id}`), 404, 'Member not found');
    await fails(t.live.patch(`/v1/members/${ada.id}`, { name: 'Ada' }), 404, 'Member not found');
    await fails(t.live.delete(`/v1/members/${ada.id}`), 404, 'Member not found');
  });

  it('refuses a missing name or e-mail, a malformed e-mail, an unknown role and an unknown time zone', async () => {
    const t = await tenant(app, noSandbox);
    await fails(t.live.post('/v1/members', { email: 'a@example.com' }), 400, 'name is required', { param: 'name' });
    await fails(t.live.post('/v1/members', { name: 'Ada' }), 400, 'email is required', { param: 'email' });
    expect((await fails(t.live.post('/v1/members', { name: 'Ada', email: 'not an address' }), 422)).detail[0].loc).toEqual(['body', 'email']);
    await fails(t.live.post('/v1/members', { name: 'Ada', email: 'a@example.com', role: 'owner' }), 400);
    for (const timezone of ['Mars/Olympus', '+02:00', 'UTC+2', '']) {
      const refused = await fails(t.live.post('/v1/members', { name: 'Ada', email: 'a@example.com', timezone }), 422);
      expect(refused.detail[0].loc, timezone).toEqual(['body', 'timezone']);
    }
    const ada = await member(t.live, { name: 'Ada', email: 'a@example.com', timezone: 'Asia/Tokyo', role: 'admin' });
    expect(ada).toMatchObject({ timezone: 'Asia/Tokyo', role: 'admin' });
    expect((await fails(t.live.patch(`/v1/members/${ada.id}`, { timezone: 'Europe/Atlantis' }), 422)).detail[0].loc).toEqual(['body', 'timezone']);
    await fails(t.live.patch(`/v1/members/${ada.id}`, { role: 'owner' }), 400);
    await fails(t.live.patch(`/v1/members/${ada.id}`, {}), 400, 'No fields to update');
    expect(await ok(t.live.get(`/v1/members/${ada.id}`))).toEqual(ada);
    // Nothing refused was written.
    expect((await t.live.get('/v1/members')).json().pagination.total).toBe(1);
  });

  it('keeps e-mail addresses unique within the organization and mode, ignoring case: 409 naming the holder', async () => {
    const t = await tenant(app, noSandbox);
    const ada = await member(t.live, { name: 'Ada', email: 'ada@example.com' });
    await fails(t.live.post('/v1/members', { name: 'Ada again', email: 'ADA@example.com' }), 409, `Email ada@example.com already belongs to member ${ada.id}`);
    const grace = await member(t.live, { name: 'Grace', email: 'grace@example.com' });
    await fails(t.live.patch(`/v1/members/${grace.id}`, { email: 'ada@example.com' }), 409, `Email ada@example.com already belongs to member ${ada.id}`);
    // The other mode and other organizations have their own members.
    expect(await member(t.test, { name: 'Ada (test)', email: 'ada@example.com' })).toMatchObject({ email: 'ada@example.com' });
    const other = await tenant(app, noSandbox);
    expect(await member(other.live, { name: 'Another Ada', email: 'ada@example.com' })).toMatchObject({ email: 'ada@example.com' });
    // Once the holder is gone, the address is free.
    await ok(t.live.delete(`/v1/members/${ada.id}`));
    expect(await ok(t.live.patch(`/v1/members/${grace.id}`, { email: 'ada@example.com' }))).toMatchObject({ email: 'ada@example.com' });
  });

  it('filters by role, is_active, email and search, with exact totals', async () => {
    const t = await tenant(app, noSandbox);
    const ada = await member(t.live, { name: 'Ada Lovelace', email: 'ada@engines.example', role: 'admin' });
    const grace = await member(t.live, { name: 'Grace Hopper', email: 'grace@navy.example' });
    const alan = await member(t.live, { name: 'Alan Turing', email: 'alan@bletchley.example', is_active: false });
    expect(await listed(t.live, '')).toEqual([ada.id, grace.id, alan.id].sort());
    expect(await listed(t.live, 'role=admin')).toEqual([ada.id]);
    expect(await listed(t.live, 'role=member')).toEqual([grace.id, alan.id].sort());
    expect(await listed(t.live, 'is_active=false')).toEqual([alan.id]);
    expect(await listed(t.live, 'is_active=true&role=member')).toEqual([grace.id]);
    expect(await listed(t.live, 'email=Grace@Navy.example')).toEqual([grace.id]);
    expect(await listed(t.live, 'email=nobody@example.com')).toEqual([]);
    expect(await listed(t.live, 'search=HOPPER')).toEqual([grace.id]);
    expect(await listed(t.live, 'search=bletchley')).toEqual([alan.id]);
    expect(await listed(t.live, 'search=a')).toEqual([ada.id, grace.id, alan.id].sort());
    // Wildcards of LIKE match themselves only.
    expect(await listed(t.live, 'search=%25')).toEqual([]);
    expect(await listed(t.live, 'search=_')).toEqual([]);
    await fails(t.live.get('/v1/members?role=owner'), 400);
  });

  it('needs members:read to read and members:write to write, naming the scope it lacks', async () => {
    const t = await tenant(app, noSandbox);
    const ada = await member(t.live, { name: 'Ada', email: 'ada@example.com' });
    const keyWith = async (scopes: string[]) => client(app, (await ok(t.live.post('/auth/v1/api-keys', { name: 'restricted', scopes }), 201)).api_key_token);
    const reader = await keyWith(['members:read']);
    expect(ids((await ok(reader.get('/v1/members'))) as unknown as Json[])).toEqual([ada.id]);
    expect((await ok(reader.get(`/v1/members/${ada.id}`))).id).toBe(ada.id);
    const refusals: Array<[Promise<{ statusCode: number; body: string; json(): Json }>, string]> = [
      [reader.post('/v1/members', { name: 'Grace', email: 'grace@example.com' }), 'members:write'],
      [reader.patch(`/v1/members/${ada.id}`, { name: 'Ada L.' }), 'members:write'],
      [reader.delete(`/v1/members/${ada.id}`), 'members:write'],
      [(await keyWith(['tasks:write'])).get('/v1/members'), 'members:read'],
    ];
    for (const [reply, scope] of refusals) {
      const res = await reply;
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json()).toEqual({ type: 'permission_denied', detail: `API key lacks scope ${scope}`, scope });
    }
    const writer = await keyWith(['members:write']);
    expect(await member(writer, { name: 'Grace', email: 'grace@example.com' })).toMatchObject({ name: 'Grace' });
    const catalog = JSON.stringify((await t.live.get('/auth/v1/scopes')).json());
    expect(catalog).toContain('members:read');
    expect(catalog).toContain('members:write');
  });

  it('answers another organization and the other mode as if the member did not exist', async () => {
    const a = await tenant(app, noSandbox);
    const b = await tenant(app, noSandbox);
    const ada = await member(a.live, { name: 'Ada', email: 'ada@example.com' });
    for (const intruder of [b.live, b.test, a.test]) {
      await fails(intruder.get(`/v1/members/${ada.id}`), 404, 'Member not found');
      await fails(intruder.patch(`/v1/members/${ada.id}`, { name: 'Mallory' }), 404, 'Member not found');
      await fails(intruder.delete(`/v1/members/${ada.id}`), 404, 'Member not found');
      expect((await intruder.get('/v1/members')).json().pagination.total).toBe(0);
      // Nor can its tasks be assigned to her.
      await fails(intruder.post('/v1/tasks', { title: 'Steal', assignee: ada.id }), 404, 'Member not found');
    }
    expect(await ok(a.live.get(`/v1/members/${ada.id}`))).toEqual(ada);
  });
});

describe('members as assignees of tasks', () => {
  it('takes a member id that exists, answers it as given, and keeps free-text assignees working', async () => {
    const t = await tenant(app, noSandbox);
    const ada = await member(t.live, { name: 'Ada', email: 'ada@example.com' });
    const assigned = await task(t.live, { title: 'Call Grace', assignee: ada.id });
    expect(assigned.assignee).toBe(ada.id);
    expect(await ok(t.live.get(`/v1/tasks/${assigned.id}`))).toMatchObject({ assignee: ada.id });
    expect(ids((await t.live.get(`/v1/tasks?assignee=${ada.id}`)).json().data)).toEqual([assigned.id]);

    await fails(t.live.post('/v1/tasks', { title: 'Nobody', assignee: 'mem_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' }), 404, 'Member not found');
    await fails(t.live.post('/v1/tasks', { title: 'Typo', assignee: 'mem_typo' }), 404, 'Member not found');
    await fails(t.live.patch(`/v1/tasks/${assigned.id}`, { assignee: 'mem_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' }), 404, 'Member not found');
    await fails(t.live('PUT', '/v1/tasks/assert', { external_key: 'k-1', title: 'Asserted', assignee: 'mem_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' }), 404, 'Member not found');
    expect(await ok(t.live.get(`/v1/tasks/${assigned.id}`))).toMatchObject({ assignee: ada.id });
    expect((await t.live.get('/v1/tasks')).json().pagination.total).toBe(1);

    for (const assignee of ['grace@example.com', 'Grace Hopper', 'usr_42', 'member of the team']) {
      expect((await task(t.live, { title: 'Free text', assignee })).assignee).toBe(assignee);
    }
    const moved = await ok(t.live.patch(`/v1/tasks/${assigned.id}`, { assignee: 'grace@example.com' }));
    expect(moved.assignee).toBe('grace@example.com');
    expect((await ok(t.live.patch(`/v1/tasks/${assigned.id}`, { assignee: ada.id }))).assignee).toBe(ada.id);
  });

  it('refuses to delete a member who is the assignee of open tasks; completed tasks keep the id', async () => {
    const t = await tenant(app, noSandbox);
    const ada = await member(t.live, { name: 'Ada', email: 'ada@example.com' });
    const first = await task(t.live, { title: 'First', assignee: ada.id });
    const second = await task(t.live, { title: 'Second', assignee: ada.id });
    const refusal = 'Member is the assignee of 2 open tasks; reassign or complete them first, or set is_active to false to keep the member';
    await fails(t.live.delete(`/v1/members/${ada.id}`), 409, refusal);
    await ok(t.live.patch(`/v1/tasks/${first.id}`, { status: 'completed' }));
    await fails(t.live.delete(`/v1/members/${ada.id}`), 409, refusal.replace('2 open tasks', '1 open task'));
    // Deactivating is always allowed: the member keeps their tasks.
    expect((await ok(t.live.patch(`/v1/members/${ada.id}`, { is_active: false }))).is_active).toBe(false);
    await ok(t.live.patch(`/v1/tasks/${second.id}`, { assignee: 'grace@example.com' }));

    expect(await ok(t.live.delete(`/v1/members/${ada.id}`))).toEqual({ id: ada.id, deleted: true });
    expect(await ok(t.live.get(`/v1/tasks/${first.id}`))).toMatchObject({ status: 'completed', assignee: ada.id });
    // The completed task can be changed as long as no open task would name the deleted member.
    expect(await ok(t.live.patch(`/v1/tasks/${first.id}`, { title: 'First, done' }))).toMatchObject({ assignee: ada.id });
    await fails(t.live.patch(`/v1/tasks/${first.id}`, { status: 'open' }), 404, 'Member not found');
    expect(await ok(t.live.patch(`/v1/tasks/${first.id}`, { status: 'open', assignee: 'grace@example.com' }))).toMatchObject({ status: 'open', assignee: 'grace@example.com' });
  });
});

describe('sandbox members', () => {
  it('gives test mode an admin and two members in different time zones, restored by a reset', async () => {
    const t = await tenant(app);
    const seeded = (await t.test.get('/v1/members?limit=200')).json();
    expect(seeded.pagination.total).toBe(3);
    const people: Json[] = seeded.data;
    expect(people.map((m) => m.role).sort()).toEqual(['admin', 'member', 'member']);
    expect(new Set(people.map((m) => m.timezone)).size).toBe(3);
    expect(people.every((m) => m.is_active && m.email.endsWith('@example.com'))).toBe(true);
    expect((await t.test.get('/v1/events?type=member.created')).json().pagination.total).toBe(3);
    // The sample tasks name them by e-mail; the sandbox sequence's intro calls by id, as a sequence's tasks do.
    const assignees = new Set((await t.test.get('/v1/tasks?limit=200')).json().data.map((x: Json) => x.assignee));
    for (const a of assignees) expect(people.flatMap((m) => [m.email, m.id])).toContain(a);
    expect((await t.live.get('/v1/members')).json().pagination.total).toBe(0);

    await ok(t.test.delete(`/v1/members/${people[0].id}`));
    expect((await ok(t.test.post('/v1/sandbox/reset'))).members).toBe(3);
    const again: Json[] = (await t.test.get('/v1/members?limit=200')).json().data;
    const strip = ({ id: _id, created_at: _c, updated_at: _u, ...rest }: Json) => rest;
    const byEmail = (a: Json, b: Json) => a.email.localeCompare(b.email);
    expect(again.map(strip).sort(byEmail)).toEqual(people.map(strip).sort(byEmail));
  });
});
