// Deals through HTTP: where a deal goes by default, the stage rules (400/404), status, closed_at and
// probability that follow the stage, deal.stage_changed and the stage history, contacts on a deal,
// every filter with exact totals, the summary's exact totals, lists of deals, and the sandbox deals.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ok, type Json } from '../helpers/records.ts';

const app = await testApp();
afterAll(() => app.close());

const defaultPipeline = async (c: Client) => (await c.get('/v1/deals/pipelines')).json().data.find((p: Json) => p.is_default);
const deal = (c: Client, body: object) => ok(c.post('/v1/deals', body), 201);
const ids = (page: Json) => page.data.map((x: Json) => x.id).sort();

describe('deals', () => {
  it('goes to the default pipeline\'s first stage, or the given pipeline\'s, or the given stage\'s pipeline', async () => {
    const t = await tenant(app);
    const main = await defaultPipeline(t.live);
    const plain = await deal(t.live, { name: 'Plain' });
    expect(plain).toMatchObject({ pipeline_id: main.id, stage_id: main.stages[0].id, status: 'open', probability: 10, currency: 'USD', amount: null, weighted_amount: null, closed_at: null, tags: [] });
    const other = await ok(t.live.post('/v1/deals/pipelines', { name: 'Other' }), 201);
    expect(await deal(t.live, { name: 'P', pipeline_id: other.id })).toMatchObject({ pipeline_id: other.id, stage_id: other.stages[0].id });
    expect(await deal(t.live, { name: 'S', stage_id: other.stages[2].id })).toMatchObject({ pipeline_id: other.id, stage_id: other.stages[2].id, probability: 50 });

    await fails(t.live.post('/v1/deals', { name: 'X', pipeline_id: main.id, stage_id: other.stages[1].id }), 400, `Stage ${other.stages[1].id} is not a stage of pipeline ${main.id}`);
    await fails(t.live.patch(`/v1/deals/${plain.id}`, { stage_id: other.stages[1].id }), 400, `Stage ${other.stages[1].id} is not a stage of pipeline ${main.id}`);
    await fails(t.live.post('/v1/deals', { name: 'X', stage_id: 'stg_missing' }), 404, 'Stage not found');
    await fails(t.live.post('/v1/deals', { name: 'X', pipeline_id: 'pip_missing' }), 404, 'Pipeline not found');
    await fails(t.live.post('/v1/deals', { name: 'X', company_id: 'cmp_missing' }), 404, 'Company not found');
    await fails(t.live.post('/v1/deals', {}), 400);
    // Another tenant's stage is as unknown as a missing one.
    const u = await tenant(app);
    await fails(u.live.post('/v1/deals', { name: 'X', stage_id: main.stages[1].id }), 404, 'Stage not found');
    await fails(t.test.post('/v1/deals', { name: 'X', pipeline_id: main.id }), 404, 'Pipeline not found');

    // A new pipeline alone moves the deal to its first stage.
    const moved = await ok(t.live.patch(`/v1/deals/${plain.id}`, { pipeline_id: other.id }));
    expect(moved).toMatchObject({ pipeline_id: other.id, stage_id: other.stages[0].id });
  });

  it('validates amount, currency and dates', async () => {
    const t = await tenant(app);
    const eur = await deal(t.live, { name: 'Euro', amount: 250_000, currency: 'eur', expected_close_date: '2027-03-31' });
    expect(eur).toMatchObject({ currency: 'EUR', amount: 250_000, weighted_amount: 25_000, expected_close_date: '2027-03-31' });
    const bad = await fails(t.live.post('/v1/deals', { name: 'X', currency: 'XYZ' }), 422);
    expect(bad.detail[0]).toMatchObject({ loc: ['body', 'currency'], type: 'value_error.currency' });
    await fails(t.live.post('/v1/deals', { name: 'X', currency: 'US' }), 422);
    await fails(t.live.post('/v1/deals', { name: 'X', amount: -1 }), 422);
    await fails(t.live.post('/v1/deals', { name: 'X', amount: 1.5 }), 422);
    await fails(t.live.post('/v1/deals', { name: 'X', probability: 101 }), 422);
    await fails(t.live.post('/v1/deals', { name: 'X', expected_close_date: '2027-02-30' }), 422);
    await fails(t.live.post('/v1/deals', { name: 'X', status: 'won' }), 422);
    await fails(t.live.get('/v1/deals?expected_close_before=tomorrow'), 422);
  });

  it('follows the stage: status, closed_at, probability; records deal.stage_changed and the stage history', async () => {
    const t = await tenant(app);
    const p = await defaultPipeline(t.live);
    const [qual, disc, , , won, lost] = p.stages.map((s: Json) => s.id);
    const d = await deal(t.live, { name: 'D', amount: 10_000 });
    const disco = await ok(t.live.patch(`/v1/deals/${d.id}`, { stage_id: disc }));
    expect(disco).toMatchObject({ probability: 25, weighted_amount: 2_500, status: 'open' });
    const own = await ok(t.live.patch(`/v1/deals/${d.id}`, { probability: 40 }));
    expect(own).toMatchObject({ probability: 40, weighted_amount: 4_000 });
    const closed = await ok(t.live.patch(`/v1/deals/${d.id}`, { stage_id: won }));
    expect(closed).toMatchObject({ status: 'won', probability: 40 });
    expect(closed.closed_at).toBeGreaterThan(0);
    const lostDeal = await ok(t.live.patch(`/v1/deals/${d.id}`, { stage_id: lost, probability: null }));
    expect(lostDeal).toMatchObject({ status: 'lost', probability: 0, closed_at: closed.closed_at });
    const reopened = await ok(t.live.patch(`/v1/deals/${d.id}`, { stage_id: qual }));
    expect(reopened).toMatchObject({ status: 'open', closed_at: null, probability: 10 });

    const changes = (await t.live.get('/v1/events?type=deal.stage_changed&limit=200')).json().data.filter((e: Json) => e.data.object.id === d.id).reverse();
    expect(changes.map((e: Json) => [e.data.object.previous_stage_id, e.data.object.stage_id, e.previous_attributes.stage_id])).toEqual([
      [qual, disc, qual], [disc, won, disc], [won, lost, won], [lost, qual, lost],
    ]);
    // A change without a new stage records none.
    await ok(t.live.patch(`/v1/deals/${d.id}`, { name: 'Renamed', stage_id: qual }));
    expect((await t.live.get('/v1/events?type=deal.stage_changed&limit=200')).json().pagination.total).toBe(4);

    const history = (await t.live.get(`/v1/deals/${d.id}/stage-history?limit=2`)).json();
    expect(history.pagination.total).toBe(5);
    expect(history.data.map((h: Json) => h.stage_id)).toEqual([qual, lost]);
    expect(history.data[0]).toMatchObject({ left_at: null, stage_name: 'Qualification', deal_id: d.id, pipeline_id: p.id });
    expect(history.data[1].left_at).toBeGreaterThanOrEqual(history.data[1].entered_at);
    expect(history.data[1].seconds_in_stage).toBe(history.data[1].left_at - history.data[1].entered_at);
    const rest = (await t.live.get(`/v1/deals/${d.id}/stage-history?limit=2&cursor=${history.next_cursor}`)).json();
    expect(rest.data.map((h: Json) => h.stage_id)).toEqual([won, disc]);
    await fails(t.live.get('/v1/deals/dea_missing/stage-history'), 404, 'Deal not found');
    await fails(t.test.get(`/v1/deals/${d.id}/stage-history`), 404, 'Deal not found');
  });

  it('answers the probability its stage has now, read one by one and page by page', async () => {
    const t = await tenant(app);
    const p = await defaultPipeline(t.live);
    const disc = p.stages[1].id;
    const follows = [await deal(t.live, { name: 'F1', amount: 10_000, stage_id: disc }), await deal(t.live, { name: 'F2', amount: 20_000, stage_id: disc })];
    const own = await deal(t.live, { name: 'Own', amount: 10_000, stage_id: disc, probability: 70 });
    expect(follows[0]).toMatchObject({ probability: 25, weighted_amount: 2_500 });
    await ok(t.live.patch(`/v1/deals/pipelines/${p.id}/stages/${disc}`, { probability: 30 }));
    expect(await ok(t.live.get(`/v1/deals/${follows[0].id}`))).toMatchObject({ probability: 30, weighted_amount: 3_000 });
    expect(await ok(t.live.get(`/v1/deals/${own.id}`))).toMatchObject({ probability: 70, weighted_amount: 7_000 });
    // A first page and the pages a cursor reaches (read by other statements) agree.
    const url = `/v1/deals?stage_id=${disc}&limit=1`;
    const seen: Json[] = [];
    let page = (await t.live.get(url)).json();
    seen.push(...page.data);
    while (page.next_cursor) {
      page = (await t.live.get(`${url}&cursor=${encodeURIComponent(page.next_cursor)}`)).json();
      expect(page.pagination.total).toBe(3);
      seen.push(...page.data);
    }
    expect(Object.fromEntries(seen.map((d) => [d.name, [d.probability, d.weighted_amount]]))).toEqual({ F1: [30, 3_000], F2: [30, 6_000], Own: [70, 7_000] });
  });

  it('puts contacts on a deal with a role, lists them from both sides, and removes them', async () => {
    const t = await tenant(app);
    const list = await ok(t.live.post('/v1/lists', { name: 'People', type: 'contacts' }), 201);
    const ada = await ok(t.live.post('/v1/contacts', { name: 'Ada', list_id: list.id }), 201);
    const bob = await ok(t.live.post('/v1/contacts', { name: 'Bob', list_id: list.id }), 201);
    const d = await deal(t.live, { name: 'D' });
    const e = await deal(t.live, { name: 'E' });
    const put = (dealId: string, contactId: string, body?: object) => t.live('PUT', `/v1/deals/${dealId}/contacts/${contactId}`, body ?? {});
    const link = await ok(put(d.id, ada.id, { role: 'Champion' }));
    expect(link).toMatchObject({ deal_id: d.id, contact_id: ada.id, role: 'Champion', contact: ada });
    // The same link again (no role, or the same role) writes nothing: no event, updated_at unchanged.
    expect(await ok(put(d.id, ada.id))).toEqual(link);
    expect(await ok(put(d.id, ada.id, { role: 'Champion' }))).toEqual(link);
    expect(await ok(put(d.id, ada.id, { role: 'Buyer' }))).toMatchObject({ role: 'Buyer' });
    await ok(put(d.id, bob.id));
    await ok(put(e.id, ada.id, { role: null }));
    const onDeal = (await t.live.get(`/v1/deals/${d.id}/contacts`)).json();
    expect(onDeal.pagination.total).toBe(2);
    expect(onDeal.data.map((l: Json) => [l.contact_id, l.role]).sort()).toEqual([[ada.id, 'Buyer'], [bob.id, null]].sort());
    const adaDeals = (await t.live.get(`/v1/contacts/${ada.id}/deals`)).json();
    expect(adaDeals.pagination.total).toBe(2);
    expect(adaDeals.data.map((x: Json) => x.id)).toEqual([e.id, d.id]);
    expect(adaDeals.data[1]).toEqual(await ok(t.live.get(`/v1/deals/${d.id}`)));
    expect(ids((await t.live.get(`/v1/deals?contact_id=${bob.id}`)).json())).toEqual([d.id]);
    const events = (await t.live.get('/v1/events?limit=200')).json().data;
    const types = events.map((x: Json) => x.type);
    expect(types.filter((x: string) => x === 'deal.contact_added').length).toBe(3);
    expect(types.filter((x: string) => x === 'deal.contact_updated').length).toBe(1);
    // The role changed to Buyer: the event has the deal and the link (not a copy of the contact), and the role before.
    const toBuyer = events.find((x: Json) => x.type === 'deal.contact_updated' && x.data.object.contact_link.role === 'Buyer');
    expect(toBuyer.data.object).toMatchObject({ id: d.id, name: 'D', contact_link: { deal_id: d.id, contact_id: ada.id, role: 'Buyer' } });
    expect(Object.keys(toBuyer.data.object.contact_link).sort()).toEqual(['contact_id', 'created_at', 'deal_id', 'role', 'updated_at']);
    expect(toBuyer.previous_attributes).toEqual({ role: 'Champion' });

    await fails(put(d.id, 'con_missing'), 404, 'Contact not found');
    await fails(put('dea_missing', ada.id), 404, 'Deal not found');
    await fails(put(d.id, ada.id, { role: 'x'.repeat(101) }), 422);
    await fails(t.test('PUT', `/v1/deals/${d.id}/contacts/${ada.id}`, {}), 404, 'Deal not found');
    await fails(t.live.get('/v1/contacts/con_missing/deals'), 404, 'Contact not found');

    expect(await ok(t.live.delete(`/v1/deals/${d.id}/contacts/${bob.id}`))).toEqual({ id: bob.id, deleted: true });
    await fails(t.live.delete(`/v1/deals/${d.id}/contacts/${bob.id}`), 404, 'Contact is not on this deal');
    // A deleted contact leaves its deals; a deleted deal its contacts.
    await ok(t.live.delete(`/v1/contacts/${ada.id}`));
    expect((await t.live.get(`/v1/deals/${d.id}/contacts`)).json().pagination.total).toBe(0);
    await ok(t.live.delete(`/v1/deals/${e.id}`));
    expect((await t.live.get(`/v1/contacts/${bob.id}/deals`)).json().pagination.total).toBe(0);
  });

  it('puts contacts on a deal in the write that creates it, or creates nothing', async () => {
    const t = await tenant(app);
    const list = await ok(t.live.post('/v1/lists', { name: 'People', type: 'contacts' }), 201);
    const ada = await ok(t.live.post('/v1/contacts', { name: 'Ada', list_id: list.id, work_email: 'ada@engines.example' }), 201);
    const bob = await ok(t.live.post('/v1/contacts', { name: 'Bob', list_id: list.id, personal_email: 'bob@mail.example' }), 201);
    const d = await deal(t.live, { name: 'With people', contacts: [{ contact_id: ada.id, role: 'Champion' }, { contact_id: bob.id }] });
    const links = (await t.live.get(`/v1/deals/${d.id}/contacts`)).json();
    expect(links.data.map((l: Json) => [l.contact_id, l.role]).sort()).toEqual([[ada.id, 'Champion'], [bob.id, null]].sort());
    expect(d).not.toHaveProperty('contacts');
    const added = (await t.live.get('/v1/events?type=deal.contact_added')).json().data;
    expect(added.map((e: Json) => [e.data.object.id, e.data.object.contact_link.contact_id]).sort()).toEqual([[d.id, ada.id], [d.id, bob.id]].sort());
    // The events name each contact and its role, as a put's do; they do not copy the contact.
    const onEvents = new Map(added.map((e: Json) => [e.data.object.contact_link.contact_id, e.data.object.contact_link]));
    expect(onEvents.get(ada.id)).toEqual({ deal_id: d.id, contact_id: ada.id, role: 'Champion', created_at: d.created_at, updated_at: d.created_at });
    expect(onEvents.get(bob.id)).toEqual({ deal_id: d.id, contact_id: bob.id, role: null, created_at: d.created_at, updated_at: d.created_at });

    // An unknown contact, another tenant's, or one named twice: nothing is created.
    const u = await tenant(app);
    const theirs = await ok(u.live.post('/v1/contacts', { name: 'Eve', list_id: (await ok(u.live.post('/v1/lists', { name: 'L', type: 'contacts' }), 201)).id }), 201);
    const before = (await t.live.get('/v1/deals')).json().pagination.total;
    await fails(t.live.post('/v1/deals', { name: 'X', contacts: [{ contact_id: ada.id }, { contact_id: 'con_missing' }] }), 404, 'Contact not found');
    await fails(t.live.post('/v1/deals', { name: 'X', contacts: [{ contact_id: theirs.id }] }), 404, 'Contact not found');
    await fails(t.live.post('/v1/deals', { name: 'X', contacts: [{ contact_id: ada.id }, { contact_id: ada.id }] }), 400, 'Each contact may be put on a deal once');
    await fails(t.live.post('/v1/deals', { name: 'X', contacts: [{ contact_id: ada.id, role: 'x'.repeat(101) }] }), 422);
    await fails(t.live.patch(`/v1/deals/${d.id}`, { contacts: [{ contact_id: ada.id }] }), 422);
    expect((await t.live.get('/v1/deals')).json().pagination.total).toBe(before);
    expect((await t.live.get(`/v1/contacts/${ada.id}/deals`)).json().pagination.total).toBe(1);
  });

  it('filters by every documented field with exact totals', async () => {
    const t = await tenant(app);
    const p = await defaultPipeline(t.live);
    const acme = await ok(t.live.post('/v1/companies', { name: 'Acme' }), 201);
    const a = await deal(t.live, { name: 'Alpha renewal', amount: 100, owner: 'ada', company_id: acme.id, expected_close_date: '2027-01-10' });
    const b = await deal(t.live, { name: 'Beta', amount: 500, owner: 'bob', stage_id: p.stages[4].id, expected_close_date: '2027-02-10' });
    const c = await deal(t.live, { name: 'Gamma RENEWAL', amount: 900, owner: 'ada', stage_id: p.stages[2].id });
    const other = await ok(t.live.post('/v1/deals/pipelines', { name: 'Other' }), 201);
    const d = await deal(t.live, { name: 'Delta', pipeline_id: other.id });
    const cases: Array<[string, string[]]> = [
      [`pipeline_id=${p.id}`, [a.id, b.id, c.id]], [`pipeline_id=${other.id}`, [d.id]],
      [`pipeline_id=${p.id}&stage_id=${p.stages[2].id}`, [c.id]], ['status=won', [b.id]], ['status=open', [a.id, c.id, d.id]],
      [`company_id=${acme.id}`, [a.id]], ['owner=ada', [a.id, c.id]], ['min_amount=500', [b.id, c.id]], ['max_amount=500', [a.id, b.id]],
      ['min_amount=200&max_amount=600', [b.id]], ['expected_close_before=2027-01-31', [a.id]], ['expected_close_after=2027-01-10', [a.id, b.id]],
      ['name=renewal', [a.id, c.id]], ['name=zzz', []],
    ];
    for (const [query, expected] of cases) {
      const page = (await t.live.get(`/v1/deals?${query}&limit=200`)).json();
      expect(ids(page), query).toEqual(expected.sort());
      expect(page.pagination.total, query).toBe(expected.length);
    }
    const first = (await t.live.get(`/v1/deals?pipeline_id=${p.id}&limit=2`)).json();
    expect(first.pagination).toMatchObject({ total: 3, has_next: true });
    const second = (await t.live.get(`/v1/deals?pipeline_id=${p.id}&limit=2&cursor=${first.next_cursor}`)).json();
    expect([...first.data, ...second.data].map((x: Json) => x.id)).toEqual([c.id, b.id, a.id]);
    await fails(t.live.get('/v1/deals?status=maybe'), 400);
    await fails(t.live.get('/v1/deals?min_amount=-5'), 422);
    // A deleted company leaves its deals without one.
    await ok(t.live.delete(`/v1/companies/${acme.id}`));
    expect((await ok(t.live.get(`/v1/deals/${a.id}`))).company_id).toBeNull();
  });
});
