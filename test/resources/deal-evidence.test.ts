// Evidence on deals through HTTP: deal stages linked to checklist stages, the gate on entering them
// (409 with `missing`, or `force: true` recorded on deal.stage_changed), recording and removing
// evidence, the checklist of a deal, the sandbox's methodology, and isolation between tenants.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { ok, type Json } from '../helpers/records.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' } });
afterAll(() => app.close());

const events = async (c: Client, type: string) => (await c.get(`/v1/events?type=${type}&limit=200`)).json().data as Json[];

/** A tenant whose default deal pipeline's Proposal stage links a stage requiring pain and budget. */
async function gated() {
  const t = await tenant(app);
  const methodology = await ok(t.live.post('/v1/pipelines', {
    name: 'Gate', stages: [{ name: 'Prove', required_elements: ['pain_identified', 'budget_confirmed'], recommended_elements: ['competition_known'], exit_criteria: 'Buyer agrees', channel_scripts: { call: 'Ask about budget' } }],
  }), 201);
  const pipeline = (await t.live.get('/v1/deals/pipelines')).json().data[0];
  const [qualification, discovery, proposal] = pipeline.stages;
  const linked = await ok(t.live.patch(`/v1/deals/pipelines/${pipeline.id}/stages/${proposal.id}`, { checklist_stage_id: methodology.stages[0].id }));
  expect(linked.checklist_stage_id).toBe(methodology.stages[0].id);
  return { t, c: t.live, methodology, pipeline, qualification, discovery, proposal };
}

describe('linking deal stages to checklist stages', () => {
  it('links on stage create and update, unlinks with null, and refuses unknown checklist stages', async () => {
    const { c, methodology, pipeline, proposal } = await gated();
    expect((await ok(c.get(`/v1/deals/pipelines/${pipeline.id}`))).stages[2].checklist_stage_id).toBe(methodology.stages[0].id);
    const added = await ok(c.post(`/v1/deals/pipelines/${pipeline.id}/stages`, { name: 'Review', checklist_stage_id: methodology.stages[0].id }), 201);
    expect(added.checklist_stage_id).toBe(methodology.stages[0].id);
    const made = await ok(c.post('/v1/deals/pipelines', { name: 'Other', stages: [{ name: 'Open', checklist_stage_id: methodology.stages[0].id }] }), 201);
    expect(made.stages[0].checklist_stage_id).toBe(methodology.stages[0].id);
    for (const res of [
      await c.patch(`/v1/deals/pipelines/${pipeline.id}/stages/${proposal.id}`, { checklist_stage_id: 'cks_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' }),
      await c.post(`/v1/deals/pipelines/${pipeline.id}/stages`, { name: 'X', checklist_stage_id: 'cks_nope' }),
      await c.post('/v1/deals/pipelines', { name: 'Y', stages: [{ name: 'Open', checklist_stage_id: 'cks_nope' }] }),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ type: 'not_found', detail: 'Checklist stage not found' });
    }
    expect((await c.get('/v1/deals/pipelines')).json().pagination.total).toBe(2);
    expect((await ok(c.patch(`/v1/deals/pipelines/${pipeline.id}/stages/${added.id}`, { checklist_stage_id: null }))).checklist_stage_id).toBeNull();
  });
});

