// The deals summary against a recount of the deals through the API, after creates, moves, amount,
// currency and probability changes, stage probability changes and deletes; lists of type deals; the
// sandbox's deals and its reset.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { ok, type Json } from '../helpers/records.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' } });
afterAll(() => app.close());


/** The summary recomputed from every deal of the pipeline, as the API lists them. */
async function recount(c: Client, pipelineId: string) {
  const pipeline = await ok(c.get(`/v1/deals/pipelines/${pipelineId}`));
  const all = (await c.get(`/v1/deals?pipeline_id=${pipelineId}&limit=200`)).json().data;
  const amounts = (list: Json[]) => {
    const by = new Map<string, Json>();
    for (const d of list) {
      const a = by.get(d.currency) ?? { currency: d.currency, count: 0, amount: 0, weighted: 0 };
      a.count += 1;
      a.amount += d.amount ?? 0;
      a.weighted += (d.amount ?? 0) * d.probability;
      by.set(d.currency, a);
    }
    return [...by.values()].sort((x, y) => (x.currency < y.currency ? -1 : 1)).map((a) => ({ currency: a.currency, count: a.count, amount: a.amount, weighted_amount: Math.round(a.weighted / 100) }));
  };
  return {
    pipeline_id: pipelineId,
    stages: pipeline.stages.map((s: Json) => {
      const here = all.filter((d: Json) => d.stage_id === s.id);
      return { stage_id: s.id, name: s.name, position: s.position, stage_type: s.stage_type, probability: s.probability, count: here.length, amounts: amounts(here) };
    }),
    totals: { count: all.length, amounts: amounts(all) },
  };
}

