import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, clock, tenant, testApp, type Client } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every record of a list endpoint, walking its cursors. */
async function all(c: Client, path: string): Promise<Json[]> {
  const out: Json[] = [];
  let url = `${path}${path.includes('?') ? '&' : '?'}limit=200`;
  for (;;) {
    const res = await c.get(url);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    out.push(...body.data);
    if (!body.next_cursor) return out;
    url = `${path}${path.includes('?') ? '&' : '?'}limit=200&cursor=${encodeURIComponent(body.next_cursor)}`;
  }
}

const total = async (c: Client, path: string) => (await c.get(`${path}${path.includes('?') ? '&' : '?'}limit=1`)).json().pagination.total as number;

/** The content of a test-mode data set without ids and timestamps: identical for every organization. */
async function shape(c: Client) {
  const lists = await all(c, '/v1/lists');
  const listName = new Map(lists.map((l) => [l.id, l.name]));
  const companies = await all(c, '/v1/companies');
  const companyDomain = new Map(companies.map((co) => [co.id, co.domain]));
  const contacts = await all(c, '/v1/contacts');
  const campaigns = await all(c, '/v1/campaigns');
  const strip = ({ id: _id, created_at: _c, updated_at: _u, ...rest }: Json): Json => rest;
  return {
    lists: lists.map((l) => strip(l)).sort((a, b) => a.name.localeCompare(b.name)),
    companies: companies.map(strip).sort((a, b) => a.domain.localeCompare(b.domain)),
    contacts: contacts.map((x): Json => ({ ...strip(x), list_id: listName.get(x.list_id), company_id: companyDomain.get(x.company_id) }))
      .sort((a, b) => a.work_email.localeCompare(b.work_email)),
    campaigns: campaigns.map(({ launched_at: _l, ...x }): Json => ({ ...strip(x), list_id: listName.get(x.list_id), mailbox_ids: x.mailbox_ids.length })).sort((a, b) => a.name.localeCompare(b.name)),
  };
}

