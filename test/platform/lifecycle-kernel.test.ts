// What the lifecycle kernel gives a declaration that no group uses yet: a transitional state worked
// by a job (the record stays in it, refusing every write, until its job commits the next state) and
// fields frozen in a state. The resource is defined here, over the campaigns table, and served by an
// app built for this file.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isEventType } from '../../src/platform/event-types.ts';
import type { JobContext } from '../../src/platform/jobs/kinds.ts';
import { defineResource } from '../../src/platform/resource/define.ts';
import { json, text, timestamp } from '../../src/platform/resource/fields.ts';
import { workStates } from '../../src/platform/resource/lifecycle.ts';
import { crudRoutes } from '../../src/platform/resource/routes.ts';
import { tenant, testApp } from '../helpers/app.ts';
import { fails, ok, type Json } from '../helpers/records.ts';

const list = json({ nullable: false, default: [], input: Type.Array(Type.String()), output: Type.Array(Type.String()), description: 'Unused' });
const drills = defineResource({
  name: 'drill', plural: 'drills', prefix: 'cpg', table: 'campaigns', tag: 'Drills', tagDescription: 'Records of the lifecycle test', notFound: 'Drill not found',
  fields: {
    name: text({ required: true, min: 1, description: 'Name', example: 'Fire drill' }),
    channels: list, steps: list,
    launched_at: timestamp({ readOnly: true, description: 'When its work was done', example: 1767225600 }),
  },
  lifecycle: {
    states: ['draft', 'scheduling', 'active', 'archived'], initial: 'draft', description: 'Where the drill stands',
    actions: {
      schedule: { from: ['draft'], to: 'scheduling', summary: 'Schedule a drill', description: 'Schedules it.', eventDescription: 'A drill is being scheduled' },
      archive: { from: ['draft', 'active'], to: 'archived', event: 'archived', summary: 'Archive a drill', description: 'Archives it.', eventDescription: 'A drill was archived' },
    },
    working: { scheduling: { next: 'active', event: 'scheduled', eventDescription: 'A drill was scheduled', work: async (w) => ({ launched_at: w.now }) } },
    frozen: { active: ['name'], archived: '*' },
  },
});
const kind = workStates([drills]);

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { DATABASE_POOL_SIZE: '2', WORKERS: 'off' }, routes: [crudRoutes(drills)] });
});
afterAll(() => app.close());

/** Runs the job the move into `scheduling` enqueued for `id`, as a worker would. */
async function runJob(orgId: string, id: string): Promise<void> {
  const jobs = await app.services.database.db.selectFrom('jobs').select(['payload']).where('org_id', '=', orgId).where('kind', '=', kind.name).execute();
  const payload = jobs.map((j) => JSON.parse(j.payload)).find((p) => p.id === id);
  expect(payload, 'the move enqueued its work').toEqual({ resource: 'drills', id, state: 'scheduling' });
  await kind.run(payload, { database: app.services.database, job: { id: 'job_test', orgId, mode: 'live', attempt: 1, ranBefore: false } } as unknown as JobContext);
}

describe('a declared lifecycle beyond its actions', () => {
  it('declares its events and its state field from the declaration', () => {
    for (const type of ['drill.created', 'drill.updated', 'drill.deleted', 'drill.schedule', 'drill.archived', 'drill.scheduled']) expect(isEventType(type), type).toBe(true);
    expect(drills.fields.status).toMatchObject({ default: 'draft', readOnly: true, input: { enum: ['draft', 'scheduling', 'active', 'archived'] } });
  });

  it('keeps a record in its transitional state, refusing writes, until its job commits the next state', async () => {
    const t = await tenant(app);
    const drill = await ok(t.live.post('/v1/drills', { name: 'Fire drill' }), 201);
    expect(drill.status).toBe('draft');
    expect(await ok(t.live.post(`/v1/drills/${drill.id}/schedule`))).toMatchObject({ status: 'scheduling', launched_at: null });

    await fails(t.live.patch(`/v1/drills/${drill.id}`, { name: 'Other' }), 409, 'A drill that is scheduling cannot be changed until its work is done');
    await fails(t.live.delete(`/v1/drills/${drill.id}`), 409, 'A drill that is scheduling cannot be deleted until its work is done');
    await fails(t.live.post(`/v1/drills/${drill.id}/archive`), 409, 'A drill that is scheduling cannot be archived');

    await runJob(t.org_id, drill.id);
    const done = await ok(t.live.get(`/v1/drills/${drill.id}`));
    expect(done.status).toBe('active');
    expect(done.launched_at).toBeGreaterThan(0);
    const [event] = (await ok(t.live.get('/v1/events?type=drill.scheduled'))) as unknown as Json[];
    expect(event).toMatchObject({ data: { object: { id: drill.id, status: 'active' } }, previous_attributes: { status: 'scheduling', launched_at: null } });

    // The job runs at least once: a second run finds the record past the state and changes nothing.
    await runJob(t.org_id, drill.id);
    expect(await ok(t.live.get('/v1/events?type=drill.scheduled'))).toHaveLength(1);
  });

  it('refuses an update of a field frozen in the record\'s state, and accepts the others', async () => {
    const t = await tenant(app);
    const drill = await ok(t.live.post('/v1/drills', { name: 'Fire drill' }), 201);
    await ok(t.live.post(`/v1/drills/${drill.id}/schedule`));
    await runJob(t.org_id, drill.id);
    await fails(t.live.patch(`/v1/drills/${drill.id}`, { name: 'Other' }), 409, 'A drill that is active cannot be changed: name is frozen');
    expect(await ok(t.live.patch(`/v1/drills/${drill.id}`, { steps: ['one'] }))).toMatchObject({ name: 'Fire drill', steps: ['one'] });
    await ok(t.live.post(`/v1/drills/${drill.id}/archive`));
    await fails(t.live.patch(`/v1/drills/${drill.id}`, { steps: [] }), 409, 'A drill that is archived cannot be changed: steps is frozen');
  });
});
