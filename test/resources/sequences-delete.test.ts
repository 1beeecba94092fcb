// Deleting a sequence, through HTTP, on a clock the tests move: the sequence leaves the API (404 on
// every route of it, absent from lists, totals and filters) while its messages stay in the outbox and
// its enrollments stay readable, finished with reason `deleted`; the scheduler sends nothing more,
// whether the sequence was paused or deleted live with its campaign.
import { afterAll, describe, expect, it } from 'vitest';
import { clock, tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ok, type Json } from '../helpers/records.ts';
import { waitFor } from '../helpers/wait.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());

const at = (iso: string) => Date.parse(iso) / 1000;
const STEPS = [{ subject: 'Hi', body: 'x' }, { time_interval: 86_400, subject: 'Again', body: 'y' }];

const get = (c: Client, path: string) => ok(c.get(path));
const status = async (c: Client, id: string) => (await get(c, `/v1/sequences/${id}`)).status as string;
const until = (c: Client, id: string, wanted: string) => waitFor(() => status(c, id), (s) => s === wanted);
const outboxOf = async (c: Client, id: string) => (await get(c, `/v1/outbox?record_id=${id}&limit=100`)) as unknown as Json[];
const sent = (c: Client, id: string, n: number) => waitFor(() => outboxOf(c, id), (m) => m.filter((x) => x.status !== 'queued').length >= n);
const enrollmentsOf = async (c: Client, id: string) => (await get(c, `/v1/enrollments?sequence_id=${id}&limit=100`)) as unknown as Json[];
/** The ids a list answers, and its total. */
async function listed(c: Client, path: string): Promise<{ ids: string[]; total: number }> {
  const body = (await c.get(path)).json();
  return { ids: body.data.map((x: Json) => x.id), total: body.pagination.total };
}

/** A list of two contacts and a mailbox, in test mode (sends go to the local driver). */
async function setup() {
  const c = (await tenant(app, { sandbox: false })).test;
  const list = await ok(c.post('/v1/lists', { name: 'Founders', type: 'contacts' }), 201);
  const contacts = [
    await ok(c.post('/v1/contacts', { list_id: list.id, work_email: 'grace@example.org' }), 201),
    await ok(c.post('/v1/contacts', { list_id: list.id, work_email: 'alan@example.org' }), 201),
  ];
  const mailbox = await ok(c.post('/v1/mailboxes', { email: 'ada@sender.example' }), 201);
  return { c, list, contacts, mailbox };
}

