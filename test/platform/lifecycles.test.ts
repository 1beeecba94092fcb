// Generated from the registry: for every resource that declares a lifecycle, every action is taken
// from every state, through HTTP (its route, or the public link or job that takes it): allowed moves
// answer 200 with the record in the target state and record the action's event with the state left;
// refused ones answer the kernel's 409 naming the state and change nothing. The OpenAPI document and
// the event catalogue carry what the declaration says. A resource that declares states needs a way
// to bring a record into each of them below (`reach`), so a new lifecycle cannot go untested.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/platform/errors.ts';
import type { Resource } from '../../src/platform/resource/define.ts';
import { eventSuffix } from '../../src/platform/resource/lifecycle.ts';
import { runWrite, type WriteContext } from '../../src/platform/write.ts';
import { resourcePath, resources } from '../../src/resources/registry.ts';
import { dialerSessions } from '../../src/resources/voice/sessions.resource.ts';
import { acceptQuote, declineQuote, expireQuote, viewQuote } from '../../src/resources/quotes/transitions.ts';
import { campaigns } from '../../src/resources/campaigns/campaigns.resource.ts';
import { inbox } from '../../src/resources/inbox/inbox.resource.ts';
import { enrollments } from '../../src/resources/sequences/enrollments.resource.ts';
import { sequences } from '../../src/resources/sequences/sequences.resource.ts';
import { runAction } from '../../src/platform/resource/lifecycle.ts';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { emailConnection, inboundUrl, rawMail, receive } from '../helpers/inbox.ts';
import { ok, type Json } from '../helpers/records.ts';
import { waitFor } from '../helpers/wait.ts';

const env = { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_SECOND: '100000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' };
let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env });
});
afterAll(() => app.close());

type Tenant = Awaited<ReturnType<typeof tenant>>;
/** A record brought into a state, with what its public actions need. */
interface Reached {
  id: string;
  token?: string;
}
/** What an action answered: its status and, when refused, its detail. */
interface Outcome {
  status: number;
  detail?: string;
}
interface Setup {
  /** A record of the tenant in `state`. */
  reach(t: Tenant, state: string): Promise<Reached>;
  /** How actions without a route (or whose route takes a body) are taken; `quiet`: a refused one answers without moving (a view). */
  take?: Record<string, { run(t: Tenant, rec: Reached): Promise<Outcome>; quiet?: boolean }>;
}

const answered = async (res: Promise<{ statusCode: number; json: () => Json }>): Promise<Outcome> => {
  const r = await res;
  return { status: r.statusCode, detail: r.statusCode === 200 ? undefined : r.json().detail };
};
/** Runs a write of the tenant's live mode as a job would, answering its refusal like a route. */
async function asJob(t: Tenant, work: (w: WriteContext) => Promise<unknown>): Promise<Outcome> {
  try {
    await runWrite(app.services.database, { orgId: t.org_id, mode: 'live' }, work);
    return { status: 200 };
  } catch (error) {
    if (error instanceof AppError) return { status: error.status, detail: String(error.detail) };
    throw error;
  }
}
const setStored = (table: 'campaigns' | 'quotes' | 'sequences' | 'sequence_enrollments', id: string, values: Record<string, unknown>) =>
  app.services.database.db.updateTable(table).set(values).where('id', '=', id).execute();

async function campaign(c: Client): Promise<Json> {
  const list = await ok(c.post('/v1/lists', { name: 'Audience', type: 'contacts' }), 201);
  await ok(c.post('/v1/contacts', { list_id: list.id, work_email: `p${Math.random().toString(36).slice(2)}@audience.example` }), 201);
  const mailbox = await ok(c.post('/v1/mailboxes', { email: `m${Math.random().toString(36).slice(2)}@sender.example` }), 201);
  // Due a day after the launch: the walk sends nothing.
  return ok(c.post('/v1/campaigns', { name: 'Walked', list_id: list.id, mailbox_ids: [mailbox.id], steps: [{ channel: 'email', delay_days: 1, subject: 'Hi', body: 'Hello' }] }), 201);
}