describe('deals summary', () => {
  it('stays exact through every kind of deal and stage change', async () => {
    const t = await tenant(app);
    const p = (await t.live.get('/v1/deals/pipelines')).json().data[0];
    const summary = () => ok(t.live.get('/v1/deals/summary'));
    const check = async () => expect(await summary()).toEqual(await recount(t.live, p.id));
    const empty = await summary();
    expect(empty.totals).toEqual({ count: 0, amounts: [] });
    expect(empty.stages.length).toBe(6);

    const made = [];
    for (const [i, body] of [
      { amount: 1000 }, { amount: 2500, stage_id: p.stages[1].id }, { amount: 333, probability: 33, stage_id: p.stages[1].id },
      { amount: 7000, currency: 'EUR', stage_id: p.stages[2].id }, { stage_id: p.stages[3].id }, { amount: 999, stage_id: p.stages[4].id },
    ].entries()) made.push(await ok(t.live.post('/v1/deals', { name: `D${i}`, ...body }), 201));
    await check();
    await ok(t.live.patch(`/v1/deals/${made[0].id}`, { stage_id: p.stages[2].id }));
    await ok(t.live.patch(`/v1/deals/${made[1].id}`, { amount: 4000, currency: 'GBP' }));
    await ok(t.live.patch(`/v1/deals/${made[2].id}`, { probability: null }));
    await ok(t.live.patch(`/v1/deals/${made[4].id}`, { amount: 50, probability: 90 }));
    await check();
    await ok(t.live.patch(`/v1/deals/pipelines/${p.id}/stages/${p.stages[1].id}`, { probability: 35 }));
    await ok(t.live.delete(`/v1/deals/${made[3].id}`));
    await check();
    const now = await summary();
    expect(now.stages[1]).toMatchObject({ probability: 35, count: 2 });
    expect(now.totals.count).toBe(5);

    // Another pipeline's summary, and the refusals.
    const other = await ok(t.live.post('/v1/deals/pipelines', { name: 'Other' }), 201);
    await ok(t.live.post('/v1/deals', { name: 'O', pipeline_id: other.id, amount: 10 }), 201);
    expect(await ok(t.live.get(`/v1/deals/summary?pipeline_id=${other.id}`))).toEqual(await recount(t.live, other.id));
    expect((await summary()).totals.count).toBe(5);
    const missing = await t.live.get('/v1/deals/summary?pipeline_id=pip_missing');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ type: 'not_found', detail: 'Pipeline not found' });
    expect((await t.test.get(`/v1/deals/summary?pipeline_id=${other.id}`)).statusCode).toBe(404);
    expect((await t.live.get('/v1/deals/summary?other=1')).statusCode).toBe(422);
  });

  // Deals that arrive together are one run of a group commit: the contacts they name are read for
  // all of them at once, and their shares of the stage totals add up into one change per stage.
  it('stays exact for deals created together, each with its own contacts', async () => {
    const t = await tenant(app);
    const p = (await t.live.get('/v1/deals/pipelines')).json().data[0];
    const list = await ok(t.live.post('/v1/lists', { name: 'People', type: 'contacts' }), 201);
    const people: Json[] = [];
    for (let i = 0; i < 4; i++) people.push(await ok(t.live.post('/v1/contacts', { list_id: list.id, name: `P${i}` }), 201));
    const bodies = Array.from({ length: 24 }, (_, i) => ({
      name: `D${i}`, amount: 100 * (i + 1), currency: i % 3 === 0 ? 'EUR' : 'USD', stage_id: p.stages[i % 2].id,
      ...(i % 4 === 0 ? {} : { contacts: [{ contact_id: people[i % 4].id }, { contact_id: people[(i + 1) % 4].id, role: 'Champion' }] }),
    }));
    // All of them valid, then again with one naming a contact that does not exist (the others still commit).
    const together = await Promise.all(bodies.map((body) => t.live.post('/v1/deals', body)));
    expect(together.every((a) => a.statusCode === 201)).toBe(true);
    expect(await ok(t.live.get('/v1/deals/summary'))).toEqual(await recount(t.live, p.id));
    for (const a of together) await ok(t.live.delete(`/v1/deals/${a.json().data.id}`));
    bodies[7] = { ...bodies[7], contacts: [{ contact_id: people[0].id }, { contact_id: 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' }] };
    const answers = await Promise.all(bodies.map((body) => t.live.post('/v1/deals', body)));
    expect(answers.map((a) => a.statusCode)).toEqual(bodies.map((_, i) => (i === 7 ? 404 : 201)));
    expect(answers[7].json()).toEqual({ type: 'not_found', detail: 'Contact not found' });
    expect(await ok(t.live.get('/v1/deals/summary'))).toEqual(await recount(t.live, p.id));
    expect((await ok(t.live.get('/v1/deals/summary'))).totals.count).toBe(23);
    // Each deal's contacts, as its `deal.contact_added` events tell them (one read: the rate limit).
    const added = (await t.live.get('/v1/events?type=deal.contact_added&limit=200')).json().data;
    for (const [i, a] of answers.entries()) {
      if (i === 7) continue;
      const links = added.filter((e: Json) => e.data.object.id === a.json().data.id).map((e: Json) => [e.data.object.contact_link.contact_id, e.data.object.contact_link.role]);
      expect(links.sort()).toEqual((bodies[i].contacts ?? []).map((l) => [l.contact_id, l.role ?? null]).sort());
    }
  });

  it('lets lists of type deals hold deals', async () => {
    const t = await tenant(app);
    const list = await ok(t.live.post('/v1/lists', { name: 'Q4 commit', type: 'deals' }), 201);
    const a = await ok(t.live.post('/v1/deals', { name: 'A' }), 201);
    const b = await ok(t.live.post('/v1/deals', { name: 'B' }), 201);
    expect(await ok(t.live.post(`/v1/lists/${list.id}/members`, { ids: [a.id, b.id] }), 201)).toEqual({ added: 2, existing: 0, member_count: 2 });
    const page = (await t.live.get(`/v1/lists/${list.id}/members`)).json();
    expect(page.data).toEqual([await ok(t.live.get(`/v1/deals/${b.id}`)), await ok(t.live.get(`/v1/deals/${a.id}`))]);
    expect((await t.live.get(`/v1/deals?list_id=${list.id}`)).json().pagination.total).toBe(2);
    await ok(t.live.delete(`/v1/deals/${a.id}`));
    expect((await ok(t.live.get(`/v1/lists/${list.id}`))).member_count).toBe(1);
    const companies = await ok(t.live.post('/v1/lists', { name: 'Accounts', type: 'companies' }), 201);
    expect((await t.live.post(`/v1/lists/${companies.id}/members`, { ids: [b.id] })).statusCode).toBe(404);
  });

  it('gives the sandbox realistic deals in several stages, and the reset makes them again', async () => {
    const t = await tenant(app);
    const check = async () => {
      const [p] = (await t.test.get('/v1/deals/pipelines')).json().data;
      expect(p.is_default).toBe(true);
      const deals = (await t.test.get('/v1/deals?limit=200')).json();
      expect(deals.pagination.total).toBe(8);
      expect(new Set(deals.data.map((d: Json) => d.stage_id)).size).toBeGreaterThanOrEqual(5);
      expect(new Set(deals.data.map((d: Json) => d.status))).toEqual(new Set(['open', 'won', 'lost']));
      expect(deals.data.every((d: Json) => d.company_id && d.amount > 0)).toBe(true);
      expect(await ok(t.test.get('/v1/deals/summary'))).toEqual(await recount(t.test, p.id));
      const withContact = deals.data[0];
      expect((await t.test.get(`/v1/deals/${withContact.id}/contacts`)).json().pagination.total).toBe(1);
      expect((await t.test.get(`/v1/deals/${withContact.id}/stage-history`)).json().pagination.total).toBe(1);
      return p.id as string;
    };
    const before = await check();
    expect((await t.live.get('/v1/deals')).json().pagination.total).toBe(0);
    expect((await t.test.post('/v1/sandbox/reset')).statusCode).toBe(200);
    expect(await check()).not.toBe(before);
    expect((await t.test.get('/v1/deals/pipelines')).json().pagination.total).toBe(1);
  });
});