describe('sandbox data', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(() => app.close());

  it('fills the test mode of a new organization with linked, realistic data and exact totals', async () => {
    const t = await tenant(app);
    const lists = await all(t.test, '/v1/lists');
    expect(lists.map((l) => l.type).sort()).toEqual(['contacts', 'contacts', 'leads', 'suppressions']);
    const suppressionList = lists.find((l) => l.type === 'suppressions')!;
    const entries = await all(t.test, `/v1/lists/${suppressionList.id}/entries`);
    expect(entries.length).toBe(suppressionList.member_count);
    expect(entries.length).toBeGreaterThanOrEqual(3);
    const blocked = new Set(entries.map((e) => e.value));

    const companies = await all(t.test, '/v1/companies');
    expect(companies).toHaveLength(50);
    expect(await total(t.test, '/v1/companies')).toBe(50);
    expect(new Set(companies.map((c) => c.domain)).size).toBe(50);
    const byDomain = new Map(companies.map((c) => [c.domain, c]));

    const contacts = await all(t.test, '/v1/contacts');
    expect(contacts.length).toBeGreaterThanOrEqual(200);
    expect(await total(t.test, '/v1/contacts')).toBe(contacts.length);
    for (const c of contacts) {
      const domain = c.work_email.split('@')[1];
      expect(c.company_id).toBe(byDomain.get(domain)!.id);
      expect(c.company).toBe(byDomain.get(domain)!.name);
      expect(c.name).toBe(`${c.first_name} ${c.last_name}`);
      expect(c.suppressed).toBe(blocked.has(c.work_email) || blocked.has(domain));
    }
    const suppressed = contacts.filter((c) => c.suppressed);
    expect(suppressed.length).toBeGreaterThanOrEqual(3);
    expect(companies.reduce((n, c) => n + c.contact_count, 0)).toBe(contacts.length);

    for (const list of lists.filter((l) => l.type !== 'suppressions')) {
      const members = contacts.filter((c) => c.list_id === list.id).length;
      expect(members).toBeGreaterThan(0);
      expect(list.member_count).toBe(members);
      expect(await total(t.test, `/v1/contacts?list_id=${list.id}`)).toBe(members);
    }

    const campaigns = await all(t.test, '/v1/campaigns');
    expect(campaigns.map((c) => c.status).sort()).toEqual(['active', 'draft']);
    const active = campaigns.find((c) => c.status === 'active')!;
    const draft = campaigns.find((c) => c.status === 'draft')!;
    const audience = contacts.filter((c) => c.list_id === active.list_id);
    expect(audience.some((c) => c.suppressed)).toBe(true);
    expect(active.audience_count).toBe(audience.filter((c) => !c.suppressed).length);
    expect(active.launched_at).toBeGreaterThan(active.created_at);
    expect(active.launched_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(draft).toMatchObject({ audience_count: 0, launched_at: null });
    expect(lists.map((l) => l.id)).toContain(draft.list_id);

    const events = (type: string) => total(t.test, `/v1/events?type=${type}`);
    expect(await events('contact.created')).toBe(contacts.length);
    expect(await events('company.created')).toBe(50);
    expect(await events('list.created')).toBe(lists.length);
    expect(await events('campaign.created')).toBe(2);
    expect(await events('campaign.launched')).toBe(1);
    const allEvents = await all(t.test, '/v1/events');
    expect(await total(t.test, '/v1/events')).toBe(allEvents.length);
    const launched = allEvents.find((e) => e.type === 'campaign.launched')!;
    expect(launched.data.object).toMatchObject({ id: active.id, status: 'active', audience_count: active.audience_count });
    expect((await t.test.get('/v1/usage')).json().data.balance).toBe(1000);
    // A live sequence from the sandbox's mailbox, its enrollments in several states and none due.
    const [sequence] = await all(t.test, '/v1/sequences');
    expect(sequence).toMatchObject({ name: 'Founder outreach', status: 'live', counts: { enrolled: 6, active: 4, finished: 2, replied: 1, bounced: 0 } });
    const sequenceEnrollments = await all(t.test, `/v1/sequences/${sequence.id}/enrollments`);
    expect(sequenceEnrollments.map((e) => e.status).sort()).toEqual(['active', 'active', 'active', 'finished', 'finished', 'paused']);
    expect(sequenceEnrollments.every((e) => e.due_at === null)).toBe(true);
    expect((await all(t.test, `/v1/sequences/${sequence.id}/steps`)).map((st) => st.step_type)).toEqual(['PHONE', 'EMAIL', 'EMAIL']);
    const calls = await all(t.test, '/v1/tasks?type=call&status=open');
    expect(sequenceEnrollments.filter((e) => e.task_id).map((e) => e.task_id).sort()).toEqual(calls.filter((c) => c.title === 'Founder outreach: Intro call').map((c) => c.id).sort());
  });

  it('leaves live mode empty', async () => {
    const t = await tenant(app);
    for (const path of ['/v1/contacts', '/v1/companies', '/v1/lists', '/v1/campaigns']) expect(await total(t.live, path)).toBe(0);
    expect((await all(t.live, '/v1/events')).map((e) => e.type)).toEqual(['usage.grant']);
  });

  it('gives every organization the same data with its own ids', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const [shapeA, shapeB] = await Promise.all([shape(a.test), shape(b.test)]);
    expect(shapeA.contacts.length).toBeGreaterThanOrEqual(200);
    expect(shapeB).toEqual(shapeA);
    const idsA = new Set((await all(a.test, '/v1/contacts')).map((c) => c.id));
    expect((await all(b.test, '/v1/contacts')).some((c) => idsA.has(c.id))).toBe(false);
  });

  it('restores the data set after deletions and changes, with fresh credits and events', async () => {
    const t = await tenant(app);
    const before = await shape(t.test);
    const [contact] = (await t.test.get('/v1/contacts?limit=1')).json().data;
    expect((await t.test.delete(`/v1/contacts/${contact.id}`)).statusCode).toBe(200);
    const [company] = (await t.test.get('/v1/companies?limit=1')).json().data;
    expect((await t.test.patch(`/v1/companies/${company.id}`, { name: 'Renamed Inc' })).statusCode).toBe(200);
    expect((await t.test.post('/v1/lists', { name: 'Scratch', type: 'contacts' })).statusCode).toBe(201);
    const draft = (await t.test.get('/v1/campaigns?status=draft')).json().data[0];
    expect((await t.test.post(`/v1/campaigns/${draft.id}/launch`)).statusCode).toBe(200);
    // Its sequence (beside the sandbox's own) sends the steps, debiting them as it goes.
    expect(await total(t.test, '/v1/sequences')).toBe(2);

    const res = await t.test.post('/v1/sandbox/reset');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { reset: true, lists: before.lists.length, contacts: before.contacts.length, companies: 50, campaigns: 2, deals: 8, tasks: 11, notes: 6, products: 5, quotes: 1, members: 3, sequences: 1, dialer_sessions: 1 } });

    expect(await shape(t.test)).toEqual(before);
    expect((await t.test.get(`/v1/contacts/${contact.id}`)).statusCode).toBe(404);
    expect(await total(t.test, '/v1/contacts')).toBe(before.contacts.length);
    expect(await total(t.test, '/v1/companies')).toBe(50);
    expect(await total(t.test, '/v1/campaigns')).toBe(2);
    expect((await t.test.get('/v1/usage')).json().data.balance).toBe(1000);
    expect((await all(t.test, '/v1/usage/transactions')).map((x) => x.type)).toEqual(['grant']);

    const events = await all(t.test, '/v1/events');
    expect(await total(t.test, '/v1/events')).toBe(events.length);
    expect(events.filter((e) => e.type === 'sandbox.reset')).toHaveLength(1);
    expect(events.some((e) => e.type === 'contact.deleted' || e.type === 'company.updated')).toBe(false);
    expect(await total(t.test, '/v1/events?type=contact.created')).toBe(before.contacts.length);
    // The mailbox is configuration, kept: its owner is Ada as the reset made her again.
    const [mailbox] = (await t.test.get('/v1/mailboxes?email=ada@example.com')).json().data;
    const [ada] = (await t.test.get('/v1/members?email=ada@example.com')).json().data;
    expect(mailbox.owner_id).toBe(ada.id);
  });

  it('its live sequence goes on once a test key acts on it: a completed intro call, a resumed enrollment', async () => {
    const t = await tenant(app);
    const [sequence] = await all(t.test, '/v1/sequences');
    // Any hour of any day, so the resumed one goes now (the clock stays where it is).
    const anyTime = { timezone: 'Europe/London', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start_hour: 0, end_hour: 24 };
    expect((await t.test.patch(`/v1/sequences/${sequence.id}`, { schedule: anyTime })).statusCode).toBe(200);
    const enrolled = await all(t.test, `/v1/sequences/${sequence.id}/enrollments`);
    const calling = enrolled.find((e) => e.task_id)!;
    const paused = enrolled.find((e) => e.status === 'paused')!;
    expect((await t.test.patch(`/v1/tasks/${calling.task_id}`, { status: 'completed' })).statusCode).toBe(200);
    const moved = (await t.test.get(`/v1/enrollments/${calling.id}`)).json().data;
    expect(moved).toMatchObject({ status: 'active', step_index: 1, task_id: null });
    expect(moved.due_at - clock.seconds()).toBeGreaterThan(86_400 - 60);
    expect((await t.test.patch(`/v1/enrollments/${paused.id}`, { status: 'active' })).statusCode).toBe(200);
    const outbox = async () => (await all(t.test, `/v1/outbox?record_id=${sequence.id}`)).map((m) => [m.contact_id, m.subject]);
    const [[contactId, subject]] = await waitFor(outbox, (sent) => sent.length === 1, 60_000);
    expect(contactId).toBe(paused.contact_id);
    expect(subject).toMatch(/^Quick question, /);
  });

  it('refuses live keys with 403 and never touches live data or other organizations', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const liveList = (await a.live.post('/v1/lists', { name: 'Production list', type: 'contacts' })).json().data;
    const refused = await a.live.post('/v1/sandbox/reset');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().detail).toMatch(/test key/);
    expect((await a.live.get(`/v1/lists/${liveList.id}`)).statusCode).toBe(200);

    const [other] = (await b.test.get('/v1/contacts?limit=1')).json().data;
    await b.test.delete(`/v1/contacts/${other.id}`);
    const bEvents = await total(b.test, '/v1/events');
    expect((await a.test.post('/v1/sandbox/reset')).statusCode).toBe(200);
    expect((await a.live.get(`/v1/lists/${liveList.id}`)).statusCode).toBe(200);
    expect(await total(a.live, '/v1/events')).toBe(2);
    expect(await total(b.test, '/v1/contacts')).toBe((await total(a.test, '/v1/contacts')) - 1);
    expect(await total(b.test, '/v1/events')).toBe(bEvents);
    expect((await client(app, undefined).post('/v1/sandbox/reset')).statusCode).toBe(401);
  });
});