/** A drafted sequence that can run (a step, a mailbox), and a contact of its list. */
async function sequence(c: Client): Promise<{ id: string; contact: string }> {
  const list = await ok(c.post('/v1/lists', { name: 'Enrolled', type: 'contacts' }), 201);
  const contact = await ok(c.post('/v1/contacts', { list_id: list.id, work_email: `p${Math.random().toString(36).slice(2)}@enrolled.example` }), 201);
  const mailbox = await ok(c.post('/v1/mailboxes', { email: `m${Math.random().toString(36).slice(2)}@sender.example` }), 201);
  const seq = await ok(c.post('/v1/sequences', { name: 'Walked', associated_list_id: list.id, mailbox_ids: [mailbox.id] }), 201);
  await ok(c.post(`/v1/sequences/${seq.id}/steps`, { subject: 'Hi', body: 'Hello {{ contact.first_name }}' }), 201);
  return { id: seq.id, contact: contact.id };
}
const patchEnrollment = (t: Tenant, rec: Reached, status: string) => answered(t.live.patch(`/v1/enrollments/${rec.id}`, { status }));

/** A draft that can be sent: a contact and a line. */
async function draftQuote(c: Client): Promise<Json> {
  const list = await ok(c.post('/v1/lists', { name: 'People', type: 'contacts' }), 201);
  const to = await ok(c.post('/v1/contacts', { list_id: list.id, name: 'Ada' }), 201);
  return ok(c.post('/v1/quotes', { title: 'Walked', contact_id: to.id, line_items: [{ name: 'Workshop', unit_price: 1000 }] }), 201);
}

async function sentQuote(c: Client): Promise<Reached> {
  const sent = await ok(c.post(`/v1/quotes/${(await draftQuote(c)).id}/send`));
  return { id: sent.id, token: sent.public_token };
}

const publicly = (rec: Reached, action: 'accept' | 'decline', body: Json) => answered(app.inject({ method: 'POST', url: `/v1/public/quotes/${rec.token}/${action}`, payload: body }));
/** A draft has no public link: its recipient's actions are taken as the link's routes take them. */
const link = (rec: Reached) => ({ quote_id: rec.id });