describe('the gate on entering a linked stage', () => {
  it('refuses a move without the required evidence (409 with missing), and records a forced one', async () => {
    const { c, discovery, proposal } = await gated();
    const deal = await ok(c.post('/v1/deals', { name: 'Acme', amount: 1000, stage_id: discovery.id }), 201);
    const refused = await c.patch(`/v1/deals/${deal.id}`, { stage_id: proposal.id, amount: 2000 });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().missing).toEqual(['pain_identified', 'budget_confirmed']);
    expect(refused.json().detail).toContain('pain_identified, budget_confirmed');
    // Nothing of the refused write: the deal, its history and the summary stay.
    expect(await ok(c.get(`/v1/deals/${deal.id}`))).toMatchObject({ stage_id: discovery.id, amount: 1000 });
    expect((await c.get(`/v1/deals/${deal.id}/stage-history`)).json().pagination.total).toBe(1);

    await ok(c.post(`/v1/deals/${deal.id}/evidence`, { key: 'pain_identified', note: 'Slow close', source: 'call' }), 201);
    expect((await c.patch(`/v1/deals/${deal.id}`, { stage_id: proposal.id })).json().missing).toEqual(['budget_confirmed']);
    await ok(c.post(`/v1/deals/${deal.id}/evidence`, { key: 'budget_confirmed' }), 201);
    expect(await ok(c.patch(`/v1/deals/${deal.id}`, { stage_id: proposal.id }))).toMatchObject({ stage_id: proposal.id });
    const [entered] = await events(c, 'deal.stage_changed');
    expect(entered.data.object).toMatchObject({ id: deal.id, stage_id: proposal.id, previous_stage_id: discovery.id, forced: false, bypassed: [] });

    // Back out, lose the evidence, and come back by force: the event says so and names what was lacking.
    await ok(c.patch(`/v1/deals/${deal.id}`, { stage_id: discovery.id }));
    await ok(c.delete(`/v1/deals/${deal.id}/evidence/budget_confirmed`));
    const forced = await ok(c.patch(`/v1/deals/${deal.id}`, { stage_id: proposal.id, force: true }));
    expect(forced.stage_id).toBe(proposal.id);
    expect(forced).not.toHaveProperty('force');
    const [byForce] = await events(c, 'deal.stage_changed');
    expect(byForce.data.object).toMatchObject({ id: deal.id, previous_stage_id: discovery.id, forced: true, bypassed: ['budget_confirmed'] });
    expect(byForce.previous_attributes).toEqual({ stage_id: discovery.id });
    // Changes within the stage are not gated; force alone is no change.
    expect(await ok(c.patch(`/v1/deals/${deal.id}`, { amount: 5 }))).toMatchObject({ amount: 5 });
    expect((await c.patch(`/v1/deals/${deal.id}`, { force: true })).json()).toEqual({ type: 'bad_request', detail: 'No fields to update' });
    const unforced = await c.patch(`/v1/deals/${deal.id}`, { stage_id: proposal.id, force: false });
    expect(unforced.statusCode).toBe(200);
  });

  it('gates a new deal too: 409 without force, and a forced create records deal.stage_changed', async () => {
    const { c, proposal } = await gated();
    const refused = await c.post('/v1/deals', { name: 'New', stage_id: proposal.id });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ missing: ['pain_identified', 'budget_confirmed'] });
    expect((await c.get('/v1/deals')).json().pagination.total).toBe(0);
    const made = await ok(c.post('/v1/deals', { name: 'New', stage_id: proposal.id, force: true }), 201);
    const [event] = await events(c, 'deal.stage_changed');
    expect(event.data.object).toMatchObject({ id: made.id, stage_id: proposal.id, previous_stage_id: null, forced: true, bypassed: ['pain_identified', 'budget_confirmed'] });
    // An unlinked stage needs nothing, force or not.
    await ok(c.post('/v1/deals', { name: 'Plain' }), 201);
    await ok(c.post('/v1/deals', { name: 'Plain forced', force: true }), 201);
    expect(await events(c, 'deal.stage_changed')).toHaveLength(1);
  });
});

