// Timelines through HTTP: each record's events, notes, tasks, stage changes, quotes and campaign
// enrollments in one newest-first stream, paged by cursors that neither skip nor repeat while
// others write, by page numbers, with exact totals; 404 for unknown records and other tenants'.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ok, records, walk, type Json } from '../helpers/records.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());

const timeline = (c: Client, path: string) => walk(c, `${path}/timeline`, 200);
const kinds = (items: Json[]) => items.map((i) => (i.type === 'event' ? i.object.type : i.type));
const newestFirst = (items: Json[]) => items.every((x, i) => i === 0 || items[i - 1].occurred_at >= x.occurred_at);

describe('timelines', () => {
  it('merges a contact\'s events, notes and tasks, newest first', async () => {
    const t = await tenant(app);
    const r = await records(t.live);
    const path = `/v1/contacts/${r.contact.id}`;
    const created = await timeline(t.live, path);
    expect(kinds(created)).toEqual(['contact.created']);
    expect(created[0]).toMatchObject({ type: 'event', summary: 'Contact created', occurred_at: expect.any(Number) });
    expect(created[0].object.data.object.id).toBe(r.contact.id);

    await ok(t.live.patch(path, { title: 'CTO' }));
    const n = await ok(t.live.post(`${path}/notes`, { content: 'First call went well.\nMore detail below.' }), 201);
    const k = await ok(t.live.post(`${path}/tasks`, { title: 'Send the deck', type: 'email' }), 201);
    // Another record's note and the note's own events stay out of the contact's timeline.
    await ok(t.live.post(`/v1/companies/${r.company.id}/notes`, { content: 'About the company only' }), 201);

    const items = await timeline(t.live, path);
    expect(newestFirst(items)).toBe(true);
    expect(kinds(items).sort()).toEqual(['contact.created', 'contact.updated', 'note', 'task'].sort());
    const note = items.find((i) => i.type === 'note')!;
    expect(note).toEqual({ type: 'note', occurred_at: n.created_at, summary: 'Note: First call went well.', object: n });
    expect(items.find((i) => i.type === 'task')).toEqual({ type: 'task', occurred_at: k.created_at, summary: 'Email task: Send the deck', object: k });
    expect(items.find((i) => i.type === 'event' && i.object.type === 'contact.updated')!.object.previous_attributes).toEqual({ title: null });
    expect((await t.live.get(`${path}/timeline?limit=1`)).json().pagination).toMatchObject({ total: 4, has_next: true, limit: 1 });
  });

  it('shows a deal\'s stage changes once, and a company\'s own story', async () => {
    const t = await tenant(app);
    const r = await records(t.live);
    const pipeline = (await t.live.get('/v1/deals/pipelines')).json().data.find((p: Json) => p.is_default);
    await ok(t.live.patch(`/v1/deals/${r.deal.id}`, { stage_id: pipeline.stages[2].id }));
    await ok(t.live.post(`/v1/deals/${r.deal.id}/tasks`, { title: 'Negotiate', status: 'completed' }), 201);
    const items = await timeline(t.live, `/v1/deals/${r.deal.id}`);
    expect(newestFirst(items)).toBe(true);
    // deal.stage_changed is told by the stage history, not repeated as an event.
    expect(kinds(items).sort()).toEqual(['deal.created', 'deal.updated', 'stage_change', 'stage_change', 'task'].sort());
    const stays = items.filter((i) => i.type === 'stage_change');
    expect(stays.map((s) => s.object.stage_id).sort()).toEqual([pipeline.stages[0].id, pipeline.stages[2].id].sort());
    expect(stays.find((s) => s.object.stage_id === pipeline.stages[2].id)!.summary).toBe(`Entered stage ${pipeline.stages[2].name}`);
    expect(items.find((i) => i.type === 'task')!.summary).toBe('Todo task (completed): Negotiate');

    await ok(t.live.patch(`/v1/companies/${r.company.id}`, { industry: 'Software' }));
    await ok(t.live.post(`/v1/companies/${r.company.id}/notes`, { content: 'Board meeting in May' }), 201);
    expect(kinds(await timeline(t.live, `/v1/companies/${r.company.id}`)).sort()).toEqual(['company.created', 'company.updated', 'note'].sort());
  });

  it('shows the campaigns a contact was enrolled in', async () => {
    const t = await tenant(app);
    const active = (await t.test.get('/v1/campaigns?status=active')).json().data[0];
    const members = (await t.test.get(`/v1/contacts?list_id=${active.list_id}&limit=200`)).json().data.filter((c: Json) => !c.suppressed);
    const items = await timeline(t.test, `/v1/contacts/${members[0].id}`);
    const enrollment = items.find((i) => i.type === 'campaign_enrollment');
    expect(enrollment).toEqual({
      type: 'campaign_enrollment', occurred_at: active.launched_at, summary: `Enrolled in campaign ${active.name}`,
      object: { campaign_id: active.id, campaign_name: active.name, contact_id: members[0].id, enrolled_at: active.launched_at },
    });
    expect(newestFirst(items)).toBe(true);
  });

  it('shows the quotes of a contact and of a deal in their state as of now', async () => {
    const t = await tenant(app);
    const r = await records(t.live);
    const quote = await ok(t.live.post('/v1/quotes', { title: 'Pilot', contact_id: r.contact.id, deal_id: r.deal.id, line_items: [{ name: 'Workshop', quantity: 1, unit_price: 150_000 }] }), 201);
    const sent = await ok(t.live.post(`/v1/quotes/${quote.id}/send`, {}));
    for (const path of [`/v1/contacts/${r.contact.id}`, `/v1/deals/${r.deal.id}`]) {
      const item = (await timeline(t.live, path)).find((i) => i.type === 'quote');
      expect(item, path).toEqual({ type: 'quote', occurred_at: quote.created_at, summary: `Quote ${quote.number} (sent): Pilot`, object: { ...sent, public_token: null } });
    }
    expect((await timeline(t.live, `/v1/companies/${r.company.id}`)).some((i) => i.type === 'quote')).toBe(false);
  });

  it('pages by cursor without skipping or repeating while others write, and by page number', async () => {
    const t = await tenant(app);
    const r = await records(t.live);
    const path = `/v1/deals/${r.deal.id}`;
    // Many items in the same second, of several sources: the order still places each once.
    for (let i = 0; i < 6; i++) {
      await ok(t.live.post(`${path}/notes`, { content: `Note ${i}` }), 201);
      await ok(t.live.post(`${path}/tasks`, { title: `Task ${i}` }), 201);
    }
    const all = await timeline(t.live, path);
    expect(kinds(all).filter((k) => k !== 'note' && k !== 'task').sort()).toEqual(['deal.created', 'stage_change']);
    expect(all.length).toBe(14);
    const key = (i: Json) => `${i.type}:${i.object.id}`;
    expect(new Set(all.map(key)).size).toBe(14);

    const first = (await t.live.get(`${path}/timeline?limit=5`)).json();
    expect(first.data.map(key)).toEqual(all.slice(0, 5).map(key));
    // Written after the first page: newer than the cursor, so never in the pages after it.
    await ok(t.live.post(`${path}/notes`, { content: 'Meanwhile' }), 201);
    await ok(t.live.patch(`/v1/deals/${r.deal.id}`, { name: 'Renamed' }));
    const rest: Json[] = [];
    let cursor = first.next_cursor;
    while (cursor) {
      const page = (await t.live.get(`${path}/timeline?limit=5&cursor=${encodeURIComponent(cursor)}`)).json();
      rest.push(...page.data);
      cursor = page.next_cursor;
    }
    expect([...first.data, ...rest].map(key)).toEqual(all.map(key));

    const now = await timeline(t.live, path);
    expect(now.length).toBe(16);
    const second = (await t.live.get(`${path}/timeline?limit=5&page=2`)).json();
    expect(second.data.map(key)).toEqual(now.slice(5, 10).map(key));
    expect(second.pagination).toMatchObject({ page: 2, total: 16, has_next: true });
    const last = (await t.live.get(`${path}/timeline?limit=5&page=4`)).json();
    expect(last.data.map(key)).toEqual(now.slice(15).map(key));
    expect(last.pagination).toMatchObject({ has_next: false, next_cursor: null });
    await fails(t.live.get(`${path}/timeline?cursor=not-a-cursor`), 400);
    await fails(t.live.get(`/v1/contacts/${r.contact.id}/timeline?cursor=${encodeURIComponent(first.next_cursor)}`), 400);
    await fails(t.live.get(`${path}/timeline?limit=0`), 422);
  });

  it('answers 404 for unknown records and other tenants\' records', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const r = await records(a.live);
    for (const [path, record, message] of [['contacts', r.contact, 'Contact not found'], ['companies', r.company, 'Company not found'], ['deals', r.deal, 'Deal not found']] as const) {
      await fails(a.live.get(`/v1/${path}/${path.slice(0, 3)}_missing/timeline`), 404, message);
      for (const intruder of [b.live, b.test, a.test]) await fails(intruder.get(`/v1/${path}/${record.id}/timeline`), 404, message);
      expect((await a.live.get(`/v1/${path}/${record.id}/timeline`)).statusCode).toBe(200);
    }
  });
});
