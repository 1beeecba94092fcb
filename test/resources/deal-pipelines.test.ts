// Deal pipelines and stages through HTTP: the default pipeline of every tenant, exactly one default,
// stage add/update/order/delete (with move_to), and what deleting pipelines and stages refuses.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { ok, type Json } from '../helpers/records.ts';

const app = await testApp();
afterAll(() => app.close());

const pipelines = async (c: Client) => (await c.get('/v1/deals/pipelines?limit=200')).json();
const newPipeline = (c: Client, body: object = { name: 'Renewals' }) => ok(c.post('/v1/deals/pipelines', body), 201);

describe('deal pipelines', () => {
  it('gives every organization and mode one default pipeline with sensible stages', async () => {
    const t = await tenant(app);
    for (const c of [t.live, t.test]) {
      const page = await pipelines(c);
      expect(page.pagination.total).toBe(1);
      const [p] = page.data;
      expect(p.is_default).toBe(true);
      expect(p.stages.map((s: Json) => [s.name, s.position, s.stage_type, s.probability])).toEqual([
        ['Qualification', 0, 'open', 10], ['Discovery', 1, 'open', 25], ['Proposal', 2, 'open', 50],
        ['Negotiation', 3, 'open', 75], ['Closed won', 4, 'won', 100], ['Closed lost', 5, 'lost', 0],
      ]);
      // The sandbox (test mode) links its Proposal stage to a MEDDPICC stage.
      expect(p.stages.filter((s: Json) => s.checklist_stage_id !== null).map((s: Json) => s.name)).toEqual(c === t.test ? ['Proposal'] : []);
    }
    expect((await pipelines(t.live)).data[0].id).not.toBe((await pipelines(t.test)).data[0].id);
  });

  it('keeps exactly one default pipeline', async () => {
    const t = await tenant(app);
    const first = (await pipelines(t.live)).data[0];
    const second = await newPipeline(t.live, { name: 'Partners', stages: [{ name: 'Open' }, { name: 'Signed', stage_type: 'won' }, { name: 'Dropped', stage_type: 'lost' }] });
    expect(second.is_default).toBe(false);
    expect(second.stages.map((s: Json) => [s.name, s.probability, s.stage_type])).toEqual([['Open', 0, 'open'], ['Signed', 100, 'won'], ['Dropped', 0, 'lost']]);
    const made = await ok(t.live.patch(`/v1/deals/pipelines/${second.id}`, { is_default: true }));
    expect(made.is_default).toBe(true);
    expect((await ok(t.live.get(`/v1/deals/pipelines/${first.id}`))).is_default).toBe(false);
    const third = await newPipeline(t.live, { name: 'Expansion', is_default: true });
    const defaults = (await pipelines(t.live)).data.filter((p: Json) => p.is_default).map((p: Json) => p.id);
    expect(defaults).toEqual([third.id]);

    const unset = await t.live.patch(`/v1/deals/pipelines/${third.id}`, { is_default: false });
    expect(unset.statusCode).toBe(422);
    expect((await t.live.patch(`/v1/deals/pipelines/${third.id}`, {})).json()).toEqual({ type: 'bad_request', detail: 'No fields to update' });
    const renamed = await ok(t.live.patch(`/v1/deals/pipelines/${third.id}`, { name: 'Upsell' }));
    expect(renamed).toMatchObject({ name: 'Upsell', is_default: true });
    const events = (await t.live.get('/v1/events?type=deal_pipeline.updated&limit=200')).json().data;
    expect(events.some((e: Json) => e.data.object.id === third.id && e.previous_attributes?.name === 'Expansion')).toBe(true);
  });

  it('refuses to delete the default pipeline or one holding deals, and deletes an empty one', async () => {
    const t = await tenant(app);
    const main = (await pipelines(t.live)).data[0];
    expect((await t.live.delete(`/v1/deals/pipelines/${main.id}`)).json()).toEqual({ type: 'conflict', detail: 'The default pipeline cannot be deleted; make another pipeline the default first' });
    const other = await newPipeline(t.live);
    await ok(t.live.post('/v1/deals', { name: 'A', pipeline_id: other.id }), 201);
    expect((await t.live.delete(`/v1/deals/pipelines/${other.id}`)).json()).toEqual({ type: 'conflict', detail: 'Pipeline has 1 deal; move or delete it first' });
    await ok(t.live.post('/v1/deals', { name: 'B', pipeline_id: other.id }), 201);
    const busy = await t.live.delete(`/v1/deals/pipelines/${other.id}`);
    expect(busy.statusCode).toBe(409);
    expect(busy.json()).toEqual({ type: 'conflict', detail: 'Pipeline has 2 deals; move or delete them first' });

    const empty = await newPipeline(t.live);
    expect(await ok(t.live.delete(`/v1/deals/pipelines/${empty.id}`))).toEqual({ id: empty.id, deleted: true });
    const gone = await t.live.get(`/v1/deals/pipelines/${empty.id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ type: 'not_found', detail: 'Pipeline not found' });
    expect((await t.live.delete(`/v1/deals/pipelines/${empty.id}`)).statusCode).toBe(404);
  });

  it('adds, updates and reorders stages; the order must name every stage once', async () => {
    const t = await tenant(app);
    const p = await newPipeline(t.live, { name: 'Short', stages: [{ name: 'One' }, { name: 'Two' }] });
    const three = await ok(t.live.post(`/v1/deals/pipelines/${p.id}/stages`, { name: 'Three', probability: 60, color: '#112233' }), 201);
    expect(three).toMatchObject({ name: 'Three', position: 2, probability: 60, stage_type: 'open', color: '#112233', pipeline_id: p.id });
    const changed = await ok(t.live.patch(`/v1/deals/pipelines/${p.id}/stages/${three.id}`, { name: 'Third', color: null }));
    expect(changed).toMatchObject({ name: 'Third', color: null, checklist_stage_id: null });
    expect((await t.live.patch(`/v1/deals/pipelines/${p.id}/stages/${three.id}`, {})).json()).toEqual({ type: 'bad_request', detail: 'No fields to update' });
    expect((await t.live.patch(`/v1/deals/pipelines/${p.id}/stages/${three.id}`, { probability: 101 })).statusCode).toBe(422);
    // A color is `#rrggbb`: seven characters that are not one are refused, on a stage and in a new pipeline.
    for (const color of ['#GGGGGG', 'fuchsia', '#12345g']) {
      const refused = await t.live.patch(`/v1/deals/pipelines/${p.id}/stages/${three.id}`, { color });
      expect(refused.statusCode, color).toBe(422);
      expect(refused.json().detail[0]).toEqual({ loc: ['body', 'color'], msg: "String should match pattern '^#[0-9A-Fa-f]{6}$'", type: 'string_pattern_mismatch' });
    }
    expect((await t.live.post('/v1/deals/pipelines', { name: 'Colors', stages: [{ name: 'A', color: '#GGGGGG' }] })).statusCode).toBe(422);
    expect(await ok(t.live.patch(`/v1/deals/pipelines/${p.id}/stages/${three.id}`, { color: '#A1b2C3' }))).toMatchObject({ color: '#A1b2C3' });
    const badType = await t.live.post(`/v1/deals/pipelines/${p.id}/stages`, { name: 'Bad', stage_type: 'maybe' });
    expect(badType.statusCode).toBe(400);
    expect(badType.json().detail).toMatch(/^Invalid stage_type/);

    const [one, two] = p.stages.map((s: Json) => s.id);
    const order = `/v1/deals/pipelines/${p.id}/stages/order`;
    const reordered = await ok(t.live('PUT', order, { stage_ids: [three.id, one, two] }));
    expect(reordered.stages.map((s: Json) => [s.id, s.position])).toEqual([[three.id, 0], [one, 1], [two, 2]]);
    const unknown = await t.live('PUT', order, { stage_ids: [one, two, 'stg_other'] });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ type: 'not_found', detail: 'Stage not found' });
    for (const stage_ids of [[one, two], [one, two, two], [one, two, three.id, three.id]]) {
      const bad = await t.live('PUT', order, { stage_ids });
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toEqual({ type: 'bad_request', detail: 'stage_ids must name every stage of the pipeline exactly once', param: 'stage_ids' });
    }
    // A new deal starts in the first stage of the new order.
    expect((await ok(t.live.post('/v1/deals', { name: 'X', pipeline_id: p.id }), 201)).stage_id).toBe(three.id);

    const other = await newPipeline(t.live);
    const foreign = await t.live.patch(`/v1/deals/pipelines/${other.id}/stages/${one}`, { name: 'nope' });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ type: 'not_found', detail: 'Stage not found' });
  });

  it('deletes a stage holding deals only with move_to in the same pipeline, moving them', async () => {
    const t = await tenant(app);
    const p = await newPipeline(t.live, { name: 'Moves', stages: [{ name: 'A', probability: 10 }, { name: 'B', probability: 40 }, { name: 'Won', stage_type: 'won' }] });
    const [a, b, won] = p.stages.map((s: Json) => s.id);
    const d1 = await ok(t.live.post('/v1/deals', { name: 'D1', stage_id: a, amount: 1000 }), 201);
    const url = `/v1/deals/pipelines/${p.id}/stages/${a}`;
    expect((await t.live.delete(url)).json()).toEqual({ type: 'conflict', detail: 'Stage has 1 deal; give move_to=<stage_id> of the same pipeline to move it' });
    await ok(t.live.post('/v1/deals', { name: 'D2', stage_id: a, amount: 3000 }), 201);
    const refused = await t.live.delete(url);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ type: 'conflict', detail: 'Stage has 2 deals; give move_to=<stage_id> of the same pipeline to move them' });
    const other = await newPipeline(t.live);
    for (const target of [a, other.stages[0].id]) {
      const bad = await t.live.delete(`${url}?move_to=${target}`);
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toEqual({ type: 'bad_request', detail: 'move_to must be another stage of the same pipeline', param: 'move_to' });
    }
    expect(await ok(t.live.delete(`${url}?move_to=${won}`))).toEqual({ id: a, deleted: true });
    const moved = await ok(t.live.get(`/v1/deals/${d1.id}`));
    expect(moved).toMatchObject({ stage_id: won, status: 'won', probability: 100 });
    expect(moved.closed_at).toBeGreaterThan(0);
    const history = (await t.live.get(`/v1/deals/${d1.id}/stage-history`)).json().data;
    expect(history.map((h: Json) => [h.stage_id, h.left_at === null])).toEqual([[won, true], [a, false]]);
    // The deleted stage's stay keeps the name it had, in the history and on the deal's timeline.
    expect(history[1].stage_name).toBe('A');
    const timeline = (await t.live.get(`/v1/deals/${d1.id}/timeline?limit=200`)).json().data;
    expect(timeline.map((e: Json) => e.summary)).toContain('Entered stage A');
    const changed = (await t.live.get('/v1/events?type=deal.stage_changed&limit=200')).json().data;
    expect(changed.filter((e: Json) => e.data.object.previous_stage_id === a).length).toBe(2);
    const summary = await ok(t.live.get(`/v1/deals/summary?pipeline_id=${p.id}`));
    expect(summary.stages.map((s: Json) => [s.stage_id, s.count])).toEqual([[b, 0], [won, 2]]);
    expect(summary.stages[1].amounts).toEqual([{ currency: 'USD', count: 2, amount: 4000, weighted_amount: 4000 }]);
    expect((await ok(t.live.get(`/v1/deals/pipelines/${p.id}`))).stages.map((s: Json) => [s.id, s.position])).toEqual([[b, 0], [won, 1]]);

    // The last stage of a pipeline stays.
    const single = await newPipeline(t.live, { name: 'Single', stages: [{ name: 'Only' }] });
    const last = await t.live.delete(`/v1/deals/pipelines/${single.id}/stages/${single.stages[0].id}`);
    expect(last.statusCode).toBe(409);
    expect(last.json()).toEqual({ type: 'conflict', detail: 'A pipeline keeps at least one stage' });
  });

  it('changes the status of a stage\'s deals when the stage changes type', async () => {
    const t = await tenant(app);
    const p = await newPipeline(t.live, { name: 'Types', stages: [{ name: 'Open' }, { name: 'Maybe' }] });
    const deal = await ok(t.live.post('/v1/deals', { name: 'D', stage_id: p.stages[1].id }), 201);
    expect(deal).toMatchObject({ status: 'open', closed_at: null });
    await ok(t.live.patch(`/v1/deals/pipelines/${p.id}/stages/${p.stages[1].id}`, { stage_type: 'lost' }));
    const lost = await ok(t.live.get(`/v1/deals/${deal.id}`));
    expect(lost.status).toBe('lost');
    expect(lost.closed_at).toBeGreaterThan(0);
    await ok(t.live.patch(`/v1/deals/pipelines/${p.id}/stages/${p.stages[1].id}`, { stage_type: 'open' }));
    expect(await ok(t.live.get(`/v1/deals/${deal.id}`))).toMatchObject({ status: 'open', closed_at: null });
  });
});