describe('deleting a sequence', () => {
  it('takes it out of the API, keeps its messages and enrollments as finished history, and sends nothing more', async () => {
    clock.set(at('2027-05-10T10:00:00Z')); // a Monday, in the window
    const { c, list, contacts, mailbox } = await setup();
    const make = async (name: string) => {
      const seq = await ok(c.post('/v1/sequences', { name, associated_list_id: list.id, mailbox_ids: [mailbox.id] }), 201);
      for (const step of STEPS) await ok(c.post(`/v1/sequences/${seq.id}/steps`, step), 201);
      await ok(c.post(`/v1/sequences/${seq.id}/run`));
      await sent(c, seq.id, 2);
      return seq;
    };
    const doomed = await make('Doomed');
    const kept = await make('Kept');
    const [step] = (await get(c, `/v1/sequences/${doomed.id}/steps`)) as unknown as Json[];

    await fails(c.delete(`/v1/sequences/${doomed.id}`), 409, 'A sequence that is live cannot be deleted: pause or terminate it first');
    await ok(c.post(`/v1/sequences/${doomed.id}/pause`));
    await until(c, doomed.id, 'paused');
    expect(await ok(c.delete(`/v1/sequences/${doomed.id}`))).toEqual({ id: doomed.id, deleted: true });

    // Every route of it is 404 as for an id that never existed, a second delete too.
    const path = `/v1/sequences/${doomed.id}`;
    type Call = ['GET' | 'POST' | 'PATCH' | 'DELETE', string, unknown?];
    const gone: Call[] = [
      ['GET', path], ['PATCH', path, { name: 'Back' }], ['DELETE', path],
      ...['run', 'pause', 'resume', 'terminate'].map((action) => ['POST', `${path}/${action}`] as Call),
      ['GET', `${path}/steps`], ['POST', `${path}/steps`, { subject: 'More', body: 'z' }], ['PATCH', `${path}/steps/${step.id}`, { body: 'w' }],
      ['DELETE', `${path}/steps/${step.id}`], ['POST', `${path}/steps/reorder`, { step_ids: [step.id] }],
      ['GET', `${path}/enrollments`], ['POST', `${path}/enrollments`, { contact_ids: [contacts[0].id] }],
      ['POST', `${path}/preview`, { contact_id: contacts[0].id, step_id: step.id }], ['GET', `${path}/analytics`],
    ];
    for (const [method, url, body] of gone) {
      const res = await c(method, url, body);
      expect([res.statusCode, res.json()], `${method} ${url}`).toEqual([404, { type: 'not_found', detail: 'Sequence not found' }]);
    }

    // Lists, totals and filters leave it out.
    expect(await listed(c, '/v1/sequences')).toEqual({ ids: [kept.id], total: 1 });
    expect(await listed(c, `/v1/sequences?associated_list_id=${list.id}`)).toEqual({ ids: [kept.id], total: 1 });
    expect(await listed(c, '/v1/sequences?status=paused')).toEqual({ ids: [], total: 0 });
    expect(await listed(c, '/v1/sequences?search=Doomed')).toEqual({ ids: [], total: 0 });

    // What it sent stays in the outbox, naming it; its enrollments are finished history.
    const messages = await outboxOf(c, doomed.id);
    expect(messages.map((m) => [m.record_type, m.record_id, m.subject])).toEqual([['sequence', doomed.id, 'Hi'], ['sequence', doomed.id, 'Hi']]);
    const finished = await enrollmentsOf(c, doomed.id);
    expect(finished.map((e) => [e.status, e.reason, e.due_at, e.step_index])).toEqual([['finished', 'deleted', null, 1], ['finished', 'deleted', null, 1]]);
    expect(await get(c, `/v1/enrollments/${finished[0].id}`)).toEqual(finished[0]);
    const ofContact = (await get(c, `/v1/contacts/${contacts[0].id}/enrollments`)) as unknown as Json[];
    expect(ofContact.map((e) => [e.sequence_id, e.status]).sort()).toEqual([[doomed.id, 'finished'], [kept.id, 'active']].sort());
    await fails(c.patch(`/v1/enrollments/${finished[0].id}`, { status: 'active' }), 409, 'An enrollment that is finished cannot be resumed');
    const [event] = ((await get(c, '/v1/events?type=sequence.deleted')) as unknown as Json[]);
    expect(event.data.object).toMatchObject({ id: doomed.id, status: 'paused', counts: { enrolled: 2, active: 0, finished: 2 } });

    // The second steps fall due: the kept sequence sends them, the deleted one nothing.
    clock.advance(86_400 + 60);
    await sent(c, kept.id, 4);
    expect((await outboxOf(c, doomed.id)).length).toBe(2);
  });

  it('a drafted sequence is deleted with its enrollments finished, and a campaign deleted live takes its sequence with it, which stops sending', async () => {
    clock.set(at('2027-05-17T10:00:00Z')); // a Monday
    const { c, list, contacts, mailbox } = await setup();
    const drafted = await ok(c.post('/v1/sequences', { name: 'Drafted', mailbox_ids: [mailbox.id] }), 201);
    await ok(c.post(`/v1/sequences/${drafted.id}/enrollments`, { contact_ids: [contacts[0].id] }), 201);
    await ok(c.delete(`/v1/sequences/${drafted.id}`));
    expect((await enrollmentsOf(c, drafted.id)).map((e) => [e.status, e.reason])).toEqual([['finished', 'deleted']]);

    const launched = async (name: string) => {
      const campaign = await ok(c.post('/v1/campaigns', { name, list_id: list.id, mailbox_ids: [mailbox.id], steps: [
        { channel: 'email', subject: 'Hello', body: 'Hi' }, { channel: 'email', delay_days: 1, body: 'Again' },
      ] }), 201);
      const { sequence_id: id } = await ok(c.post(`/v1/campaigns/${campaign.id}/launch`, { force: true }));
      await until(c, id, 'live');
      await sent(c, id, 2);
      return { campaign, sequenceId: id as string };
    };
    const doomed = await launched('Doomed');
    const kept = await launched('Kept');
    await ok(c.delete(`/v1/campaigns/${doomed.campaign.id}`));
    await fails(c.get(`/v1/sequences/${doomed.sequenceId}`), 404, 'Sequence not found');
    expect(await listed(c, '/v1/sequences')).toEqual({ ids: [kept.sequenceId], total: 1 });
    expect((await enrollmentsOf(c, doomed.sequenceId)).map((e) => [e.status, e.reason])).toEqual([['finished', 'deleted'], ['finished', 'deleted']]);

    clock.advance(86_400 + 60);
    await sent(c, kept.sequenceId, 4);
    expect((await outboxOf(c, doomed.sequenceId)).length).toBe(2);
  });
});
