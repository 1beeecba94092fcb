// Stage checklist pipelines (sales methodologies) through HTTP: the evidence library and an
// organization's own keys, methodologies with stages, templates, stage add/update/order/delete, what
// deleting refuses while a deal stage links a stage, the events, and isolation between tenants.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { ok, type Json } from '../helpers/records.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' } });
afterAll(() => app.close());

const methodology = (c: Client, body: object = { name: 'Ours' }) => ok(c.post('/v1/pipelines', body), 201);
const events = async (c: Client, type: string) => (await c.get(`/v1/events?type=${type}&limit=200`)).json().data as Json[];
const dealPipeline = async (c: Client) => (await c.get('/v1/deals/pipelines?limit=200')).json().data.find((p: Json) => p.is_default);

const CANONICAL = ['budget_confirmed', 'timeline_known', 'decision_maker_identified', 'pain_identified', 'champion_identified', 'competition_known', 'success_criteria_agreed', 'procurement_process_known'];

describe('the evidence library', () => {
  it('lists the canonical keys and the organization\'s own, which are snake_case and unique', async () => {
    const t = await tenant(app);
    const library = await ok(t.live.get('/v1/pipelines/evidence-library'));
    for (const key of CANONICAL) expect(library.find((k: Json) => k.key === key)).toMatchObject({ key, built_in: true, title: expect.any(String), description: expect.any(String) });
    expect(library.every((k: Json) => /^[a-z][a-z0-9_]*$/.test(k.key))).toBe(true);

    const added = await ok(t.live.post('/v1/pipelines/evidence-library', { key: 'security_review_passed', title: 'Security review passed' }), 201);
    expect(added).toEqual({ key: 'security_review_passed', title: 'Security review passed', description: null, built_in: false });
    expect((await ok(t.live.get('/v1/pipelines/evidence-library'))).at(-1)).toEqual(added);
    expect((await events(t.live, 'evidence_key.created')).map((e) => e.data.object.key)).toEqual(['security_review_passed']);

    const again = await t.live.post('/v1/pipelines/evidence-library', { key: 'security_review_passed', title: 'Again' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ type: 'conflict', detail: 'Evidence key security_review_passed already exists' });
    const builtIn = await t.live.post('/v1/pipelines/evidence-library', { key: 'budget_confirmed', title: 'Mine' });
    expect(builtIn.statusCode).toBe(409);
    expect(builtIn.json()).toEqual({ type: 'conflict', detail: 'Evidence key budget_confirmed is a built-in key of the library' });
    for (const key of ['SecurityReview', 'security-review', '1st_call', '']) {
      const bad = await t.live.post('/v1/pipelines/evidence-library', { key, title: 'Bad' });
      expect(bad.statusCode, key).toBe(422);
      expect(bad.json().detail[0].loc).toEqual(['body', 'key']);
    }
    // Another tenant, and the other mode, have only the canonical keys.
    const other = await tenant(app);
    for (const c of [other.live, t.test]) expect((await ok(c.get('/v1/pipelines/evidence-library'))).some((k: Json) => k.key === 'security_review_passed')).toBe(false);
  });
});

