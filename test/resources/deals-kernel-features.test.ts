// Deals on the kernel's shared features, through HTTP: custom fields (object `deals`), search
// (POST /v1/search/deals and deals in GET /v1/search) and assert matched by ?match= on a unique
// custom field only, through the same write path as every deal write (stage rules, stage history,
// summary totals, the evidence gate).
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' } });
afterAll(() => app.close());

const ok = async (res: Promise<{ statusCode: number; body: string; json: () => Json }>, status = 200) => {
  const r = await res;
  expect(r.statusCode, r.body).toBe(status);
  return r.json();
};
const put = (c: Client, url: string, body: unknown) => c('PUT', url, body);
const field = (c: Client, body: object) => ok(c.post('/v1/fields', { object: 'deals', ...body }), 201);
const stagesOf = async (c: Client) => (await c.get('/v1/deals/pipelines')).json().data[0];
const summaryCount = async (c: Client, stageId: string) => (await c.get('/v1/deals/summary')).json().data.stages.find((s: Json) => s.stage_id === stageId).count;

describe('custom fields on deals', () => {
  it('defines fields of object deals, validates values on write and filters by them', async () => {
    const t = await tenant(app, { sandbox: false });
    const listed = (await ok(t.live.get('/v1/fields?object=deals&limit=200'))).data;
    expect(listed.some((f: Json) => f.id === 'deals.amount' && f.is_global)).toBe(true);
    await field(t.live, { name: 'region', data_type: 'enum', options: { values: ['emea', 'amer'] } });
    await field(t.live, { name: 'seats', data_type: 'number' });
    const deal = (await ok(t.live.post('/v1/deals', { name: 'Acme', custom_fields: { region: 'emea', seats: 40 } }), 201)).data;
    expect(deal.custom_fields).toEqual({ region: 'emea', seats: 40 });
    await ok(t.live.post('/v1/deals', { name: 'Beta', custom_fields: { region: 'amer' } }), 201);
    const bad = await t.live.post('/v1/deals', { name: 'Gamma', custom_fields: { region: 'apac' } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'custom_fields', 'region']);
    const unknown = await t.live.post('/v1/deals', { name: 'Gamma', custom_fields: { nope: 1 } });
    expect(unknown.statusCode).toBe(422);
    const page = await ok(t.live.get('/v1/deals?custom_fields.region=emea'));
    expect(page.pagination.total).toBe(1);
    expect(page.data[0].id).toBe(deal.id);
    const changed = (await ok(t.live.patch(`/v1/deals/${deal.id}`, { custom_fields: { seats: null } }))).data;
    expect(changed.custom_fields).toEqual({ region: 'emea' });
    const [event] = (await t.live.get('/v1/events?type=deal.updated')).json().data;
    expect(event.previous_attributes.custom_fields).toEqual({ region: 'emea', seats: 40 });
    // Another tenant has no such field.
    const other = await tenant(app, { sandbox: false });
    expect((await other.live.post('/v1/deals', { name: 'X', custom_fields: { region: 'emea' } })).statusCode).toBe(422);
  });
});

describe('search over deals', () => {
  it('finds deals by full text, filters and custom fields, and GET /v1/search groups them', async () => {
    const t = await tenant(app, { sandbox: false });
    const pipeline = await stagesOf(t.live);
    await field(t.live, { name: 'region', data_type: 'text' });
    const a = (await ok(t.live.post('/v1/deals', { name: 'Zephyr rollout', owner: 'ada@example.com', amount: 500, stage_id: pipeline.stages[1].id, custom_fields: { region: 'emea' } }), 201)).data;
    const b = (await ok(t.live.post('/v1/deals', { name: 'Zephyr pilot', source: 'partner', amount: 100 }), 201)).data;
    await ok(t.live.post('/v1/deals', { name: 'Unrelated', source: 'zephyrous referral' }), 201);
    await ok(t.live.post('/v1/contacts', { name: 'Zephyr Person', list_id: (await ok(t.live.post('/v1/lists', { name: 'P', type: 'contacts' }), 201)).data.id }), 201);

    const search = (body: object) => ok(t.live.post('/v1/search/deals', body));
    expect((await search({ q: 'zephyr' })).pagination.total).toBe(3);
    expect((await search({ q: 'zephyr pilot' })).data.map((d: Json) => d.id)).toEqual([b.id]);
    expect((await search({ q: 'partner' })).data.map((d: Json) => d.id)).toEqual([b.id]);
    const sorted = await search({ q: 'zephyr', filters: [{ field: 'amount', operator: 'gte', value: 100 }], sort: [{ field: 'amount', direction: 'asc' }] });
    expect(sorted.data.map((d: Json) => d.id)).toEqual([b.id, a.id]);
    expect((await search({ filters: [{ field: 'stage_id', operator: 'eq', value: pipeline.stages[1].id }] })).data.map((d: Json) => d.id)).toEqual([a.id]);
    expect((await search({ filters: [{ field: 'custom_fields.region', operator: 'eq', value: 'emea' }] })).data.map((d: Json) => d.id)).toEqual([a.id]);
    expect((await t.live.post('/v1/search/deals', { filters: [{ field: 'nope', operator: 'eq', value: 1 }] })).statusCode).toBe(400);

    const all = (await ok(t.live.get('/v1/search?q=zephyr'))).data;
    expect(all.deals.total).toBe(3);
    expect(all.deals.data[0]).toHaveProperty('stage_id');
    expect(all.contacts.total).toBe(1);
    // The full text follows updates and deletes, and stays within the tenant.
    await ok(t.live.patch(`/v1/deals/${b.id}`, { name: 'Aurora pilot' }));
    expect((await search({ q: 'zephyr pilot' })).pagination.total).toBe(0);
    await ok(t.live.delete(`/v1/deals/${a.id}`));
    expect((await search({ q: 'rollout' })).pagination.total).toBe(0);
    const other = await tenant(app, { sandbox: false });
    expect((await ok(other.live.get('/v1/search?q=aurora'))).data.deals.total).toBe(0);
  });
});