describe('evidence on a deal', () => {
  it('records, replaces and removes evidence, with events; unknown keys are 422 naming them', async () => {
    const { c } = await gated();
    const deal = await ok(c.post('/v1/deals', { name: 'Acme' }), 201);
    const added = await ok(c.post(`/v1/deals/${deal.id}/evidence`, { key: 'budget_confirmed', note: '120k', source: 'call' }), 201);
    expect(added).toMatchObject({ deal_id: deal.id, key: 'budget_confirmed', title: 'Budget confirmed', note: '120k', source: 'call' });
    const replaced = await ok(c.post(`/v1/deals/${deal.id}/evidence`, { key: 'budget_confirmed', note: '150k' }));
    expect(replaced).toMatchObject({ note: '150k', source: null, created_at: added.created_at });
    expect((await events(c, 'deal.evidence_added'))[0].data.object).toMatchObject({ id: deal.id, evidence: { key: 'budget_confirmed', note: '120k' } });
    expect((await events(c, 'deal.evidence_updated'))[0].previous_attributes).toEqual({ note: '120k', source: 'call' });

    const unknown = await c.post(`/v1/deals/${deal.id}/evidence`, { key: 'made_up' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().detail).toEqual([{ loc: ['body', 'key'], msg: 'unknown evidence key made_up: not in the evidence library (GET /v1/pipelines/evidence-library)', type: 'value_error.evidence_key' }]);
    expect((await c.post(`/v1/deals/${deal.id}/evidence`, { key: 'Made-Up' })).statusCode).toBe(422);
    expect((await c.post(`/v1/deals/${deal.id}/evidence`, { note: 'no key' })).statusCode).toBe(400);
    await ok(c.post('/v1/pipelines/evidence-library', { key: 'made_up', title: 'Made up' }), 201);
    await ok(c.post(`/v1/deals/${deal.id}/evidence`, { key: 'made_up' }), 201);

    const missingDeal = await c.post('/v1/deals/dea_01JD8X4M6R2T9Q3V5W7Y8Z0A1B/evidence', { key: 'budget_confirmed' });
    expect(missingDeal.statusCode).toBe(404);
    expect(missingDeal.json()).toEqual({ type: 'not_found', detail: 'Deal not found' });
    expect(await ok(c.delete(`/v1/deals/${deal.id}/evidence/budget_confirmed`))).toEqual({ key: 'budget_confirmed', deleted: true });
    const again = await c.delete(`/v1/deals/${deal.id}/evidence/budget_confirmed`);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ type: 'not_found', detail: 'Evidence not found on this deal' });
    expect((await events(c, 'deal.evidence_removed'))[0].data.object).toMatchObject({ id: deal.id, evidence_key: 'budget_confirmed' });
    expect((await ok(c.get(`/v1/deals/${deal.id}/checklist`))).evidence.map((e: Json) => e.key)).toEqual(['made_up']);

    // A deleted deal takes its evidence: a new deal never inherits it.
    await ok(c.delete(`/v1/deals/${deal.id}`));
    expect((await c.get(`/v1/deals/${deal.id}/checklist`)).statusCode).toBe(404);
  });

  it('answers the checklist of the current and the next stage, element by element', async () => {
    const { c, discovery, proposal, methodology } = await gated();
    const deal = await ok(c.post('/v1/deals', { name: 'Acme', stage_id: discovery.id }), 201);
    await ok(c.post(`/v1/deals/${deal.id}/evidence`, { key: 'pain_identified', note: 'Slow close', source: 'call' }), 201);
    const checklist = await ok(c.get(`/v1/deals/${deal.id}/checklist`));
    expect(checklist.deal_id).toBe(deal.id);
    expect(checklist.current).toMatchObject({ stage_id: discovery.id, checklist_stage_id: null, ready: true, missing: [], required: [], recommended: [] });
    expect(checklist.next).toMatchObject({
      stage_id: proposal.id, stage_name: 'Proposal', checklist_stage_id: methodology.stages[0].id, checklist_stage_name: 'Prove',
      exit_criteria: 'Buyer agrees', channel_scripts: { call: 'Ask about budget' }, ready: false, missing: ['budget_confirmed'],
    });
    expect(checklist.next.required).toEqual([
      { key: 'pain_identified', title: 'Pain identified', met: true, evidence: checklist.evidence[0] },
      { key: 'budget_confirmed', title: 'Budget confirmed', met: false, evidence: null },
    ]);
    expect(checklist.next.recommended).toEqual([{ key: 'competition_known', title: 'Competition known', met: false, evidence: null }]);
    expect(checklist.evidence).toEqual([expect.objectContaining({ key: 'pain_identified', note: 'Slow close', source: 'call' })]);

    await ok(c.patch(`/v1/deals/${deal.id}`, { stage_id: proposal.id, force: true }));
    const inProposal = await ok(c.get(`/v1/deals/${deal.id}/checklist`));
    expect(inProposal.current).toMatchObject({ stage_id: proposal.id, ready: false, missing: ['budget_confirmed'] });
    expect(inProposal.next.checklist_stage_id).toBeNull();
    const last = (await ok(c.get('/v1/deals/pipelines'))).at(-1).stages.at(-1);
    await ok(c.patch(`/v1/deals/${deal.id}`, { stage_id: last.id }));
    expect((await ok(c.get(`/v1/deals/${deal.id}/checklist`))).next).toBeNull();
  });

  it('shows met and missing elements on the sandbox deals of test mode', async () => {
    const t = await tenant(app);
    const [methodology] = (await t.test.get('/v1/pipelines')).json().data;
    expect(methodology).toMatchObject({ name: 'MEDDPICC', template: 'meddpicc' });
    const pipeline = (await t.test.get('/v1/deals/pipelines')).json().data[0];
    const proposal = pipeline.stages.find((s: Json) => s.checklist_stage_id !== null);
    expect(methodology.stages.map((s: Json) => s.id)).toContain(proposal.checklist_stage_id);
    const discoveryDeal = (await t.test.get(`/v1/deals?stage_id=${pipeline.stages[1].id}`)).json().data.at(-1);
    const next = (await ok(t.test.get(`/v1/deals/${discoveryDeal.id}/checklist`))).next;
    expect(next.required.filter((e: Json) => e.met).map((e: Json) => e.key)).toEqual(['pain_identified', 'champion_identified']);
    expect(next.missing).toEqual(['metrics_quantified']);
    const proposalDeal = (await t.test.get(`/v1/deals?stage_id=${proposal.id}`)).json().data.at(-1);
    expect((await ok(t.test.get(`/v1/deals/${proposalDeal.id}/checklist`))).current).toMatchObject({ ready: true, missing: [] });
  });
});

describe('isolation', () => {
  it('answers another organization and the other mode like a missing deal', async () => {
    const { c } = await gated();
    const deal = await ok(c.post('/v1/deals', { name: 'Acme' }), 201);
    await ok(c.post(`/v1/deals/${deal.id}/evidence`, { key: 'budget_confirmed' }), 201);
    const other = await tenant(app);
    for (const intruder of [other.live, other.test]) {
      for (const [method, url, body] of [
        ['POST', `/v1/deals/${deal.id}/evidence`, { key: 'budget_confirmed' }], ['DELETE', `/v1/deals/${deal.id}/evidence/budget_confirmed`], ['GET', `/v1/deals/${deal.id}/checklist`],
      ] as const) {
        const res = await intruder(method, url, body);
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json()).toEqual({ type: 'not_found', detail: 'Deal not found' });
      }
    }
    expect((await ok(c.get(`/v1/deals/${deal.id}/checklist`))).evidence).toHaveLength(1);
  });
});
