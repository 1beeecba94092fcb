// Tasks through HTTP: fields and defaults, completed_at and the completion events, overdue computed
// when read, every filter (overdue included), associations and their 404s, the tasks of a contact,
// company or deal, assert, custom fields, search, paging, isolation and the sandbox's tasks.
import { afterAll, describe, expect, it } from 'vitest';
import { clock, tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ids, ok, records, walk, type Json } from '../helpers/records.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());

const now = () => clock.seconds();
const task = (c: Client, body: object) => ok(c.post('/v1/tasks', body), 201);
const listed = async (c: Client, query: string) => {
  const page = (await c.get(`/v1/tasks?limit=200&${query}`)).json();
  expect(page.pagination.total).toBe(page.data.length);
  return ids(page.data).sort();
};
const events = async (c: Client, type: string) => (await c.get(`/v1/events?type=${type}&limit=200`)).json().data as Json[];

describe('tasks', () => {
  it('creates with defaults, reads back, and refuses what is not a task', async () => {
    const t = await tenant(app);
    const plain = await task(t.live, { title: 'Call Ada' });
    expect(plain).toMatchObject({
      title: 'Call Ada', description: null, type: 'todo', status: 'open', priority: 0, due_at: null, completed_at: null, assignee: null,
      external_key: null, custom_fields: {}, overdue: false, associations: { contact_ids: [], company_ids: [], deal_ids: [] },
    });
    expect(plain.id).toMatch(/^tsk_/);
    expect(await ok(t.live.get(`/v1/tasks/${plain.id}`))).toEqual(plain);

    await fails(t.live.post('/v1/tasks', { description: 'no title' }), 400, 'title is required', { param: 'title' });
    await fails(t.live.post('/v1/tasks', { title: 'x', type: 'fax' }), 400);
    await fails(t.live.post('/v1/tasks', { title: 'x', status: 'overdue' }), 400);
    expect((await fails(t.live.post('/v1/tasks', { title: 'x', priority: 5 }), 422)).detail[0].loc).toEqual(['body', 'priority']);
    expect((await fails(t.live.post('/v1/tasks', { title: 'x', due_at: 'tomorrow' }), 422)).detail[0].loc).toEqual(['body', 'due_at']);
    await fails(t.live.post('/v1/tasks', { title: 'x', completed_at: 1 }), 422);
    await fails(t.live.patch(`/v1/tasks/${plain.id}`, {}), 400, 'No fields to update');
    await fails(t.live.get('/v1/tasks/tsk_missing'), 404, 'Task not found');
    await fails(t.live.patch('/v1/tasks/tsk_missing', { title: 'y' }), 404, 'Task not found');
    await fails(t.live.delete('/v1/tasks/tsk_missing'), 404, 'Task not found');
  });

  it('sets completed_at with the status and records task.completed and task.reopened', async () => {
    const t = await tenant(app);
    const open = await task(t.live, { title: 'Send pricing', due_at: now() - 60 });
    expect(open.overdue).toBe(true);
    const done = await ok(t.live.patch(`/v1/tasks/${open.id}`, { status: 'completed' }));
    expect(done.completed_at).toBeGreaterThanOrEqual(now() - 5);
    expect(done.overdue).toBe(false);
    const [completed] = await events(t.live, 'task.completed');
    expect(completed.data.object).toEqual(done);
    expect(completed.previous_attributes).toEqual({ status: 'open', completed_at: null });
    // task.updated names every field that changed with the status, overdue and completed_at too.
    const [updated] = await events(t.live, 'task.updated');
    expect(updated.previous_attributes).toEqual({ status: 'open', completed_at: null, overdue: true });
    // Completing again changes nothing of completed_at and records no second completion.
    expect((await ok(t.live.patch(`/v1/tasks/${open.id}`, { status: 'completed', priority: 1 }))).completed_at).toBe(done.completed_at);
    expect(await events(t.live, 'task.completed')).toHaveLength(1);
    expect((await events(t.live, 'task.updated'))[0].previous_attributes).toEqual({ priority: 0 });
    // Values the task has already (an empty association set, a null key among them) change nothing:
    // 200 with the task as it is, no event, updated_at unchanged.
    const as = await ok(t.live.get(`/v1/tasks/${open.id}`));
    for (const body of [{ status: 'completed' }, { associations: {} }, { external_key: null, priority: 1 }]) {
      expect(await ok(t.live.patch(`/v1/tasks/${open.id}`, body)), JSON.stringify(body)).toEqual(as);
    }
    expect(await events(t.live, 'task.updated')).toHaveLength(2);

    const reopened = await ok(t.live.patch(`/v1/tasks/${open.id}`, { status: 'open' }));
    expect(reopened).toMatchObject({ status: 'open', completed_at: null, overdue: true });
    expect((await events(t.live, 'task.reopened'))[0].data.object).toEqual(reopened);
    expect(await task(t.live, { title: 'Done already', status: 'completed' })).toMatchObject({ status: 'completed', completed_at: expect.any(Number) });
    const deleted = await ok(t.live.delete(`/v1/tasks/${open.id}`));
    expect(deleted).toEqual({ id: open.id, deleted: true });
    expect((await events(t.live, 'task.deleted'))[0].data.object.id).toBe(open.id);
  });

  it('filters by each parameter, overdue included, with exact totals', async () => {
    const t = await tenant(app);
    const r = await records(t.live);
    const other = await records(t.live, 'Grace');
    const at = now();
    const a = await task(t.live, { title: 'Call Ada about the pilot', type: 'call', priority: 3, assignee: 'ada@example.com', due_at: at - 3600, associations: { contact_ids: [r.contact.id] } });
    const b = await task(t.live, { title: 'E-mail the proposal', type: 'email', priority: 1, assignee: 'grace@example.com', due_at: at + 86_400, associations: { company_ids: [r.company.id], deal_ids: [r.deal.id] } });
    const c = await task(t.live, { title: 'Pilot kickoff', type: 'meeting', priority: 3, status: 'completed', due_at: at - 7200, associations: { deal_ids: [other.deal.id] } });
    const d = await task(t.live, { title: 'Connect on LinkedIn', type: 'linkedin', assignee: 'ada@example.com' });

    expect(await listed(t.live, '')).toEqual([a.id, b.id, c.id, d.id].sort());
    expect(await listed(t.live, 'status=overdue')).toEqual([a.id]);
    expect(await listed(t.live, 'status=open')).toEqual([a.id, b.id, d.id].sort());
    expect(await listed(t.live, 'status=completed')).toEqual([c.id]);
    expect(await listed(t.live, 'priority=3')).toEqual([a.id, c.id].sort());
    expect(await listed(t.live, 'assignee=ada@example.com')).toEqual([a.id, d.id].sort());
    expect(await listed(t.live, 'type=email')).toEqual([b.id]);
    expect(await listed(t.live, `due_before=${at}`)).toEqual([a.id, c.id].sort());
    expect(await listed(t.live, `due_after=${at}`)).toEqual([b.id]);
    expect(await listed(t.live, `due_after=${at - 3600}&due_before=${at + 86_400}`)).toEqual([a.id]);
    expect(await listed(t.live, `contact_id=${r.contact.id}`)).toEqual([a.id]);
    expect(await listed(t.live, `company_id=${r.company.id}`)).toEqual([b.id]);
    expect(await listed(t.live, `deal_id=${r.deal.id}`)).toEqual([b.id]);
    expect(await listed(t.live, 'search=PILOT')).toEqual([a.id, c.id].sort());
    expect(await listed(t.live, 'search=pilot&status=overdue')).toEqual([a.id]);
    expect(await listed(t.live, 'status=overdue&priority=1')).toEqual([]);
    await fails(t.live.get('/v1/tasks?status=late'), 400);
    await fails(t.live.get('/v1/tasks?priority=9'), 422);
  });

  it('becomes overdue when its due time passes, with no write in between', async () => {
    const t = await tenant(app);
    const due = now() + 60;
    const soon = await task(t.live, { title: 'Due in a moment', due_at: due });
    expect(await listed(t.live, 'status=overdue')).toEqual([]);
    expect((await t.live.get('/v1/tasks')).json().data[0].overdue).toBe(false);
    clock.set(due + 1);
    expect(await listed(t.live, 'status=overdue')).toEqual([soon.id]);
    expect((await t.live.get('/v1/tasks')).json().data[0].overdue).toBe(true);
  });

  it('checks associations in the tenant, replaces them by kind and loses them with their records', async () => {
    const t = await tenant(app);
    const r = await records(t.live);
    const foreign = await records((await tenant(app)).live, 'Other');
    await fails(t.live.post('/v1/tasks', { title: 'x', associations: { contact_ids: ['con_missing'] } }), 404, 'Contact not found');
    await fails(t.live.post('/v1/tasks', { title: 'x', associations: { company_ids: [foreign.company.id] } }), 404, 'Company not found');
    await fails(t.live.post('/v1/tasks', { title: 'x', associations: { contact_ids: [r.contact.id], deal_ids: ['dea_missing'] } }), 404, 'Deal not found');
    await fails(t.test.post('/v1/tasks', { title: 'x', associations: { contact_ids: [r.contact.id] } }), 404, 'Contact not found');
    await fails(t.live.post('/v1/tasks', { title: 'x', associations: { list_ids: [r.list.id] } }), 422);
    // A refused create leaves nothing behind.
    expect((await t.live.get('/v1/tasks')).json().pagination.total).toBe(0);

    const made = await task(t.live, { title: 'Both', associations: { contact_ids: [r.contact.id, r.contact.id], deal_ids: [r.deal.id] } });
    expect(made.associations).toEqual({ contact_ids: [r.contact.id], company_ids: [], deal_ids: [r.deal.id] });
    const changed = await ok(t.live.patch(`/v1/tasks/${made.id}`, { associations: { company_ids: [r.company.id], contact_ids: [] } }));
    expect(changed.associations).toEqual({ contact_ids: [], company_ids: [r.company.id], deal_ids: [r.deal.id] });
    const [updated] = await events(t.live, 'task.updated');
    expect(updated.previous_attributes).toEqual({ associations: made.associations });
    await fails(t.live.patch(`/v1/tasks/${made.id}`, { associations: { deal_ids: ['dea_missing'] } }), 404, 'Deal not found');
    expect((await ok(t.live.get(`/v1/tasks/${made.id}`))).associations).toEqual(changed.associations);

    // The association goes with a deleted record; the task stays.
    await ok(t.live.delete(`/v1/deals/${r.deal.id}`));
    await ok(t.live.delete(`/v1/companies/${r.company.id}`));
    expect((await ok(t.live.get(`/v1/tasks/${made.id}`))).associations).toEqual({ contact_ids: [], company_ids: [], deal_ids: [] });
    // Also when the record goes with its list.
    const onContact = await task(t.live, { title: 'On the contact', associations: { contact_ids: [r.contact.id] } });
    await ok(t.live.delete(`/v1/lists/${r.list.id}?cascade=true`));
    expect((await ok(t.live.get(`/v1/tasks/${onContact.id}`))).associations.contact_ids).toEqual([]);
    expect(await listed(t.live, `contact_id=${r.contact.id}`)).toEqual([]);
  });

  it('lists and creates the tasks of a contact, company or deal', async () => {
    const t = await tenant(app);
    const r = await records(t.live);
    for (const [path, key, record] of [['contacts', 'contact_ids', r.contact], ['companies', 'company_ids', r.company], ['deals', 'deal_ids', r.deal]] as const) {
      const made = await ok(t.live.post(`/v1/${path}/${record.id}/tasks`, { title: `On the ${path}`, priority: 2, associations: { contact_ids: [r.contact.id] } }), 201);
      expect(made.associations[key]).toContain(record.id);
      expect(made.associations.contact_ids).toEqual([r.contact.id]);
      const page = (await t.live.get(`/v1/${path}/${record.id}/tasks?priority=2`)).json();
      expect(ids(page.data)).toContain(made.id);
      await fails(t.live.get(`/v1/${path}/${path.slice(0, 3)}_missing/tasks`), 404, `${{ contacts: 'Contact', companies: 'Company', deals: 'Deal' }[path]} not found`);
      await fails(t.live.post(`/v1/${path}/${path.slice(0, 3)}_missing/tasks`, { title: 'x' }), 404);
      await fails(t.live.post(`/v1/${path}/${record.id}/tasks`, {}), 400, 'title is required', { param: 'title' });
    }
    // The contact's list: the three tasks (each names the contact), with the usual filters and paging.
    const mine = await walk(t.live, `/v1/contacts/${r.contact.id}/tasks`, 2);
    expect(mine).toHaveLength(3);
    expect((await t.live.get(`/v1/contacts/${r.contact.id}/tasks?limit=1`)).json().pagination).toMatchObject({ total: 3, has_next: true });
    expect((await t.live.get(`/v1/deals/${r.deal.id}/tasks?status=completed`)).json().pagination.total).toBe(0);
    await fails(t.live.get(`/v1/contacts/${r.contact.id}/tasks?cursor=bogus`), 400);
  });

  it('pages with cursors that neither skip nor repeat while others write', async () => {
    const t = await tenant(app);
    const made = [];
    for (let i = 0; i < 7; i++) made.push(await task(t.live, { title: `Task ${i}` }));
    const first = (await t.live.get('/v1/tasks?limit=3')).json();
    await task(t.live, { title: 'Written meanwhile' });
    // A cursor is bound to its filters: with others it is refused.
    await fails(t.live.get(`/v1/tasks?limit=3&status=open&cursor=${encodeURIComponent(first.next_cursor)}`), 400);
    const seen = [...first.data];
    let cursor = first.next_cursor;
    while (cursor) {
      const page = (await t.live.get(`/v1/tasks?limit=3&cursor=${encodeURIComponent(cursor)}`)).json();
      seen.push(...page.data);
      cursor = page.next_cursor;
    }
    expect(ids(seen)).toEqual(ids(made).reverse());
    expect((await t.live.get('/v1/tasks?limit=3&page=3')).json().data.map((x: Json) => x.title)).toEqual(['Task 1', 'Task 0']);
  });

  it('asserts on external_key, takes custom fields, and is found by search', async () => {
    const t = await tenant(app);
    await ok(t.live.post('/v1/fields', { object: 'tasks', name: 'outcome', data_type: 'text' }), 201);
    const first = await t.live('PUT', '/v1/tasks/assert', { external_key: 'crm-1', title: 'Quarterly review', custom_fields: { outcome: 'booked' } });
    expect(first.statusCode, first.body).toBe(201);
    const again = await t.live('PUT', '/v1/tasks/assert', { external_key: 'crm-1', title: 'Quarterly business review' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data).toMatchObject({ id: first.json().data.id, title: 'Quarterly business review', custom_fields: { outcome: 'booked' } });
    await fails(t.live.post('/v1/tasks', { title: 'x', external_key: 'crm-1' }), 409);
    // Associations are part of what an assert compares and changes.
    const { contact } = await records(t.live);
    const linked = await t.live('PUT', '/v1/tasks/assert', { external_key: 'crm-1', title: 'Quarterly business review', associations: { contact_ids: [contact.id] } });
    expect(linked.json()).toMatchObject({ action: 'updated', data: { associations: { contact_ids: [contact.id] } } });
    expect((await t.live('PUT', '/v1/tasks/assert', { external_key: 'crm-1', title: 'Quarterly business review', associations: { contact_ids: [contact.id] } })).json().action).toBe('noop');
    expect(await listed(t.live, 'custom_fields.outcome=booked')).toEqual([first.json().data.id]);

    const late = await task(t.live, { title: 'Renewal call', description: 'Discuss the quarterly numbers', due_at: now() - 10 });
    const search = async (body: object) => ids((await ok(t.live.post('/v1/search/tasks', body))) as never as Json[]);
    expect((await search({ q: 'quarter' })).sort()).toEqual([first.json().data.id, late.id].sort());
    expect(await search({ filters: [{ field: 'overdue', operator: 'eq', value: true }] })).toEqual([late.id]);
    expect(await search({ filters: [{ field: 'overdue', operator: 'eq', value: false }] })).toEqual([first.json().data.id]);
    expect(await search({ sort: [{ field: 'overdue', direction: 'desc' }] })).toEqual([late.id, first.json().data.id]);
    const global = (await t.live.get('/v1/search?q=renewal')).json().data;
    expect(ids(global.tasks.data)).toEqual([late.id]);
  });

  it('keeps every tenant\'s tasks to itself', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const r = await records(a.live);
    const mine = await task(a.live, { title: 'Private', associations: { contact_ids: [r.contact.id] } });
    for (const intruder of [b.live, b.test, a.test]) {
      await fails(intruder.get(`/v1/tasks/${mine.id}`), 404, 'Task not found');
      await fails(intruder.patch(`/v1/tasks/${mine.id}`, { title: 'x' }), 404, 'Task not found');
      await fails(intruder.get(`/v1/contacts/${r.contact.id}/tasks`), 404, 'Contact not found');
      await fails(intruder.post(`/v1/contacts/${r.contact.id}/tasks`, { title: 'x' }), 404, 'Contact not found');
      expect(ids((await intruder.get(`/v1/tasks?contact_id=${r.contact.id}`)).json().data)).toEqual([]);
      expect((await intruder.get('/v1/search?q=private')).json().data.tasks.total).toBe(0);
    }
  });

  it('gives test mode sample tasks on contacts and deals, some overdue and some completed', async () => {
    const t = await tenant(app);
    const all = await walk(t.test, '/v1/tasks', 200);
    // Eight of its own, and the three intro calls its sequence waits on.
    expect(all.length).toBe(11);
    expect(all.filter((x) => x.title === 'Founder outreach: Intro call' && x.type === 'call' && x.status === 'open')).toHaveLength(3);
    expect(all.filter((x) => x.overdue).length).toBeGreaterThanOrEqual(2);
    expect(all.filter((x) => x.status === 'completed').every((x) => x.completed_at !== null)).toBe(true);
    expect(all.some((x) => x.status === 'completed')).toBe(true);
    expect(all.some((x) => x.associations.deal_ids.length > 0) && all.some((x) => x.associations.contact_ids.length > 0)).toBe(true);
    expect((await t.test.get('/v1/tasks?status=overdue')).json().pagination.total).toBe(all.filter((x) => x.overdue).length);
    expect((await t.live.get('/v1/tasks')).json().pagination.total).toBe(0);
  });
});