describe('sandbox reset and live streams', () => {
  it('keeps event ids moving forward: a stream open across a reset sees the reset and the new data', async () => {
    const app = await testApp();
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as AddressInfo;
      const t = await tenant(app);
      const received: string[] = [];
      let buffer = '';
      const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/events', headers: { authorization: `Bearer ${t.test_token}`, accept: 'text/event-stream' } });
      await new Promise<void>((resolve) => {
        req.on('response', (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            for (const match of buffer.matchAll(/^event: (.+)$/gm)) received.push(match[1]);
            buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
          });
          resolve();
        });
        req.end();
      });
      const reset = (await t.test.post('/v1/sandbox/reset')).json().data;
      // …and the default pipeline, each deal and the contact put on it; the MEDDPICC methodology, its
      // link from the Proposal stage and the six pieces of evidence on two deals; the members; the tasks
      // and notes; the products, the quote made and sent; the mailbox (kept) given back its owner, Ada,
      // made again; the mailbox attached to the draft campaign; the sequence and its three steps; Ada
      // made an agent again and the dialer session (the voice number is kept).
      const expected = 1 + 1 + reset.companies + reset.lists + 1 + reset.contacts + reset.campaigns + 1 + 1 + 2 * reset.deals + 1 + 1 + 6 + reset.members + reset.tasks + reset.notes + reset.products + 2 * reset.quotes + 1 + 1 + 4 * reset.sequences + 2 * reset.dialer_sessions;
      const deadline = Date.now() + 5000;
      while (received.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(received).toHaveLength(expected);
      expect(received[0]).toBe('sandbox.reset');
      expect(received.filter((e) => e === 'contact.created')).toHaveLength(reset.contacts);
      req.destroy();
    } finally {
      await app.close();
    }
  });
});
