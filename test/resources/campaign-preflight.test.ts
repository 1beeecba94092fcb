// The launch preflight of campaigns through HTTP: each check passing and failing (steps and their
// variables, audience and suppressions, mailboxes and their capacity, sending domains, unsubscribe,
// schedule, credits), the launch refused with 409 naming the failing checks, launched when forced,
// never blocked by a warning; its scope and the isolation of tenants. Test mode's sandbox holds the
// verified sending domain example.com, which the ready campaigns send from.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../../src/orgs/orgs.ts';
import { client, tenant, testApp, type Client } from '../helpers/app.ts';
import { DnsServer, dnsAvailable } from '../helpers/dns.ts';
import { fails, ok, type Json } from '../helpers/records.ts';

// A DNS server of the file's own (dnsmasq) for live-mode domains checked for real.
const dns = dnsAvailable ? await DnsServer.start() : undefined;
const env = {
  RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000',
  DNS_SERVERS: dns?.address ?? '127.0.0.1:9', DNS_TIMEOUT_MS: '3000', SPF_INCLUDE: '_spf.mail.rds.test', RETURN_PATH_TARGET: 'bounces.mail.rds.test',
};
let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env });
});
afterAll(async () => {
  await app.close();
  await dns?.close();
});

const NAMES = ['steps', 'audience', 'mailboxes', 'domains', 'unsubscribe', 'schedule', 'credits'];
const MISSING = 'cpg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B';
const unique = () => randomBytes(4).toString('hex');
const STEPS = [{ channel: 'email', subject: 'Hello {{ first_name }}', body: 'A note for {{company}}. Unsubscribe: {{ unsubscribe_url }}' }];
const SCHEDULE = { timezone: 'Europe/London', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_hour: 9, end_hour: 17 };

async function audience(c: Client, people: Json[]): Promise<{ listId: string; ids: string[] }> {
  const list = await ok(c.post('/v1/lists', { name: `Audience ${unique()}`, type: 'contacts' }), 201);
  const ids: string[] = [];
  for (const p of people) ids.push((await ok(c.post('/v1/contacts', { list_id: list.id, ...p }), 201)).id);
  return { listId: list.id, ids };
}

const person = (i: number) => ({ first_name: `Ada${i}`, company: 'Engines', work_email: `ada${i}-${unique()}@customer.example` });
const mailbox = (c: Client, body: Json = {}) => ok(c.post('/v1/mailboxes', { email: `sales-${unique()}@example.com`, ...body }), 201);

/** A campaign of `c` that passes every check: contacts with every variable, a mailbox on the verified example.com. */
async function readyCampaign(c: Client, overrides: Json = {}, people: Json[] = [person(1), person(2), person(3)]) {
  const { listId, ids } = await audience(c, people);
  const box = await mailbox(c);
  const campaign = await ok(c.post('/v1/campaigns', { name: 'Ready', list_id: listId, mailbox_ids: [box.id], steps: STEPS, schedule: SCHEDULE, ...overrides }), 201);
  return { campaign, listId, ids, box };
}

const preflightOf = async (c: Client, id: string) => (await ok(c.get(`/v1/campaigns/${id}/launch/preflight`))) as { ready: boolean; checks: Json[] };
const check = async (c: Client, id: string, name: string) => (await preflightOf(c, id)).checks.find((x) => x.name === name)!;

