// What the kernel's children (platform/resource/children.ts) give a deal's evidence and contacts beyond
// the routes they had: the evidence list (paged by key, exact total, the deal's 404 in every other
// tenant), idempotent writes, and links to a contact that a list's cascade deleted left unlisted.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ok, walk, type Json } from '../helpers/records.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' } });
afterAll(() => app.close());

const events = async (c: Client, type: string) => (await c.get(`/v1/events?type=${type}&limit=200`)).json().data as Json[];

describe('the evidence of a deal', () => {
  it('is listed by key, last first, with an exact total, walked by cursor, and only in its tenant', async () => {
    const t = await tenant(app);
    const deal = await ok(t.live.post('/v1/deals', { name: 'Acme' }), 201);
    const other = await ok(t.live.post('/v1/deals', { name: 'Other' }), 201);
    for (const key of ['budget_confirmed', 'pain_identified', 'champion_identified']) {
      await ok(t.live.post(`/v1/deals/${deal.id}/evidence`, { key, note: `${key} note` }), 201);
    }
    await ok(t.live.post(`/v1/deals/${other.id}/evidence`, { key: 'metrics_quantified' }), 201);
    const page = (await t.live.get(`/v1/deals/${deal.id}/evidence?limit=2`)).json();
    expect(page.pagination).toMatchObject({ total: 3, has_next: true });
    expect(page.data.map((e: Json) => e.key)).toEqual(['pain_identified', 'champion_identified']);
    expect(page.data[0]).toMatchObject({ deal_id: deal.id, key: 'pain_identified', title: 'Pain identified', note: 'pain_identified note', source: null });
    expect((await walk(t.live, `/v1/deals/${deal.id}/evidence`, 2)).map((e) => e.key)).toEqual(['pain_identified', 'champion_identified', 'budget_confirmed']);
    // The same records as the checklist answers.
    const checklist = await ok(t.live.get(`/v1/deals/${deal.id}/checklist`));
    expect([...page.data].sort((a: Json, b: Json) => (a.key < b.key ? -1 : 1))).toEqual(checklist.evidence.filter((e: Json) => e.key !== 'budget_confirmed'));

    await fails(t.live.get('/v1/deals/dea_01JD8X4M6R2T9Q3V5W7Y8Z0A1B/evidence'), 404, 'Deal not found');
    const stranger = await tenant(app);
    for (const intruder of [stranger.live, stranger.test, t.test]) await fails(intruder.get(`/v1/deals/${deal.id}/evidence`), 404, 'Deal not found');
  });

  it('is recorded once for a repeated Idempotency-Key, the first answer replayed', async () => {
    const t = await tenant(app);
    const deal = await ok(t.live.post('/v1/deals', { name: 'Acme' }), 201);
    const send = () => t.live.post(`/v1/deals/${deal.id}/evidence`, { key: 'budget_confirmed', note: '120k' }, { 'idempotency-key': 'evidence-1' });
    const first = await send();
    const again = await send();
    expect([first.statusCode, again.statusCode]).toEqual([201, 201]);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(await events(t.live, 'deal.evidence_added')).toHaveLength(1);
    expect(await events(t.live, 'deal.evidence_updated')).toHaveLength(0);
  });
});

describe('the contacts of a deal', () => {
  it('leaves out a link whose contact a list deletion took, in the page and its total', async () => {
    const t = await tenant(app);
    const list = await ok(t.live.post('/v1/lists', { name: 'People', type: 'contacts' }), 201);
    const kept = await ok(t.live.post('/v1/lists', { name: 'Kept', type: 'contacts' }), 201);
    const ada = await ok(t.live.post('/v1/contacts', { name: 'Ada', list_id: list.id }), 201);
    const bob = await ok(t.live.post('/v1/contacts', { name: 'Bob', list_id: kept.id }), 201);
    const deal = await ok(t.live.post('/v1/deals', { name: 'D', contacts: [{ contact_id: ada.id }, { contact_id: bob.id, role: 'Buyer' }] }), 201);
    expect((await t.live.get(`/v1/deals/${deal.id}/contacts`)).json().pagination.total).toBe(2);
    await ok(t.live.delete(`/v1/lists/${list.id}?cascade=true`));
    const page = (await t.live.get(`/v1/deals/${deal.id}/contacts`)).json();
    expect(page.pagination.total).toBe(1);
    expect(page.data).toEqual([{ deal_id: deal.id, contact_id: bob.id, role: 'Buyer', created_at: expect.any(Number), updated_at: expect.any(Number), contact: await ok(t.live.get(`/v1/contacts/${bob.id}`)) }]);
  });
});