const SETUPS: Record<string, Setup> = {
  campaigns: {
    async reach(t, state) {
      const { id } = await campaign(t.live);
      if (state === 'draft') return { id };
      // Past its preflight (campaign-preflight.test.ts): the walked campaign's mailbox is on no verified domain.
      const { sequence_id } = await ok(t.live.post(`/v1/campaigns/${id}/launch`, { force: true }));
      // Its sequence is live once its scheduling job is done: a pause before then is 409 (campaigns.test.ts).
      await waitFor(async () => (await ok(t.live.get(`/v1/sequences/${sequence_id}`))).status, (s) => s === 'live');
      if (state === 'paused') await ok(t.live.post(`/v1/campaigns/${id}/pause`));
      // Completed as its sequence's completion leaves it (campaign-sends.test.ts walks that).
      if (state === 'completed') await setStored('campaigns', id, { status: 'completed' });
      return { id };
    },
    take: {
      launch: { run: async (t, rec) => answered(t.live.post(`/v1/campaigns/${rec.id}/launch`, { force: true })) },
      complete: { run: async (t, rec) => asJob(t, (w) => runAction(campaigns, w, rec.id, 'complete')) },
    },
  },
  sequences: {
    async reach(t, state) {
      const { id } = await sequence(t.live);
      // Each state as its moves leave it (their jobs are walked in sequences.test.ts).
      if (state !== 'drafted') await setStored('sequences', id, { status: state });
      return { id };
    },
    take: {
      complete: { run: async (t, rec) => asJob(t, (w) => runAction(sequences, w, rec.id, 'complete')) },
    },
  },
  enrollments: {
    async reach(t, state) {
      const seq = await sequence(t.live);
      const { results } = await ok(t.live.post(`/v1/sequences/${seq.id}/enrollments`, { contact_ids: [seq.contact] }), 201);
      const id = results[0].enrollment_id as string;
      if (state !== 'active') await setStored('sequence_enrollments', id, { status: state });
      return { id };
    },
    take: {
      pause: { run: (t, rec) => patchEnrollment(t, rec, 'paused') },
      resume: { run: (t, rec) => patchEnrollment(t, rec, 'active') },
      finish: { run: (t, rec) => patchEnrollment(t, rec, 'finished') },
      fail: { run: async (t, rec) => asJob(t, (w) => runAction(enrollments, w, rec.id, 'fail', { error: 'The contact has no e-mail address' })) },
    },
  },
  inbox: {
    async reach(t, state) {
      const connection = await emailConnection(t.live);
      const { thread_id: id } = await receive(app, await inboundUrl(t.live, connection), rawMail());
      if (state === 'snoozed') await ok(t.live.post(`/v1/inbox/${id}/snooze`, { until: Math.floor(Date.now() / 1000) + 3600 }));
      if (state === 'closed') await ok(t.live.post(`/v1/inbox/${id}/close`));
      return { id };
    },
    take: {
      snooze: { run: async (t, rec) => answered(t.live.post(`/v1/inbox/${rec.id}/snooze`, { until: Math.floor(Date.now() / 1000) + 7200 })) },
      wake: { run: async (t, rec) => asJob(t, (w) => runAction(inbox, w, rec.id, 'wake')) },
    },
  },
  // A live session calls through a local telephony connection; one with a contact outside its hours
  // stays running (the contact waits), one over an empty list completes at once.
  'voice/dialer/sessions': {
    async reach(t, state) {
      await ok(t.live.post('/v1/connections', { kind: 'telephony', provider: 'local' }), 201);
      const member = await ok(t.live.post('/v1/members', { name: 'Agent', email: `a${Math.random().toString(36).slice(2)}@example.com` }), 201);
      const agent = await ok(t.live.post('/v1/voice/agents', { member_id: member.id, status: 'available' }), 201);
      const number = await ok(t.live.post('/v1/voice/numbers', { phone_number: '+14155550100' }), 201);
      const list = await ok(t.live.post('/v1/lists', { name: 'Calls', type: 'contacts' }), 201);
      const start = (new Date().getUTCHours() + 2) % 24;
      if (state !== 'completed') await ok(t.live.post('/v1/contacts', { list_id: list.id, first_name: 'Later', phone: '+442079460120' }), 201);
      const session = await ok(t.live.post('/v1/voice/dialer/sessions', { list_id: list.id, agent_id: agent.id, number_id: number.id, calling_window: { start_hour: start, end_hour: start + 1, timezone: 'UTC' } }), 201);
      if (state === 'running' || state === 'completed') await ok(t.live.post(`/v1/voice/dialer/sessions/${session.id}/resume`));
      if (state === 'stopped') await ok(t.live.post(`/v1/voice/dialer/sessions/${session.id}/stop`));
      if (state === 'completed') await waitFor(() => ok(t.live.get(`/v1/voice/dialer/sessions/${session.id}`)), (x) => x.status === 'completed');
      return { id: session.id };
    },
    take: { complete: { run: async (t, rec) => asJob(t, (w) => runAction(dialerSessions, w, rec.id, 'complete')) } },
  },
  quotes: {
    async reach(t, state) {
      if (state === 'draft') return { id: (await draftQuote(t.live)).id };
      const rec = await sentQuote(t.live);
      if (state === 'viewed') await ok(app.inject({ method: 'GET', url: `/v1/public/quotes/${rec.token}` }));
      if (state === 'accepted') expect((await publicly(rec, 'accept', { name: 'Ada Lovelace' })).status).toBe(200);
      if (state === 'declined') expect((await publicly(rec, 'decline', {})).status).toBe(200);
      if (state === 'void') await ok(t.live.post(`/v1/quotes/${rec.id}/void`));
      if (state === 'expired') {
        await setStored('quotes', rec.id, { valid_until: Math.floor(Date.now() / 1000) - 60 });
        expect((await asJob(t, (w) => expireQuote(w, rec.id))).status).toBe(200);
      }
      return rec;
    },
    take: {
      view: {
        quiet: true,
        run: async (t, rec) => (rec.token ? answered(app.inject({ method: 'GET', url: `/v1/public/quotes/${rec.token}` })) : asJob(t, (w) => viewQuote(w, link(rec)))),
      },
      accept: { run: async (t, rec) => (rec.token ? publicly(rec, 'accept', { name: 'Ada Lovelace' }) : asJob(t, (w) => acceptQuote(w, link(rec), 'Ada Lovelace', '203.0.113.7'))) },
      decline: { run: async (t, rec) => (rec.token ? publicly(rec, 'decline', { reason: 'Not now' }) : asJob(t, (w) => declineQuote(w, link(rec), 'Not now'))) },
      expire: { run: async (t, rec) => asJob(t, (w) => expireQuote(w, rec.id)) },
    },
  },
};