describe('assert deals', () => {
  it('needs ?match= naming a unique custom field (400 without it, 422 for another field)', async () => {
    const t = await tenant(app, { sandbox: false });
    await field(t.live, { name: 'crm_id', data_type: 'text', unique: true });
    await field(t.live, { name: 'note', data_type: 'text' });
    const none = await put(t.live, '/v1/deals/assert', { name: 'Acme', custom_fields: { crm_id: 'D1' } });
    expect(none.statusCode).toBe(400);
    expect(none.json().detail).toMatch(/^match is required/);
    const batchNone = await put(t.live, '/v1/deals/assert/batch', { records: [{ name: 'Acme' }] });
    expect(batchNone.statusCode).toBe(400);
    const notUnique = await put(t.live, '/v1/deals/assert?match=note', { name: 'Acme', custom_fields: { note: 'x' } });
    expect(notUnique.statusCode).toBe(422);
    expect(notUnique.json().detail[0].loc).toEqual(['query', 'match']);
    const noValue = await put(t.live, '/v1/deals/assert?match=crm_id', { name: 'Acme' });
    expect(noValue.statusCode).toBe(422);
    expect((await t.live.get('/v1/deals')).json().pagination.total).toBe(0);
  });

  it('creates, updates through the deal rules (stage, history, totals), and does nothing when nothing changed', async () => {
    const t = await tenant(app, { sandbox: false });
    await field(t.live, { name: 'crm_id', data_type: 'text', unique: true });
    const pipeline = await stagesOf(t.live);
    const [first, second] = pipeline.stages;
    const created = await ok(put(t.live, '/v1/deals/assert?match=crm_id', { name: 'Acme', amount: 1000, custom_fields: { crm_id: 'D1' } }), 201);
    expect(created).toMatchObject({ action: 'created', data: { stage_id: first.id, pipeline_id: pipeline.id, status: 'open' } });
    const id = created.data.id;
    expect(await summaryCount(t.live, first.id)).toBe(1);

    const moved = await ok(put(t.live, '/v1/deals/assert?match=crm_id', { name: 'Acme', stage_id: second.id, custom_fields: { crm_id: 'D1' } }));
    expect(moved).toMatchObject({ action: 'updated', data: { id, stage_id: second.id } });
    expect((await t.live.get(`/v1/deals/${id}/stage-history`)).json().pagination.total).toBe(2);
    expect((await t.live.get('/v1/events?type=deal.stage_changed')).json().data[0].data.object).toMatchObject({ id, previous_stage_id: first.id });
    expect([await summaryCount(t.live, first.id), await summaryCount(t.live, second.id)]).toEqual([0, 1]);

    const noop = await ok(put(t.live, '/v1/deals/assert?match=crm_id', { name: 'Acme', amount: 1000, custom_fields: { crm_id: 'D1' } }));
    expect(noop.action).toBe('noop');
    // A stage of another pipeline is refused as on PATCH, and changes nothing.
    const other = (await ok(t.live.post('/v1/deals/pipelines', { name: 'Other' }), 201)).data;
    const wrong = await put(t.live, '/v1/deals/assert?match=crm_id', { name: 'Acme', stage_id: other.stages[0].id, custom_fields: { crm_id: 'D1' } });
    expect(wrong.statusCode).toBe(400);
    expect((await t.live.get('/v1/deals')).json().pagination.total).toBe(1);
  });

  it('keeps the evidence gate (force passes it) and asserts batches record by record', async () => {
    const t = await tenant(app, { sandbox: false });
    await field(t.live, { name: 'crm_id', data_type: 'text', unique: true });
    const pipeline = await stagesOf(t.live);
    const methodology = (await ok(t.live.post('/v1/pipelines', { name: 'Gate', stages: [{ name: 'Prove', required_elements: ['budget_confirmed'] }] }), 201)).data;
    await ok(t.live.patch(`/v1/deals/pipelines/${pipeline.id}/stages/${pipeline.stages[2].id}`, { checklist_stage_id: methodology.stages[0].id }));
    await ok(put(t.live, '/v1/deals/assert?match=crm_id', { name: 'Acme', custom_fields: { crm_id: 'D1' } }), 201);
    const gated = await put(t.live, '/v1/deals/assert?match=crm_id', { name: 'Acme', stage_id: pipeline.stages[2].id, custom_fields: { crm_id: 'D1' } });
    expect(gated.statusCode).toBe(409);
    expect(gated.json().missing).toEqual(['budget_confirmed']);
    const forced = await ok(put(t.live, '/v1/deals/assert?match=crm_id', { name: 'Acme', stage_id: pipeline.stages[2].id, force: true, custom_fields: { crm_id: 'D1' } }));
    expect(forced).toMatchObject({ action: 'updated', data: { stage_id: pipeline.stages[2].id } });
    expect((await t.live.get('/v1/events?type=deal.stage_changed')).json().data[0].data.object).toMatchObject({ forced: true, bypassed: ['budget_confirmed'] });

    const batch = await ok(put(t.live, '/v1/deals/assert/batch?match=crm_id', { records: [
      { name: 'Beta', custom_fields: { crm_id: 'D2' } },
      { name: 'Acme renamed', custom_fields: { crm_id: 'D1' } },
      { name: 'Gamma', stage_id: pipeline.stages[2].id, custom_fields: { crm_id: 'D3' } },
      { name: 'Beta again', custom_fields: { crm_id: 'D2' } },
    ] }));
    expect(batch.data).toMatchObject({ total: 4, created: 1, updated: 2, noop: 0, failed: 1 });
    expect(batch.data.results[2]).toMatchObject({ index: 2, error: { status: 409 } });
    expect((await t.live.get('/v1/deals')).json().pagination.total).toBe(2);
    expect((await t.live.get('/v1/deals/summary')).json().data.totals.count).toBe(2);
  });

  it('leaves nothing of a batch record refused after it had written, and keeps the rest of the batch', async () => {
    const t = await tenant(app, { sandbox: false });
    await field(t.live, { name: 'crm_id', data_type: 'text', unique: true });
    await field(t.live, { name: 'note', data_type: 'text' });
    const pipeline = await stagesOf(t.live);
    const methodology = (await ok(t.live.post('/v1/pipelines', { name: 'Gate', stages: [{ name: 'Prove', required_elements: ['budget_confirmed'] }] }), 201)).data;
    await ok(t.live.patch(`/v1/deals/pipelines/${pipeline.id}/stages/${pipeline.stages[2].id}`, { checklist_stage_id: methodology.stages[0].id }));
    const acme = (await ok(put(t.live, '/v1/deals/assert?match=crm_id', { name: 'Acme', custom_fields: { crm_id: 'D1', note: 'kept' } }), 201)).data;
    const batch = await ok(put(t.live, '/v1/deals/assert/batch?match=crm_id', { records: [
      { name: 'Beta', custom_fields: { crm_id: 'D2', note: 'new' } },
      // Its changed note is written before the evidence gate of the stage refuses the move.
      { name: 'Acme', stage_id: pipeline.stages[2].id, custom_fields: { crm_id: 'D1', note: 'changed' } },
      { name: 'Gamma', custom_fields: { crm_id: 'D3' } },
    ] }));
    expect(batch.data).toMatchObject({ total: 3, created: 2, updated: 0, failed: 1 });
    expect(batch.data.results[1]).toMatchObject({ index: 1, error: { status: 409 } });
    expect((await t.live.get(`/v1/deals/${acme.id}`)).json().data).toMatchObject({ stage_id: acme.stage_id, custom_fields: { crm_id: 'D1', note: 'kept' } });
    // Filters read the index of values: it holds Acme's note as it was, and the new records' notes.
    expect((await t.live.get('/v1/deals?custom_fields.note=changed')).json().pagination.total).toBe(0);
    expect((await t.live.get('/v1/deals?custom_fields.note=kept')).json().data.map((d: Json) => d.id)).toEqual([acme.id]);
    expect((await t.live.get('/v1/deals?custom_fields.note=new')).json().pagination.total).toBe(1);
    expect((await t.live.get('/v1/deals')).json().pagination.total).toBe(3);
    expect((await t.live.get('/v1/events?type=deal.updated')).json().pagination.total).toBe(0);
    expect((await t.live.get('/v1/events?type=deal.created')).json().pagination.total).toBe(3);
  });
});
