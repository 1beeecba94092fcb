// Campaigns through HTTP: validation, editing rules, the launch (forced past its preflight, tested in
// campaign-preflight.test.ts; enrollment without suppressed contacts in the campaign's sequence, its
// event, refusal for lack of credits, concurrent launches), pause and resume, filters and paging.
// What the campaign's sequence then sends, and pays for, is in campaign-sends.test.ts.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

const env = { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' };
let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env });
});
afterAll(() => app.close());

const MISSING = 'cpg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B';

async function createList(c: Client, type = 'contacts') {
  const res = await c.post('/v1/lists', { name: `A ${type} list`, type });
  expect(res.statusCode).toBe(201);
  return res.json().data.id as string;
}

async function createContact(c: Client, listId: string, fields: Record<string, unknown>) {
  const res = await c.post('/v1/contacts', { list_id: listId, ...fields });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id as string;
}

async function createCampaign(c: Client, body: Record<string, unknown>) {
  const res = await c.post('/v1/campaigns', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

/**
 * The launch past its preflight (campaign-preflight.test.ts): these campaigns' mailboxes are on no
 * verified domain, and the tests are about the launch's own work, whose refusals (no list, no steps,
 * no mailbox, no credits) hold forced too.
 */
const FORCED = { force: true };

/** A campaign is launched with at least one step; a day after the launch, so these tests send nothing. */
const STEPS = [{ channel: 'email', delay_days: 1, subject: 'Hello', body: 'Hi' }];

const mailboxes = new Map<Client, string>();
/** The tenant's mailbox the campaigns send from. */
async function mailboxOf(c: Client): Promise<string> {
  if (!mailboxes.has(c)) {
    const res = await c.post('/v1/mailboxes', { email: `sender${mailboxes.size}@audience.example` });
    expect(res.statusCode, res.body).toBe(201);
    mailboxes.set(c, res.json().data.id);
  }
  return mailboxes.get(c)!;
}

/** A list of `n` plain contacts and a draft campaign aimed at it. */
async function draftWithAudience(c: Client, n: number, steps: unknown[] = STEPS) {
  const listId = await createList(c);
  for (let i = 0; i < n; i++) await createContact(c, listId, { work_email: `person${i}@audience.example` });
  return { listId, campaign: await createCampaign(c, { name: 'Launchable', list_id: listId, steps, mailbox_ids: [await mailboxOf(c)] }) };
}

/** Waits until the launched campaign's sequence is `live` (the launch leaves it `scheduling`, for its job). */
async function sequenceLive(c: Client, campaignId: string) {
  const { sequence_id } = (await c.get(`/v1/campaigns/${campaignId}`)).json().data;
  await waitFor(async () => (await c.get(`/v1/sequences/${sequence_id}`)).json().data.status, (s) => s === 'live');
  return sequence_id as string;
}

const eventsOf = async (c: Client, type: string) => (await c.get(`/v1/events?type=${type}`)).json().data;
const debits = async (c: Client) => (await c.get('/v1/usage/transactions?type=debit')).json().data;
const balance = async (c: Client) => (await c.get('/v1/usage')).json().data.balance;

describe('campaigns', () => {
  it('creates a draft with every field and reads it back', async () => {
    const t = await tenant(app);
    const listId = await createList(t.live, 'leads');
    const body = {
      name: 'Q4 outbound', channels: ['email', 'linkedin'], list_id: listId,
      steps: [
        { channel: 'email', delay_days: 0, subject: 'Hello', body: 'Hi {{first_name}}' },
        { channel: 'linkedin', delay_days: 3, subject: null, body: 'Connecting' },
      ],
      schedule: { timezone: 'Europe/London', days: ['mon', 'wed'], start_hour: 8, end_hour: 18 },
    };
    const campaign = await createCampaign(t.live, body);
    expect(campaign).toMatchObject({ ...body, status: 'draft', audience_count: 0, launched_at: null });
    expect(campaign.id).toMatch(/^cpg_[0-9A-Z]{26}$/);
    expect(campaign.created_at).toBe(campaign.updated_at);
    const read = await t.live.get(`/v1/campaigns/${campaign.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toEqual(campaign);
    const [event] = await eventsOf(t.live, 'campaign.created');
    expect(event.data.object).toEqual(campaign);
  });

  it('fills defaults: channels from the steps, step fields, the sending window', async () => {
    const t = await tenant(app);
    const bare = await createCampaign(t.live, { name: 'Bare' });
    expect(bare).toMatchObject({ channels: [], list_id: null, steps: [], schedule: null, status: 'draft' });

    const derived = await createCampaign(t.live, {
      name: 'Derived', steps: [{ channel: 'sms' }, { channel: 'email', body: 'x' }, { channel: 'sms', delay_days: 2 }], schedule: {},
    });
    expect(derived.channels).toEqual(['sms', 'email']);
    expect(derived.steps).toEqual([
      { channel: 'sms', delay_days: 0, subject: null, body: null },
      { channel: 'email', delay_days: 0, subject: null, body: 'x' },
      { channel: 'sms', delay_days: 2, subject: null, body: null },
    ]);
    expect(derived.schedule).toEqual({ timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_hour: 9, end_hour: 17 });

    const canonical = await createCampaign(t.live, { name: 'Zone', schedule: { timezone: 'utc', start_hour: 0, end_hour: 24 } });
    expect(canonical.schedule).toMatchObject({ timezone: 'UTC', start_hour: 0, end_hour: 24 });

    // A schedule that normalizes to the stored one (defaults filled in, the zone's case) changes nothing.
    const events = async () => (await t.live.get('/v1/events?type=campaign.updated&limit=200')).json().data.length;
    const before = await events();
    for (const schedule of [{}, { timezone: 'utc' }, { timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_hour: 9 }]) {
      const res = await t.live.patch(`/v1/campaigns/${derived.id}`, { schedule });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data, JSON.stringify(schedule)).toEqual(derived);
    }
    expect(await events()).toBe(before);
  });

  it('refuses invalid bodies with the right status', async () => {
    const t = await tenant(app);
    const missing = await t.live.post('/v1/campaigns', { channels: ['email'] });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ type: 'bad_request', detail: 'name is required', param: 'name' });

    const badRequests: Array<[Record<string, unknown>, RegExp]> = [
      [{ channels: ['fax'] }, /channels/],
      [{ steps: [{ channel: 'pigeon' }] }, /channel/],
      [{ schedule: { days: ['someday'] } }, /days/],
      [{ channels: ['email'], steps: [{ channel: 'sms' }] }, /Step 1 uses channel sms/],
    ];
    for (const [fields, detail] of badRequests) {
      const res = await t.live.post('/v1/campaigns', { name: 'X', ...fields });
      expect(res.statusCode, JSON.stringify(fields)).toBe(400);
      expect(res.json().detail).toMatch(detail);
    }

    const invalid: Array<[Record<string, unknown>, string[]]> = [
      [{ channels: ['email', 'email'] }, ['body', 'channels']],
      [{ steps: Array.from({ length: 51 }, () => ({ channel: 'email' })), channels: ['email'] }, ['body', 'steps']],
      [{ steps: [{ channel: 'email', delay_days: 366 }] }, ['body', 'steps', '0', 'delay_days']],
      [{ steps: [{ channel: 'email', delay_days: -1 }] }, ['body', 'steps', '0', 'delay_days']],
      [{ steps: [{ channel: 'email', extra: true }] }, ['body', 'steps', '0', 'extra']],
      [{ schedule: { timezone: 'Mars/Olympus_Mons' } }, ['body', 'schedule', 'timezone']],
      [{ schedule: { timezone: '+05:00' } }, ['body', 'schedule', 'timezone']],
      [{ schedule: { start_hour: 17, end_hour: 9 } }, ['body', 'schedule', 'end_hour']],
      [{ schedule: { start_hour: 9, end_hour: 9 } }, ['body', 'schedule', 'end_hour']],
      [{ schedule: { start_hour: 24 } }, ['body', 'schedule', 'start_hour']],
      [{ schedule: { end_hour: 0 } }, ['body', 'schedule', 'end_hour']],
      [{ schedule: { days: ['mon', 'mon'] } }, ['body', 'schedule', 'days']],
      [{ status: 'active' }, ['body', 'status']],
      [{ audience_count: 5 }, ['body', 'audience_count']],
      [{ name: 42 }, ['body', 'name']],
    ];
    for (const [fields, loc] of invalid) {
      const res = await t.live.post('/v1/campaigns', { name: 'X', ...fields });
      expect(res.statusCode, JSON.stringify(fields)).toBe(422);
      expect(res.json().detail.map((d: { loc: string[] }) => d.loc), JSON.stringify(fields)).toContainEqual(loc);
    }
    expect((await t.live.get('/v1/campaigns')).json().pagination.total).toBe(0);
  });

  it('needs an audience list of the tenant that holds contacts', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const unknown = await t.live.post('/v1/campaigns', { name: 'X', list_id: 'lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ type: 'not_found', detail: 'List not found' });
    for (const foreign of [await createList(other.live), await createList(t.test)]) {
      const res = await t.live.post('/v1/campaigns', { name: 'X', list_id: foreign });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ type: 'not_found', detail: 'List not found' });
    }
    for (const type of ['suppressions', 'companies', 'deals']) {
      const res = await t.live.post('/v1/campaigns', { name: 'X', list_id: await createList(t.live, type) });
      expect(res.statusCode, type).toBe(400);
      expect(res.json().detail).toMatch(/type contacts or leads/);
    }
    const draft = await createCampaign(t.live, { name: 'X' });
    const patched = await t.live.patch(`/v1/campaigns/${draft.id}`, { list_id: await createList(t.live, 'suppressions') });
    expect(patched.statusCode).toBe(400);
  });

  it('answers a missing campaign, another organization or another mode with 404', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const campaign = await createCampaign(t.live, { name: 'Mine' });
    const calls = [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/launch'], ['POST', '/pause'], ['POST', '/resume']] as const;
    for (const [c, id] of [[t.live, MISSING], [other.live, campaign.id], [t.test, campaign.id]] as const) {
      for (const [method, suffix] of calls) {
        const res = await c(method, `/v1/campaigns/${id}${suffix}`, method === 'PATCH' ? { name: 'x' } : method === 'POST' ? {} : undefined);
        expect(res.statusCode, `${method} ${suffix}`).toBe(404);
        expect(res.json()).toEqual({ type: 'not_found', detail: 'Campaign not found' });
      }
    }
    expect((await t.live.get(`/v1/campaigns/${campaign.id}`)).json().data).toEqual(campaign);
  });

  it('edits drafts and paused campaigns only, and records the previous values', async () => {
    const t = await tenant(app);
    const { listId, campaign } = await draftWithAudience(t.live, 1, []);
    const other = await createList(t.live);

    const res = await t.live.patch(`/v1/campaigns/${campaign.id}`, { name: 'Renamed', channels: ['email'], steps: [{ channel: 'email', delay_days: 1, subject: 'S' }], list_id: other });
    expect(res.statusCode).toBe(200);
    const updated = res.json().data;
    expect(updated).toMatchObject({ name: 'Renamed', channels: ['email'], list_id: other, steps: [{ channel: 'email', delay_days: 1, subject: 'S', body: null }], status: 'draft' });
    expect((await t.live.get(`/v1/campaigns/${campaign.id}`)).json().data).toEqual(updated);
    const [event] = await eventsOf(t.live, 'campaign.updated');
    expect(event.data.object).toEqual(updated);
    expect(event.previous_attributes).toEqual({ name: 'Launchable', channels: [], steps: [], list_id: listId });

    const empty = await t.live.patch(`/v1/campaigns/${campaign.id}`, {});
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toEqual({ type: 'bad_request', detail: 'No fields to update' });
    const dropsChannel = await t.live.patch(`/v1/campaigns/${campaign.id}`, { channels: ['sms'] });
    expect(dropsChannel.statusCode).toBe(400);
    expect(dropsChannel.json().detail).toMatch(/Step 1 uses channel email/);
    const schedule = await t.live.patch(`/v1/campaigns/${campaign.id}`, { schedule: { timezone: 'America/New_York' } });
    expect(schedule.json().data.schedule.timezone).toBe('America/New_York');
    const cleared = await t.live.patch(`/v1/campaigns/${campaign.id}`, { schedule: null, list_id: listId });
    expect(cleared.json().data).toMatchObject({ schedule: null, list_id: listId });

    expect((await t.live.post(`/v1/campaigns/${campaign.id}/launch`, FORCED)).statusCode).toBe(200);
    const active = await t.live.patch(`/v1/campaigns/${campaign.id}`, { name: 'Too late' });
    expect(active.statusCode).toBe(409);
    expect(active.json()).toEqual({ type: 'conflict', detail: 'Only draft or paused campaigns can be edited' });

    await sequenceLive(t.live, campaign.id);
    expect((await t.live.post(`/v1/campaigns/${campaign.id}/pause`)).statusCode).toBe(200);
    const paused = await t.live.patch(`/v1/campaigns/${campaign.id}`, { name: 'Paused edit' });
    expect(paused.statusCode).toBe(200);
    expect(paused.json().data).toMatchObject({ name: 'Paused edit', status: 'paused', audience_count: 1 });
    // What is sent is the sequence's from the launch on: its steps, schedule and mailboxes are edited there.
    for (const field of [{ steps: [{ channel: 'email', body: 'v2' }] }, { schedule: { timezone: 'Asia/Tokyo' } }, { mailbox_ids: [] }]) {
      const sent = await t.live.patch(`/v1/campaigns/${campaign.id}`, field);
      expect(sent.statusCode, JSON.stringify(field)).toBe(409);
      expect(sent.json().detail).toBe(`The campaign sends through its sequence: change ${Object.keys(field)[0]} there (/v1/sequences/${paused.json().data.sequence_id})`);
    }
    const audience = await t.live.patch(`/v1/campaigns/${campaign.id}`, { list_id: other });
    expect(audience.statusCode).toBe(409);
    expect(audience.json().detail).toMatch(/audience/);
    const sameAudience = await t.live.patch(`/v1/campaigns/${campaign.id}`, { list_id: listId });
    expect(sameAudience.statusCode).toBe(200);
  });

  it('launches: enrolls the audience minus suppressed contacts, debits one credit each, records the event', async () => {
    const t = await tenant(app);
    const listId = await createList(t.live);
    const elsewhere = await createList(t.live);
    const suppressions = await createList(t.live, 'suppressions');
    const entries = await t.live.post(`/v1/lists/${suppressions}/entries`, { values: ['blocked.example', 'exact@keep.example', 'home.example'] });
    expect(entries.statusCode).toBe(201);

    const kept = [
      await createContact(t.live, listId, { work_email: 'a@keep.example' }),
      await createContact(t.live, listId, { work_email: 'b@keep.example', personal_email: 'b@fine.example' }),
      await createContact(t.live, listId, { name: 'No e-mail at all' }),
    ];
    await createContact(t.live, listId, { work_email: 'c@blocked.example' }); // domain suppressed
    await createContact(t.live, listId, { work_email: 'exact@keep.example' }); // address suppressed
    await createContact(t.live, listId, { work_email: 'd@keep.example', personal_email: 'd@home.example' }); // personal domain suppressed
    await createContact(t.live, listId, { personal_email: 'exact@keep.example' }); // personal address suppressed
    await createContact(t.live, elsewhere, { work_email: 'e@keep.example' }); // another list

    const campaign = await createCampaign(t.live, {
      name: 'Launch me', list_id: listId, channels: ['email', 'linkedin'], mailbox_ids: [await mailboxOf(t.live)],
      schedule: { timezone: 'Europe/Paris', days: ['tue'], start_hour: 10, end_hour: 12 },
      steps: [{ channel: 'email', delay_days: 1, subject: 'Hi {{first_name}}', body: 'Hello' }, { channel: 'linkedin', delay_days: 2, body: 'Connect' }],
    });
    const res = await t.live.post(`/v1/campaigns/${campaign.id}/launch`, FORCED);
    expect(res.statusCode, res.body).toBe(200);
    const launched = res.json().data;
    expect(launched).toMatchObject({ id: campaign.id, status: 'active', audience_count: kept.length, list_id: listId, sequence_id: expect.stringMatching(/^seq_/) });
    expect(Math.abs(launched.launched_at - Date.now() / 1000)).toBeLessThan(60);
    expect(launched.updated_at).toBe(launched.launched_at);
    expect((await t.live.get(`/v1/campaigns/${campaign.id}`)).json().data).toEqual(launched);

    const [event] = await eventsOf(t.live, 'campaign.launched');
    expect(event.data.object).toEqual(launched);
    expect(event.previous_attributes).toEqual({ status: 'draft', launched_at: null, audience_count: 0, sequence_id: null });
    // Nothing is paid at the launch: each message is, when it is sent.
    expect(await debits(t.live)).toEqual([]);
    expect(await balance(t.live)).toBe(1000);

    // Its sequence has the campaign's steps, schedule and mailboxes, and exactly the kept contacts.
    const sequenceId = await sequenceLive(t.live, campaign.id);
    const sequence = (await t.live.get(`/v1/sequences/${sequenceId}`)).json().data;
    expect(sequence).toMatchObject({
      name: 'Launch me', campaign_id: campaign.id, mailbox_ids: campaign.mailbox_ids, associated_list_id: null,
      schedule: { timezone: 'Europe/Paris', days: ['tue'], start_hour: 10, end_hour: 12 }, counts: { enrolled: kept.length, active: kept.length },
    });
    const steps = (await t.live.get(`/v1/sequences/${sequenceId}/steps`)).json().data;
    expect(steps.map((st: Record<string, unknown>) => [st.step_order, st.step_type, st.time_interval, st.subject, st.body])).toEqual([
      [1, 'EMAIL', 86_400, 'Hi {{first_name}}', 'Hello'], [2, 'LINKEDIN', 172_800, null, 'Connect'],
    ]);
    const enrolled = (await t.live.get(`/v1/sequences/${sequenceId}/enrollments?limit=100`)).json().data;
    expect(enrolled.map((e: { contact_id: string }) => e.contact_id).sort()).toEqual([...kept].sort());
    // The sequence's campaign is its launch's to set.
    expect((await t.live.post('/v1/sequences', { name: 'Mine', campaign_id: campaign.id })).statusCode).toBe(422);

    const again = await t.live.post(`/v1/campaigns/${campaign.id}/launch`, FORCED);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ type: 'conflict', detail: 'A campaign that is active cannot be launched' });
    expect((await t.live.get('/v1/sequences')).json().pagination.total).toBe(1);
  });

  it('launches an empty audience without a debit, and refuses a campaign without a list, a mailbox or (live) an SMS provider', async () => {
    const t = await tenant(app);
    const noList = await createCampaign(t.live, { name: 'Nowhere' });
    const refused = await t.live.post(`/v1/campaigns/${noList.id}/launch`, FORCED);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().detail).toMatch(/no audience.*list_id/i);
    expect((await t.live.get(`/v1/campaigns/${noList.id}`)).json().data.status).toBe('draft');
    const noMailbox = await createCampaign(t.live, { name: 'Mute', list_id: await createList(t.live), steps: STEPS });
    const mute = await t.live.post(`/v1/campaigns/${noMailbox.id}/launch`, FORCED);
    expect(mute.statusCode).toBe(400);
    expect(mute.json().detail).toBe('Campaign has e-mail steps and no mailbox to send them from: set mailbox_ids before launching');
    const texting = await createCampaign(t.live, { name: 'Texts', list_id: await createList(t.live), steps: [{ channel: 'sms', body: 'Hi' }] });
    // Live texts with no SMS provider configured: the launch is refused whole, even forced.
    const sms = await t.live.post(`/v1/campaigns/${texting.id}/launch`, FORCED);
    expect(sms.statusCode).toBe(503);
    expect(sms.json()).toMatchObject({ type: 'provider_not_configured', detail: expect.stringMatching(/^No SMS provider is configured/) });
    expect((await t.live.get(`/v1/campaigns/${texting.id}`)).json().data).toMatchObject({ status: 'draft', sequence_id: null });

    const empty = await createCampaign(t.live, { name: 'Empty', list_id: await createList(t.live), steps: STEPS, mailbox_ids: [await mailboxOf(t.live)] });
    const res = await t.live.post(`/v1/campaigns/${empty.id}/launch`, FORCED);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'active', audience_count: 0 });
    expect(await debits(t.live)).toEqual([]);
    expect(await balance(t.live)).toBe(1000);

    // A list deleted after the campaign was aimed at it leaves the campaign without an audience.
    const { listId, campaign } = await draftWithAudience(t.live, 1);
    expect((await t.live.delete(`/v1/lists/${listId}?cascade=true`)).statusCode).toBe(200);
    expect((await t.live.get(`/v1/campaigns/${campaign.id}`)).json().data.list_id).toBeNull();
    expect((await t.live.post(`/v1/campaigns/${campaign.id}/launch`, FORCED)).statusCode).toBe(400);
  });

  it('refuses a launch the balance cannot pay with 402, changing nothing', async () => {
    const poor = await testApp({ env: { ...env, DEFAULT_CREDITS: '2' } });
    try {
      const t = await tenant(poor);
      const { listId, campaign } = await draftWithAudience(t.live, 3);
      const res = await t.live.post(`/v1/campaigns/${campaign.id}/launch`, FORCED);
      expect(res.statusCode).toBe(402);
      expect(res.json().detail).toBe('Not enough credits: the launch needs 3 (one per message it may send) and the balance is 2');

      expect((await t.live.get(`/v1/campaigns/${campaign.id}`)).json().data).toEqual(campaign);
      expect(await eventsOf(t.live, 'campaign.launched')).toEqual([]);
      expect(await debits(t.live)).toEqual([]);
      expect(await balance(t.live)).toBe(2);
      const enrolled = await poor.services.database.db.selectFrom('campaign_enrollments').select('contact_id').where('campaign_id', '=', campaign.id).execute();
      expect(enrolled).toEqual([]);
      expect((await t.live.get('/v1/sequences')).json().pagination.total).toBe(0);

      // With the audience down to what the balance covers, the launch goes through.
      const [first] = (await t.live.get(`/v1/contacts?list_id=${listId}&limit=1`)).json().data;
      expect((await t.live.delete(`/v1/contacts/${first.id}`)).statusCode).toBe(200);
      const ok = await t.live.post(`/v1/campaigns/${campaign.id}/launch`, FORCED);
      expect(ok.statusCode).toBe(200);
      expect(ok.json().data.audience_count).toBe(2);
      expect(await balance(t.live)).toBe(2);
    } finally {
      await poor.close();
    }
  });

  it('launches exactly once under concurrent launch requests', async () => {
    const t = await tenant(app);
    const { campaign } = await draftWithAudience(t.live, 4);
    const results = await Promise.all(Array.from({ length: 6 }, () => t.live.post(`/v1/campaigns/${campaign.id}/launch`, FORCED)));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.statusCode === 409)) expect(r.json()).toEqual({ type: 'conflict', detail: 'A campaign that is active cannot be launched' });
    expect(await eventsOf(t.live, 'campaign.launched')).toHaveLength(1);
    expect((await t.live.get('/v1/sequences')).json().pagination.total).toBe(1);
    expect((await t.live.get(`/v1/campaigns/${campaign.id}`)).json().data.audience_count).toBe(4);
  });

  it('pauses active campaigns and resumes paused ones, refusing other moves with 409', async () => {
    const t = await tenant(app);
    const { campaign } = await draftWithAudience(t.live, 1);
    const pauseDraft = await t.live.post(`/v1/campaigns/${campaign.id}/pause`);
    expect(pauseDraft.statusCode).toBe(409);
    expect(pauseDraft.json().detail).toBe('A campaign that is draft cannot be paused');
    const resumeDraft = await t.live.post(`/v1/campaigns/${campaign.id}/resume`);
    expect(resumeDraft.statusCode).toBe(409);
    expect(resumeDraft.json().detail).toBe('A campaign that is draft cannot be resumed');

    await t.live.post(`/v1/campaigns/${campaign.id}/launch`, FORCED);
    const resumeActive = await t.live.post(`/v1/campaigns/${campaign.id}/resume`);
    expect(resumeActive.statusCode).toBe(409);

    // The campaign's sequence pauses and resumes with it.
    const sequenceId = await sequenceLive(t.live, campaign.id);
    const sequenceStatus = async () => (await t.live.get(`/v1/sequences/${sequenceId}`)).json().data.status;
    const paused = await t.live.post(`/v1/campaigns/${campaign.id}/pause`);
    expect(paused.statusCode).toBe(200);
    expect(paused.json().data).toMatchObject({ status: 'paused', audience_count: 1 });
    await waitFor(sequenceStatus, (s) => s === 'paused');
    expect((await t.live.post(`/v1/campaigns/${campaign.id}/pause`)).statusCode).toBe(409);
    const launchPaused = await t.live.post(`/v1/campaigns/${campaign.id}/launch`, FORCED);
    expect(launchPaused.statusCode).toBe(409);
    expect(launchPaused.json()).toEqual({ type: 'conflict', detail: 'A campaign that is paused cannot be launched' });

    const resumed = await t.live.post(`/v1/campaigns/${campaign.id}/resume`);
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json().data).toMatchObject({ status: 'active', audience_count: 1 });
    expect((await t.live.get(`/v1/campaigns/${campaign.id}`)).json().data.status).toBe('active');
    await waitFor(sequenceStatus, (s) => s === 'live');

    const [pausedEvent] = await eventsOf(t.live, 'campaign.paused');
    expect(pausedEvent.data.object.status).toBe('paused');
    expect(pausedEvent.previous_attributes).toEqual({ status: 'active' });
    const [resumedEvent] = await eventsOf(t.live, 'campaign.resumed');
    expect(resumedEvent.data.object).toEqual(resumed.json().data);
    expect(resumedEvent.previous_attributes).toEqual({ status: 'paused' });
  });

  it('resumes at once a campaign just paused, its sequence still pausing: the pause is given up', async () => {
    const t = await tenant(app);
    const { campaign } = await draftWithAudience(t.live, 1);
    await t.live.post(`/v1/campaigns/${campaign.id}/launch`, FORCED);
    const sequenceId = await sequenceLive(t.live, campaign.id);
    // The moment after a pause, before its sequence's job ran: the campaign paused, the sequence pausing.
    const { db } = app.services.database;
    await db.updateTable('campaigns').set({ status: 'paused' }).where('id', '=', campaign.id).execute();
    await db.updateTable('sequences').set({ status: 'pausing' }).where('id', '=', sequenceId).execute();
    const resumed = await t.live.post(`/v1/campaigns/${campaign.id}/resume`);
    expect(resumed.statusCode, resumed.body).toBe(200);
    expect(resumed.json().data.status).toBe('active');
    const sequenceStatus = async () => (await t.live.get(`/v1/sequences/${sequenceId}`)).json().data.status;
    expect(['resuming', 'live']).toContain(await sequenceStatus());
    await waitFor(sequenceStatus, (s) => s === 'live');
    expect((await t.live.get(`/v1/campaigns/${campaign.id}`)).json().data.status).toBe('active');
    expect(await eventsOf(t.live, 'sequence.paused')).toEqual([]);
    expect(await eventsOf(t.live, 'sequence.resumed')).toHaveLength(1);
  });

  it('deletes a campaign in any state with its enrollments', async () => {
    const t = await tenant(app);
    const draft = await createCampaign(t.live, { name: 'Draft' });
    const { campaign: active } = await draftWithAudience(t.live, 2);
    await t.live.post(`/v1/campaigns/${active.id}/launch`, FORCED);
    const { campaign: paused } = await draftWithAudience(t.live, 1);
    await t.live.post(`/v1/campaigns/${paused.id}/launch`, FORCED);
    await sequenceLive(t.live, paused.id);
    expect((await t.live.post(`/v1/campaigns/${paused.id}/pause`)).statusCode).toBe(200);
    expect((await t.live.get('/v1/campaigns')).json().pagination.total).toBe(3);
    expect((await t.live.get('/v1/sequences')).json().pagination.total).toBe(2);

    for (const c of [draft, active, paused]) {
      const res = await t.live.delete(`/v1/campaigns/${c.id}`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ data: { id: c.id, deleted: true } });
      const gone = await t.live.get(`/v1/campaigns/${c.id}`);
      expect(gone.statusCode).toBe(404);
      expect(gone.json()).toEqual({ type: 'not_found', detail: 'Campaign not found' });
    }
    const left = await app.services.database.db.selectFrom('campaign_enrollments').select('contact_id').where('campaign_id', 'in', [active.id, paused.id]).execute();
    expect(left).toEqual([]);
    // Their sequences go with them, whatever their state: nothing more is sent.
    expect((await t.live.get('/v1/sequences')).json().pagination.total).toBe(0);
    const deleted = await eventsOf(t.live, 'campaign.deleted');
    expect(deleted.map((e: { data: { object: { id: string } } }) => e.data.object.id).sort()).toEqual([draft.id, active.id, paused.id].sort());
    expect((await t.live.get('/v1/campaigns')).json().pagination.total).toBe(0);
  });

  it('filters by status and list_id with exact totals', async () => {
    const t = await tenant(app);
    const { listId, campaign: launched } = await draftWithAudience(t.live, 1);
    await t.live.post(`/v1/campaigns/${launched.id}/launch`, FORCED);
    const draftSameList = await createCampaign(t.live, { name: 'Same list', list_id: listId });
    const draftNoList = await createCampaign(t.live, { name: 'No list' });
    const ids = async (query: string) => {
      const body = (await t.live.get(`/v1/campaigns?${query}`)).json();
      expect(body.pagination.total, query).toBe(body.data.length);
      return body.data.map((r: { id: string }) => r.id).sort();
    };
    expect(await ids('status=active')).toEqual([launched.id]);
    expect(await ids('status=draft')).toEqual([draftSameList.id, draftNoList.id].sort());
    expect(await ids('status=paused')).toEqual([]);
    expect(await ids(`list_id=${listId}`)).toEqual([launched.id, draftSameList.id].sort());
    expect(await ids(`list_id=${listId}&status=draft`)).toEqual([draftSameList.id]);
    expect(await ids('')).toHaveLength(3);
    const bad = await t.live.get('/v1/campaigns?status=running');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/status/);
  });

  it('pages through campaigns by cursor and by page number, newest first', async () => {
    const t = await tenant(app);
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await createCampaign(t.live, { name: `Campaign ${i}` })).id);
    const expected = [...created].sort().reverse();
    const seen: string[] = [];
    let url = '/v1/campaigns?limit=2';
    for (;;) {
      const body = (await t.live.get(url)).json();
      expect(body.pagination.total).toBe(5);
      seen.push(...body.data.map((r: { id: string }) => r.id));
      if (!body.pagination.has_next) break;
      url = `/v1/campaigns?limit=2&cursor=${encodeURIComponent(body.next_cursor)}`;
    }
    expect(seen).toEqual(expected);
    const byPage = [];
    for (const page of [1, 2, 3]) {
      const body = (await t.live.get(`/v1/campaigns?limit=2&page=${page}`)).json();
      expect(body.pagination).toMatchObject({ page, has_next: page < 3, total: 5 });
      byPage.push(...body.data.map((r: { id: string }) => r.id));
    }
    expect(byPage).toEqual(expected);
    const tampered = await t.live.get('/v1/campaigns?limit=2&cursor=abc.def');
    expect(tampered.statusCode).toBe(400);
    expect(tampered.json().type).toBe('bad_request');
  });
});