describe('methodologies', () => {
  it('creates one with stages, reads, lists, renames and deletes it, recording pipeline events', async () => {
    const t = await tenant(app);
    const made = await methodology(t.live, {
      name: 'Enterprise', description: 'Big deals',
      stages: [
        { name: 'Discover', required_elements: [], recommended_elements: ['pain_identified'], channel_scripts: { email: 'Hi', call: 'Ask' }, exit_criteria: 'Pain named' },
        { name: 'Prove', stage_type: 'open', required_elements: ['pain_identified', 'budget_confirmed'] },
        { name: 'Won', stage_type: 'won' },
      ],
    });
    expect(made).toMatchObject({ name: 'Enterprise', description: 'Big deals', template: null });
    expect(made.id).toMatch(/^ckp_/);
    expect(made.stages.map((s: Json) => [s.name, s.position, s.stage_type, s.required_elements, s.recommended_elements])).toEqual([
      ['Discover', 0, 'open', [], ['pain_identified']], ['Prove', 1, 'open', ['pain_identified', 'budget_confirmed'], []], ['Won', 2, 'won', [], []],
    ]);
    expect(made.stages[0]).toMatchObject({ channel_scripts: { email: 'Hi', call: 'Ask' }, exit_criteria: 'Pain named', pipeline_id: made.id });
    expect(made.stages[1]).toMatchObject({ channel_scripts: {}, exit_criteria: null });
    expect(await ok(t.live.get(`/v1/pipelines/${made.id}`))).toEqual(made);
    expect((await events(t.live, 'pipeline.created'))[0].data.object).toEqual(made);
    const page = (await t.live.get('/v1/pipelines?name=enter')).json();
    expect(page.pagination.total).toBe(1);
    expect(page.data[0]).toEqual(made);

    const renamed = await ok(t.live.patch(`/v1/pipelines/${made.id}`, { name: 'Strategic' }));
    expect(renamed.name).toBe('Strategic');
    expect((await events(t.live, 'pipeline.updated'))[0].previous_attributes).toEqual({ name: 'Enterprise' });
    expect((await t.live.patch(`/v1/pipelines/${made.id}`, {})).json()).toEqual({ type: 'bad_request', detail: 'No fields to update' });

    expect(await ok(t.live.delete(`/v1/pipelines/${made.id}`))).toEqual({ id: made.id, deleted: true });
    const gone = await t.live.get(`/v1/pipelines/${made.id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ type: 'not_found', detail: 'Pipeline not found' });
    expect((await events(t.live, 'pipeline.deleted'))[0].data.object.stages).toHaveLength(3);
  });

  it('refuses unknown evidence keys, naming each at its place, and writes nothing', async () => {
    const t = await tenant(app);
    const res = await t.live.post('/v1/pipelines', { name: 'X', stages: [{ name: 'A', required_elements: ['budget_confirmed', 'made_up'] }, { name: 'B', recommended_elements: ['also_made_up'] }] });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail.map((e: Json) => [e.loc.join('.'), e.msg.split(':')[0]])).toEqual([
      ['body.stages.0.required_elements.1', 'unknown evidence key made_up'], ['body.stages.1.recommended_elements.0', 'unknown evidence key also_made_up'],
    ]);
    expect((await t.live.get('/v1/pipelines')).json().pagination.total).toBe(0);
    const notSnake = await t.live.post('/v1/pipelines', { name: 'X', stages: [{ name: 'A', required_elements: ['Budget'] }] });
    expect(notSnake.statusCode).toBe(422);
    // A key of the organization's own is accepted once it is in the library.
    await ok(t.live.post('/v1/pipelines/evidence-library', { key: 'made_up', title: 'Made up' }), 201);
    const made = await methodology(t.live, { name: 'X', stages: [{ name: 'A', required_elements: ['budget_confirmed', 'made_up'] }] });
    expect(made.stages[0].required_elements).toEqual(['budget_confirmed', 'made_up']);
  });

  it('makes complete methodologies from the built-in templates, with library keys only', async () => {
    const t = await tenant(app);
    const library = new Set((await ok(t.live.get('/v1/pipelines/evidence-library'))).map((k: Json) => k.key));
    for (const [template, name] of [['meddpicc', 'MEDDPICC'], ['bant', 'BANT'], ['spiced', 'SPICED']]) {
      const made = await ok(t.live.post('/v1/pipelines/from-template', { template }), 201);
      expect(made).toMatchObject({ name, template });
      expect(made.stages.length).toBeGreaterThanOrEqual(4);
      expect(made.stages.map((s: Json) => s.position)).toEqual(made.stages.map((_: Json, i: number) => i));
      expect(made.stages.some((s: Json) => s.required_elements.length > 0)).toBe(true);
      expect(made.stages.some((s: Json) => s.stage_type === 'won')).toBe(true);
      for (const s of made.stages) for (const key of [...s.required_elements, ...s.recommended_elements]) expect(library.has(key), `${template}: ${key}`).toBe(true);
      expect(made.stages.filter((s: Json) => s.stage_type === 'open').every((s: Json) => s.channel_scripts.email && s.channel_scripts.call && s.exit_criteria)).toBe(true);
    }
    const named = await ok(t.live.post('/v1/pipelines/from-template', { template: 'bant', name: 'Inbound BANT' }), 201);
    expect(named).toMatchObject({ name: 'Inbound BANT', template: 'bant' });
    expect((await t.live.get('/v1/pipelines?template=bant')).json().pagination.total).toBe(2);
    expect((await events(t.live, 'pipeline.created'))).toHaveLength(4);
    const unknown = await t.live.post('/v1/pipelines/from-template', { template: 'challenger' });
    expect(unknown.statusCode).toBe(400);
    expect((await t.live.post('/v1/pipelines', { name: 'X', template: 'bant' })).statusCode).toBe(422);
  });
});

describe('stages of a methodology', () => {
  it('adds, updates, deletes and reorders stages, each a pipeline.updated', async () => {
    const t = await tenant(app);
    const p = await methodology(t.live, { name: 'Short', stages: [{ name: 'One' }, { name: 'Two' }] });
    const three = await ok(t.live.post(`/v1/pipelines/${p.id}/stages`, { name: 'Three', required_elements: ['timeline_known'], channel_scripts: { email: 'Hello' } }), 201);
    expect(three).toMatchObject({ name: 'Three', position: 2, stage_type: 'open', required_elements: ['timeline_known'], recommended_elements: [], channel_scripts: { email: 'Hello' }, exit_criteria: null });
    const changed = await ok(t.live.patch(`/v1/pipelines/${p.id}/stages/${three.id}`, { recommended_elements: ['competition_known'], exit_criteria: 'Date agreed', stage_type: 'won' }));
    expect(changed).toMatchObject({ id: three.id, required_elements: ['timeline_known'], recommended_elements: ['competition_known'], exit_criteria: 'Date agreed', stage_type: 'won' });
    expect((await t.live.patch(`/v1/pipelines/${p.id}/stages/${three.id}`, { exit_criteria: null })).json().data.exit_criteria).toBeNull();
    expect((await t.live.patch(`/v1/pipelines/${p.id}/stages/${three.id}`, {})).json()).toEqual({ type: 'bad_request', detail: 'No fields to update' });
    const badKey = await t.live.patch(`/v1/pipelines/${p.id}/stages/${three.id}`, { required_elements: ['nope'] });
    expect(badKey.statusCode).toBe(422);
    expect(badKey.json().detail[0]).toMatchObject({ loc: ['body', 'required_elements', '0'] });
    expect((await t.live.post(`/v1/pipelines/${p.id}/stages`, { name: 'Bad', recommended_elements: ['nope'] })).statusCode).toBe(422);

    const ids = (await ok(t.live.get(`/v1/pipelines/${p.id}`))).stages.map((s: Json) => s.id);
    const reordered = await ok(t.live('PUT', `/v1/pipelines/${p.id}/stages/order`, { stage_ids: [ids[2], ids[0], ids[1]] }));
    expect(reordered.stages.map((s: Json) => [s.id, s.position])).toEqual([[ids[2], 0], [ids[0], 1], [ids[1], 2]]);
    const order = (body: object) => t.live('PUT', `/v1/pipelines/${p.id}/stages/order`, body);
    for (const stage_ids of [[ids[0], ids[1]], [ids[0], ids[0], ids[1]], [ids[0], ids[1], ids[2], ids[2]]]) {
      const res = await order({ stage_ids });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ type: 'bad_request', detail: 'stage_ids must name every stage of the pipeline exactly once', param: 'stage_ids' });
    }
    const foreign = await order({ stage_ids: [ids[0], ids[1], 'cks_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ type: 'not_found', detail: 'Stage not found' });

    expect(await ok(t.live.delete(`/v1/pipelines/${p.id}/stages/${ids[2]}`))).toEqual({ id: ids[2], deleted: true });
    expect((await ok(t.live.get(`/v1/pipelines/${p.id}`))).stages.map((s: Json) => [s.id, s.position])).toEqual([[ids[0], 0], [ids[1], 1]]);
    for (const [method, url] of [['PATCH', `/v1/pipelines/${p.id}/stages/${ids[2]}`], ['DELETE', `/v1/pipelines/${p.id}/stages/${ids[2]}`]] as const) {
      const res = await t.live(method, url, method === 'PATCH' ? { name: 'X' } : undefined);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ type: 'not_found', detail: 'Stage not found' });
    }
    const unknown = await t.live.post('/v1/pipelines/ckp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B/stages', { name: 'X' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ type: 'not_found', detail: 'Pipeline not found' });
    // Created, three stage changes, reorder, delete (the invalid requests recorded nothing).
    expect(await events(t.live, 'pipeline.updated')).toHaveLength(5);
    expect((await events(t.live, 'pipeline.updated'))[0].data.object.stages).toHaveLength(2);
  });

  it('holds at most 50 stages', async () => {
    const t = await tenant(app);
    const p = await methodology(t.live, { name: 'Long', stages: Array.from({ length: 50 }, (_, i) => ({ name: `S${i}` })) });
    const res = await t.live.post(`/v1/pipelines/${p.id}/stages`, { name: 'One more' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ type: 'conflict', detail: 'A pipeline has at most 50 stages' });
    expect((await t.live.post('/v1/pipelines', { name: 'Too long', stages: Array.from({ length: 51 }, (_, i) => ({ name: `S${i}` })) })).statusCode).toBe(422);
  });

  it('refuses to delete a stage or a methodology that a deal stage links, naming the deal stage', async () => {
    const t = await tenant(app);
    const p = await methodology(t.live, { name: 'Linked', stages: [{ name: 'A' }, { name: 'B' }] });
    const deals = await dealPipeline(t.live);
    const dealStage = deals.stages[1];
    await ok(t.live.patch(`/v1/deals/pipelines/${deals.id}/stages/${dealStage.id}`, { checklist_stage_id: p.stages[1].id }));
    const stage = await t.live.delete(`/v1/pipelines/${p.id}/stages/${p.stages[1].id}`);
    expect(stage.statusCode).toBe(409);
    expect(stage.json()).toEqual({ type: 'conflict', detail: `Stage ${p.stages[1].id} is linked from deal stage ${dealStage.id} (${dealStage.name}) of deal pipeline ${deals.id}; unlink it first` });
    const whole = await t.live.delete(`/v1/pipelines/${p.id}`);
    expect(whole.statusCode).toBe(409);
    expect(whole.json()).toEqual({ type: 'conflict', detail: `The pipeline is linked from deal stage ${dealStage.id} (${dealStage.name}) of deal pipeline ${deals.id}; unlink it first` });
    expect((await ok(t.live.get(`/v1/pipelines/${p.id}`))).stages).toHaveLength(2);
    // The unlinked stage goes; once the deal stage lets go, so does the methodology.
    await ok(t.live.delete(`/v1/pipelines/${p.id}/stages/${p.stages[0].id}`));
    await ok(t.live.patch(`/v1/deals/pipelines/${deals.id}/stages/${dealStage.id}`, { checklist_stage_id: null }));
    await ok(t.live.delete(`/v1/pipelines/${p.id}`));
  });
});

describe('isolation', () => {
  it('answers another organization and the other mode like a missing methodology or stage', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const p = await methodology(a.live, { name: 'Mine', stages: [{ name: 'A', required_elements: ['budget_confirmed'] }, { name: 'B' }] });
    const stageId = p.stages[0].id;
    for (const c of [b.live, b.test, a.test]) {
      for (const [method, url, body] of [
        ['GET', `/v1/pipelines/${p.id}`], ['PATCH', `/v1/pipelines/${p.id}`, { name: 'X' }], ['DELETE', `/v1/pipelines/${p.id}`],
        ['POST', `/v1/pipelines/${p.id}/stages`, { name: 'X' }], ['PATCH', `/v1/pipelines/${p.id}/stages/${stageId}`, { name: 'X' }],
        ['DELETE', `/v1/pipelines/${p.id}/stages/${stageId}`], ['PUT', `/v1/pipelines/${p.id}/stages/order`, { stage_ids: p.stages.map((s: Json) => s.id) }],
      ] as const) {
        const res = await c(method, url, body);
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json()).toEqual({ type: 'not_found', detail: 'Pipeline not found' });
      }
      expect((await c.get('/v1/pipelines?limit=200')).json().data.some((x: Json) => x.id === p.id)).toBe(false);
      // Nor can another tenant's deal stage link it.
      const theirs = await dealPipeline(c);
      const link = await c.patch(`/v1/deals/pipelines/${theirs.id}/stages/${theirs.stages[0].id}`, { checklist_stage_id: stageId });
      expect(link.statusCode).toBe(404);
      expect(link.json()).toEqual({ type: 'not_found', detail: 'Checklist stage not found' });
    }
    expect((await ok(a.live.get(`/v1/pipelines/${p.id}`))).stages).toHaveLength(2);
  });
});