describe('the launch preflight', () => {
  it('passes every check of a ready campaign, and the launch goes through without force', async () => {
    const t = await tenant(app);
    const { campaign } = await readyCampaign(t.test);
    const result = await preflightOf(t.test, campaign.id);
    expect(result.checks.map((x) => x.name)).toEqual(NAMES);
    expect(result.checks.filter((x) => x.status !== 'pass')).toEqual([]);
    expect(result.ready).toBe(true);
    expect(result.checks.find((x) => x.name === 'audience')!.detail).toBe('3 contacts: 0 contacts suppressed, 0 without an e-mail address; 3 to send to');
    expect(result.checks.find((x) => x.name === 'domains')!.detail).toBe('example.com is verified: SPF, DKIM and DMARC found');
    expect(result.checks.find((x) => x.name === 'credits')!.detail).toMatch(/^The campaign may send 3 messages, one credit each, debited as they are sent; the balance is \d+$/);
    expect(result.checks.find((x) => x.name === 'schedule')!.detail).toMatch(/^Sends mon, tue, wed, thu, fri, 09:00–17:00 Europe\/London; the window next opens at \d{4}-\d\d-\d\d \d\d:\d\d \(Europe\/London\)$/);
    // Reading it changes nothing.
    expect((await ok(t.test.get(`/v1/campaigns/${campaign.id}`))).status).toBe('draft');

    const launched = await ok(t.test.post(`/v1/campaigns/${campaign.id}/launch`));
    expect(launched).toMatchObject({ status: 'active', audience_count: 3, mailbox_ids: campaign.mailbox_ids });
    // Still answered once launched.
    expect((await preflightOf(t.test, campaign.id)).checks).toHaveLength(7);
  });

  it('steps: none fails; a variable some contacts lack fails naming them; an unknown one fails; a default renders', async () => {
    const t = await tenant(app);
    const { campaign: empty } = await readyCampaign(t.test, { steps: [] });
    expect(await check(t.test, empty.id, 'steps')).toEqual({ name: 'steps', status: 'fail', detail: 'The campaign has no steps: add at least one' });

    const people = [person(1), { work_email: `a-${unique()}@x.example` }, { work_email: `b-${unique()}@x.example`, first_name: '  ' }, { work_email: `c-${unique()}@x.example`, company: 'Only' }];
    const { campaign, ids } = await readyCampaign(t.test, {}, people);
    const steps = await check(t.test, campaign.id, 'steps');
    expect(steps.status).toBe('fail');
    expect(steps.detail).toContain(`3 contacts have no first_name: ${ids.slice(1).join(', ')}`);
    expect(steps.detail).toContain(`2 contacts have no company: ${[ids[1], ids[2]].join(', ')}`);

    const patched = async (body: Json) => ok(t.test.patch(`/v1/campaigns/${campaign.id}`, body));
    await patched({ steps: [{ channel: 'email', subject: 'Hi {{ contact.first_name | default: "there" }}', body: 'Hi {{ nickname }}, unsubscribe here {{ first_name' }] });
    const unknown = await check(t.test, campaign.id, 'steps');
    expect(unknown.status).toBe('fail');
    expect(unknown.detail).toBe('Step 1 body has an unclosed {{ }}; Step 1 body: {{ nickname }} is not a contact field');

    await patched({ steps: [{ channel: 'email', subject: 'Hi {{ first_name | default: "there" }}', body: 'Write back to {{ email }}. Unsubscribe: {{ unsubscribe_url }}' }] });
    expect(await check(t.test, campaign.id, 'steps')).toMatchObject({ status: 'pass', detail: '1 step, each renderable; email set for every contact' });

    await patched({ steps: [{ channel: 'email', subject: ' ', body: 'Unsubscribe' }, { channel: 'email', subject: 'Second', body: null }] });
    expect((await check(t.test, campaign.id, 'steps')).detail).toBe('Step 1 (email) has no subject; Step 2 (email) has no body');
  });

  it('audience: suppressed contacts and those without an address warn; nobody left, an empty list or no list fails', async () => {
    const t = await tenant(app);
    const people: Json[] = [person(1), person(2), person(3), person(4), { first_name: 'No', company: 'Mail' }];
    const { campaign, listId } = await readyCampaign(t.test, {}, people);
    // One suppressed address (the suppressions of every channel), one whole domain on a suppression list.
    await ok(t.test.post('/v1/suppressions', { channel: 'email', address: people[0].work_email }), 201);
    const blocked = await ok(t.test.post('/v1/lists', { name: 'Blocked', type: 'suppressions' }), 201);
    const domain = `${unique()}.blocked.example`;
    await ok(t.test.post('/v1/contacts', { list_id: listId, first_name: 'Other', company: 'Co', work_email: `x@${domain}` }), 201);
    await ok(t.test.post(`/v1/lists/${blocked.id}/entries`, { values: [domain] }), 201);
    const warned = await check(t.test, campaign.id, 'audience');
    expect(warned).toEqual({ name: 'audience', status: 'warn', detail: '6 contacts: 2 contacts suppressed, 1 without an e-mail address; 3 to send to' });
    // The launch enrolls neither suppressed contact, and needs the credits of the messages to those it enrolls.
    const credits = await check(t.test, campaign.id, 'credits');
    expect(credits.detail).toMatch(/^The campaign may send 4 messages/);
    const launched = await ok(t.test.post(`/v1/campaigns/${campaign.id}/launch`));
    expect(launched.audience_count).toBe(4);

    const { campaign: nobody } = await readyCampaign(t.test, {}, [{ first_name: 'No', company: 'Mail' }]);
    expect(await check(t.test, nobody.id, 'audience')).toEqual({ name: 'audience', status: 'fail', detail: '1 contact: 0 contacts suppressed, 1 without an e-mail address; 0 to send to: nobody is left' });

    const { campaign: emptyList, listId: emptyId } = await readyCampaign(t.test, {}, []);
    expect(await check(t.test, emptyList.id, 'audience')).toEqual({ name: 'audience', status: 'fail', detail: `The audience list ${emptyId} has no contacts` });

    const { campaign: noList } = await readyCampaign(t.test, { list_id: null });
    expect((await check(t.test, noList.id, 'audience')).detail).toBe('The campaign has no audience: set list_id to a list of type contacts or leads');
  });

  it('mailboxes: none fails for e-mail; slow limits warn; a deleted one warns; linkedin-only needs none', async () => {
    const t = await tenant(app);
    const { campaign } = await readyCampaign(t.test, { mailbox_ids: [] });
    expect(await check(t.test, campaign.id, 'mailboxes')).toEqual({ name: 'mailboxes', status: 'fail', detail: 'No mailbox to send the e-mail steps from: set mailbox_ids' });
    expect((await check(t.test, campaign.id, 'domains')).status).toBe('fail');

    // 20 contacts, two e-mail steps, one a day: 40 sending days.
    const people = Array.from({ length: 20 }, (_, i) => person(i));
    const slowBox = await mailbox(t.test, { daily_limit: 1 });
    const twoSteps = [...STEPS, { ...STEPS[0], subject: 'Again' }];
    const { campaign: slow } = await readyCampaign(t.test, { steps: twoSteps }, people);
    await ok(t.test.patch(`/v1/campaigns/${slow.id}`, { mailbox_ids: [slowBox.id] }));
    expect(await check(t.test, slow.id, 'mailboxes')).toEqual({
      name: 'mailboxes', status: 'warn',
      detail: '1 mailbox sending up to 1 a day now: 40 e-mails take about 40 sending days, more than 14; add mailboxes or raise their limits',
    });
    // An hourly limit caps a day at its hours of the window (8 here): 40 e-mails in 5 days.
    const fast = await mailbox(t.test, { daily_limit: 1000, hourly_limit: 1 });
    await ok(t.test.patch(`/v1/campaigns/${slow.id}`, { mailbox_ids: [fast.id] }));
    expect((await check(t.test, slow.id, 'mailboxes')).detail).toBe('1 mailbox sending up to 8 a day now: 40 e-mails take about 5 sending days');
    // A warm-up starts low and grows: 10, 15, 20 … a day.
    const warming = await mailbox(t.test, { daily_limit: 1000, warmup: { enabled: true, start: 10, increment_per_day: 5 } });
    await ok(t.test.patch(`/v1/campaigns/${slow.id}`, { mailbox_ids: [warming.id, slowBox.id] }));
    expect(await check(t.test, slow.id, 'mailboxes')).toMatchObject({ status: 'pass', detail: '2 mailboxes sending up to 11 a day now: 40 e-mails take about 3 sending days' });

    await ok(t.test.delete(`/v1/mailboxes/${slowBox.id}`));
    expect(await check(t.test, slow.id, 'mailboxes')).toMatchObject({ status: 'warn', detail: expect.stringContaining(`(1 mailbox named no longer exist: ${slowBox.id})`) });

    const { campaign: social } = await readyCampaign(t.test, { mailbox_ids: [], channels: ['linkedin'], steps: [{ channel: 'linkedin', body: 'Hi {{first_name}}' }] });
    const checks = (await preflightOf(t.test, social.id)).checks;
    expect(checks.filter((x) => ['mailboxes', 'domains', 'unsubscribe'].includes(x.name)).map((x) => x.status)).toEqual(['pass', 'pass', 'pass']);
    expect(checks.find((x) => x.name === 'audience')!.detail).toBe('3 contacts: 0 contacts suppressed; 3 to send to');

    // A mailbox must be the tenant's own.
    await fails(t.test.patch(`/v1/campaigns/${campaign.id}`, { mailbox_ids: ['mbx_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }), 404, 'Mailbox not found');
    const other = await tenant(app);
    const foreign = await mailbox(other.test);
    await fails(t.test.post('/v1/campaigns', { name: 'x', mailbox_ids: [foreign.id] }), 404, 'Mailbox not found');
    expect((await t.test.patch(`/v1/campaigns/${campaign.id}`, { mailbox_ids: [fast.id, fast.id] })).statusCode).toBe(422);
  });

  it('domains: a mailbox on a domain not added, or added but not verified, fails naming it and its records', async () => {
    const t = await tenant(app);
    const { campaign } = await readyCampaign(t.test);
    const stray = await mailbox(t.test, { email: `ada@stray-${unique()}.example` });
    const pendingName = `pending-${unique()}.example`;
    await ok(t.test.post('/v1/domains', { domain: pendingName }), 201);
    const pending = await mailbox(t.test, { email: `ada@${pendingName}` });
    await ok(t.test.patch(`/v1/campaigns/${campaign.id}`, { mailbox_ids: [...campaign.mailbox_ids, stray.id, pending.id] }));
    const domains = await check(t.test, campaign.id, 'domains');
    expect(domains.status).toBe('fail');
    expect(domains.detail).toBe([
      `${stray.email.split('@')[1]} is not a sending domain: add it (POST /v1/domains) and publish its records`,
      `${pendingName} is not verified yet: SPF (not checked yet), DKIM (not checked yet), DMARC (not checked yet)`,
    ].join('; '));
  });

  it.skipIf(!dnsAvailable)('domains: a record DNS does not hold fails naming it with what the check found; verified, a live campaign launches', async () => {
    const t = await tenant(app, { sandbox: false });
    const name = `d${unique()}.example.test`;
    const made = await ok(t.live.post('/v1/domains', { domain: name }), 201);
    const published = (skip?: string) => Object.fromEntries(made.records.filter((r: Json) => r.purpose !== skip)
      .map((r: Json) => [r.name, r.type === 'CNAME' ? { cname: r.value } : { txt: [r.value] }]));
    await dns!.publish(published('dmarc'));
    const failed = await ok(t.live.post(`/v1/domains/${made.id}/verify`));
    const finding = failed.records.find((r: Json) => r.purpose === 'dmarc').finding;
    expect(finding).toEqual(expect.any(String));

    const box = await mailbox(t.live, { email: `ada@${name}` });
    const { campaign } = await readyCampaign(t.live);
    await ok(t.live.patch(`/v1/campaigns/${campaign.id}`, { mailbox_ids: [box.id] }));
    expect(await check(t.live, campaign.id, 'domains')).toEqual({ name: 'domains', status: 'fail', detail: `${name} is not verified: DMARC (${finding})` });
    await fails(t.live.post(`/v1/campaigns/${campaign.id}/launch`), 409, 'The launch preflight failed: domains. Fix it, or launch with {"force": true}', {
      checks: [{ name: 'domains', status: 'fail', detail: `${name} is not verified: DMARC (${finding})` }],
    });

    await dns!.publish(published());
    expect((await ok(t.live.post(`/v1/domains/${made.id}/verify`))).status).toBe('verified');
    expect(await check(t.live, campaign.id, 'domains')).toEqual({ name: 'domains', status: 'pass', detail: `${name} is verified: SPF, DKIM and DMARC found` });
    expect((await preflightOf(t.live, campaign.id)).ready).toBe(true);
    expect(await ok(t.live.post(`/v1/campaigns/${campaign.id}/launch`))).toMatchObject({ status: 'active', audience_count: 3 });
  });

  it('unsubscribe: a body with no visible unsubscribe warns, and a warning does not block the launch', async () => {
    const t = await tenant(app);
    const { campaign } = await readyCampaign(t.test, { steps: [STEPS[0], { channel: 'email', subject: 'Two', body: 'No way out {{first_name}}' }, { channel: 'email', subject: 'Three', body: 'Reply STOP to opt out' }] });
    const result = await preflightOf(t.test, campaign.id);
    expect(result.checks.find((x) => x.name === 'unsubscribe')).toEqual({
      name: 'unsubscribe', status: 'warn',
      detail: 'Step 2 shows no unsubscribe link or text in the body (add {{ unsubscribe_url }}); every e-mail carries a one-click unsubscribe (List-Unsubscribe, RFC 8058)',
    });
    expect(result.ready).toBe(true);
    expect((await ok(t.test.post(`/v1/campaigns/${campaign.id}/launch`))).status).toBe('active');
  });

  it('schedule: a window that never opens fails; no schedule passes', async () => {
    const t = await tenant(app);
    const { campaign } = await readyCampaign(t.test, { schedule: null });
    expect(await check(t.test, campaign.id, 'schedule')).toEqual({ name: 'schedule', status: 'pass', detail: 'No schedule: steps may be sent at any time' });
    // The API refuses an empty window; one stored so (by an earlier version, say) is caught here.
    await app.services.database.db.updateTable('campaigns').set({ schedule: JSON.stringify({ ...SCHEDULE, days: [] }) }).where('id', '=', campaign.id).execute();
    expect(await check(t.test, campaign.id, 'schedule')).toEqual({ name: 'schedule', status: 'fail', detail: 'The sending window (no day, 09:00–17:00 Europe/London) does not open within the next 7 days' });
  });

  it('credits: a balance short of the launch fails; the launch is refused with 409 naming it, and force reaches the 402', async () => {
    const org = await createOrganization(app.services.database, { defaultCredits: 2 }, `Poor ${unique()}`);
    const c = client(app, org.test_token);
    const { campaign } = await readyCampaign(c);
    const credits = await check(c, campaign.id, 'credits');
    expect(credits).toMatchObject({ status: 'fail' });
    expect(credits.detail).toMatch(/^The campaign may send 3 messages, one credit each, debited as they are sent, and the balance is \d+$/);
    await fails(c.post(`/v1/campaigns/${campaign.id}/launch`), 409, 'The launch preflight failed: credits. Fix it, or launch with {"force": true}', { checks: [credits] });
    // Forced, the launch itself refuses what the balance cannot pay.
    expect((await c.post(`/v1/campaigns/${campaign.id}/launch`, { force: true })).statusCode).toBe(402);
  });

  it('refuses a launch with failing checks (409, nothing changes) and launches it when forced', async () => {
    const t = await tenant(app);
    const { campaign } = await readyCampaign(t.test, { mailbox_ids: [], steps: [{ channel: 'email', subject: 'Hi {{ first_name }}', body: 'No link {{ nickname }}' }] });
    const before = await ok(t.test.get('/v1/usage'));
    const launches = async () => (await ok(t.test.get('/v1/events?type=campaign.launched'))).length;
    const launchedBefore = await launches();
    const res = await t.test.post(`/v1/campaigns/${campaign.id}/launch`);
    expect(res.statusCode).toBe(409);
    const body = res.json();
    expect(body.type).toBe('conflict');
    expect(body.detail).toBe('The launch preflight failed: steps, mailboxes, domains. Fix them, or launch with {"force": true}');
    expect(body.checks.map((x: Json) => [x.name, x.status])).toEqual([['steps', 'fail'], ['mailboxes', 'fail'], ['domains', 'fail']]);
    expect((await ok(t.test.get(`/v1/campaigns/${campaign.id}`))).status).toBe('draft');
    expect((await ok(t.test.get('/v1/usage'))).balance).toBe(before.balance);
    expect(await launches()).toBe(launchedBefore);

    expect((await t.test.post(`/v1/campaigns/${campaign.id}/launch`, { force: false })).statusCode).toBe(409);
    // Forced, what cannot be sent at all is still refused: e-mail with no mailbox, a step that cannot be rendered.
    await fails(t.test.post(`/v1/campaigns/${campaign.id}/launch`, { force: true }), 400, 'Campaign has e-mail steps and no mailbox to send them from: set mailbox_ids before launching');
    await ok(t.test.patch(`/v1/campaigns/${campaign.id}`, { mailbox_ids: [(await mailbox(t.test)).id] }));
    await fails(t.test.post(`/v1/campaigns/${campaign.id}/launch`, { force: true }), 400, 'Campaign steps cannot be sent: Step 1 body: {{ nickname }} is not a contact field');
    await ok(t.test.patch(`/v1/campaigns/${campaign.id}`, { steps: [{ channel: 'email', subject: 'Hi {{ first_name }}', body: 'No link {{ title }}' }] }));
    const forced = await ok(t.test.post(`/v1/campaigns/${campaign.id}/launch`, { force: true }));
    expect(forced).toMatchObject({ status: 'active', audience_count: 3 });
    expect((await t.test.post(`/v1/campaigns/${MISSING}/launch`, { force: 'yes' })).statusCode).toBe(422);
  });

  it('needs campaigns:read, answers 404 for another tenant\'s campaign, and reads only the tenant\'s own records', async () => {
    const t = await tenant(app);
    const { campaign } = await readyCampaign(t.test);
    const keyed = async (scopes: string[]) => client(app, (await ok(t.test.post('/auth/v1/api-keys', { name: 'k', mode: 'test', scopes }), 201)).api_key_token);
    expect((await (await keyed(['campaigns:read'])).get(`/v1/campaigns/${campaign.id}/launch/preflight`)).statusCode).toBe(200);
    const denied = await (await keyed(['contacts:read'])).get(`/v1/campaigns/${campaign.id}/launch/preflight`);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ type: 'permission_denied', scope: 'campaigns:read' });

    const other = await tenant(app);
    await fails(other.test.get(`/v1/campaigns/${campaign.id}/launch/preflight`), 404, 'Campaign not found');
    await fails(t.live.get(`/v1/campaigns/${campaign.id}/launch/preflight`), 404, 'Campaign not found');
    await fails(t.test.get(`/v1/campaigns/${MISSING}/launch/preflight`), 404, 'Campaign not found');
    // Another tenant's suppressions of the same addresses do not count.
    const { campaign: mine, ids } = await readyCampaign(t.test);
    const emails = await Promise.all(ids.map(async (id) => (await ok(t.test.get(`/v1/contacts/${id}`))).work_email));
    for (const address of emails) await ok(other.test.post('/v1/suppressions', { channel: 'email', address }), 201);
    expect((await check(t.test, mine.id, 'audience')).status).toBe('pass');
  });
});