const declaring = resources.filter((r) => r.lifecycle);
/** A resource's path under /v1 (`quotes`, `voice/dialer/sessions`): its SETUPS key. */
const pathOf = (r: Resource) => resourcePath(r).slice('/v1/'.length);
const article = (name: string) => (/^[aeiou]/i.test(name) ? 'An' : 'A');

it('walks quotes and campaigns, and has a setup for every resource that declares states', () => {
  expect(declaring.map(pathOf)).toEqual(expect.arrayContaining(['campaigns', 'quotes']));
  for (const r of declaring) expect(Object.keys(SETUPS), `${pathOf(r)} declares states: add its setup here`).toContain(pathOf(r));
});

describe.each(declaring.map((r) => [pathOf(r), r] as const))('the lifecycle of %s', (plural: string, r: Resource) => {
  const life = r.lifecycle!;
  const setup = SETUPS[plural];
  const state = async (t: Tenant, id: string) => (await ok(t.live.get(`/v1/${plural}/${id}`))).status as string;

  /** Takes the action on the record: its route, or the setup's way. */
  async function take(t: Tenant, rec: Reached, name: string): Promise<Outcome> {
    const way = setup.take?.[name];
    if (way) return way.run(t, rec);
    if (life.actions[name].route !== false) return answered(t.live.post(`/v1/${plural}/${rec.id}/${name}`));
    throw new Error(`${plural}: action ${name} has no route; add how the test takes it`);
  }

  const cases = life.states.flatMap((from) => Object.keys(life.actions).map((action) => [from, action] as const));
  it.each(cases)('from %s, %s', async (from, name) => {
    const action = life.actions[name];
    const t = await tenant(app);
    const rec = await setup.reach(t, from);
    expect(await state(t, rec.id)).toBe(from);
    const type = `${r.name}.${eventSuffix(name, action)}`;
    const before = (await ok(t.live.get(`/v1/events?type=${type}`))).length as number;
    const outcome = await take(t, rec, name);
    const events = await ok(t.live.get(`/v1/events?type=${type}`));
    if (action.from.includes(from)) {
      expect(outcome, JSON.stringify(outcome)).toEqual({ status: 200 });
      // A transitional state may already be worked by its job: the record is then in the next one.
      expect([action.to, life.working?.[action.to]?.next]).toContain(await state(t, rec.id));
      expect(events.length).toBe(before + 1);
      expect(events[0].data.object).toMatchObject({ id: rec.id, status: action.to });
      expect(events[0].previous_attributes.status).toBe(from);
    } else {
      const participle = action.participle ?? eventSuffix(name, action).replaceAll('_', ' ');
      if (setup.take?.[name]?.quiet) expect(outcome.status).toBe(200);
      else expect(outcome).toEqual({ status: 409, detail: `${article(r.name)} ${r.name.replaceAll('_', ' ')} that is ${from} cannot be ${participle}` });
      expect(await state(t, rec.id)).toBe(from);
      expect(events.length).toBe(before);
    }
  });

  it('documents its states, its action routes and their events', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const record = doc.components.schemas[r.name.split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join('')];
    expect(record.properties.status.enum).toEqual([...life.states]);
    const catalog = (await ok((await tenant(app)).live.get('/v1/webhooks/event-types'))).map((e: Json) => e.type);
    for (const [name, action] of Object.entries(life.actions)) {
      const op = doc.paths[`/v1/${plural}/{id}/${name}`]?.post;
      expect(Boolean(op), `${plural} ${name}`).toBe(action.route !== false);
      if (op) expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '404', '409']));
      if (op) expect(op.responses['201']).toBeUndefined();
      expect(catalog).toContain(`${r.name}.${eventSuffix(name, action)}`);
      expect(Object.keys(doc.webhooks)).toContain(`${r.name}.${eventSuffix(name, action)}`);
    }
  });
});
