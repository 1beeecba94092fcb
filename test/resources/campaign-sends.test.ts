// What a launched campaign sends, through HTTP, on a clock the tests move: its sequence sends the
// steps in the window (test mode: the local driver records every message in the outbox), each run of
// the scheduler debits one credit per message it queued, spent credits hold the steps until the
// balance is topped up, the campaign follows its sequence (paused, resumed, completed, terminated),
// a message the provider refuses for good gives its credit back, and SMS steps text each contact.
import { afterAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../../src/orgs/orgs.ts';
import { runWrite } from '../../src/platform/write.ts';
import { grantCredits } from '../../src/resources/usage/usage.store.ts';
import { client, clock, tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ok, type Json } from '../helpers/records.ts';
import { waitFor } from '../helpers/wait.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());

const at = (iso: string) => Date.parse(iso) / 1000;
const WEEKDAYS = { timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_hour: 9, end_hour: 17 };
let lists = 0;

/** A list of `n` contacts and a draft campaign of `steps` aimed at it, sending from a mailbox of `c`. */
async function campaignOf(c: Client, n: number, steps: Json[], extra: Json = {}): Promise<Json> {
  const list = await ok(c.post('/v1/lists', { name: `Audience ${++lists}`, type: 'contacts' }), 201);
  for (let i = 0; i < n; i++) await ok(c.post('/v1/contacts', { list_id: list.id, first_name: `Ada${i}`, work_email: `ada${i}.${lists}@customer.example` }), 201);
  const mailbox = await ok(c.post('/v1/mailboxes', { email: `sales${lists}@sender.example` }), 201);
  return ok(c.post('/v1/campaigns', { name: `Campaign ${lists}`, list_id: list.id, mailbox_ids: [mailbox.id], steps, schedule: WEEKDAYS, ...extra }), 201);
}

const launch = async (c: Client, campaign: Json) => ok(c.post(`/v1/campaigns/${campaign.id}/launch`, { force: true }));
const get = (c: Client, path: string) => ok(c.get(path));
const statusOf = async (c: Client, path: string) => (await get(c, path)).status as string;
const until = (c: Client, path: string, wanted: string) => waitFor(() => statusOf(c, path), (s) => s === wanted);
const sentBy = async (c: Client, sequenceId: string) => ((await get(c, `/v1/outbox?record_id=${sequenceId}&limit=100`)) as unknown as Json[]).filter((m) => m.status !== 'queued');
const sent = (c: Client, sequenceId: string, n: number) => waitFor(() => sentBy(c, sequenceId), (m) => m.length >= n);
const ledger = async (c: Client, type: string) => (await get(c, `/v1/usage/transactions?type=${type}&limit=100`)) as unknown as Json[];
const balance = async (c: Client) => (await get(c, '/v1/usage')).balance as number;

describe('campaigns that send', () => {
  it('sends the steps through the campaign\'s sequence in the window, one credit per message, and completes with it', async () => {
    clock.set(at('2027-06-05T10:00:00Z')); // a Saturday: nothing goes out until Monday 09:00
    const c = (await tenant(app, { sandbox: false })).test;
    const campaign = await campaignOf(c, 3, [
      { channel: 'email', subject: 'Hi {{first_name}}', body: 'A note. Unsubscribe: {{ unsubscribe_link }}' },
      { channel: 'email', delay_days: 1, body: 'Following up, {{ first_name }}' },
    ]);
    const launched = await launch(c, campaign);
    expect(launched).toMatchObject({ status: 'active', audience_count: 3, sequence_id: expect.stringMatching(/^seq_/) });
    const seq = `/v1/sequences/${launched.sequence_id}`;
    await until(c, seq, 'live');
    expect(await sentBy(c, launched.sequence_id)).toEqual([]);
    expect(await ledger(c, 'debit')).toEqual([]);

    clock.set(at('2027-06-07T09:00:00Z'));
    const first = await sent(c, launched.sequence_id, 3);
    expect(first.map((m) => m.subject).sort()).toEqual(['Hi Ada0', 'Hi Ada1', 'Hi Ada2']);
    expect(first.every((m) => m.status === 'delivered' && String(m.text).includes('/unsubscribe/'))).toBe(true);
    const [debit] = await waitFor(() => ledger(c, 'debit'), (d) => d.length === 1);
    expect(debit).toMatchObject({ amount: 3, operation: 'campaign.send', resource_id: campaign.id, description: `Campaign "${campaign.name}": 3 messages sent` });
    expect(await balance(c)).toBe(997);

    // The follow-ups a day later answer the first messages, and are paid for in their own run.
    clock.advance(86_400);
    const all = await sent(c, launched.sequence_id, 6);
    expect(all.map((m) => m.subject).filter((s) => String(s).startsWith('Re: ')).sort()).toEqual(['Re: Hi Ada0', 'Re: Hi Ada1', 'Re: Hi Ada2']);
    await waitFor(() => ledger(c, 'debit'), (d) => d.length === 2);
    expect(await balance(c)).toBe(994);

    // Every enrollment finished: the sequence completes, and the campaign with it.
    await until(c, seq, 'completed');
    await until(c, `/v1/campaigns/${campaign.id}`, 'completed');
    const [event] = (await get(c, '/v1/events?type=campaign.completed')) as unknown as Json[];
    expect(event.data.object).toMatchObject({ id: campaign.id, status: 'completed' });
    expect(event.previous_attributes).toEqual({ status: 'active' });
    await fails(c.post(`/v1/campaigns/${campaign.id}/pause`), 409, 'A campaign that is completed cannot be paused');
  });

  it('holds the steps once the credits are spent, sends them when the balance is topped up, and refuses a launch it cannot pay', async () => {
    clock.set(at('2027-06-12T10:00:00Z')); // Saturday: both launches pass their credit check before anything is sent
    const org = await createOrganization(app.services.database, { defaultCredits: 3 }, `Three credits ${Date.now()}`);
    const c = client(app, org.test_token);
    const step = [{ channel: 'email', subject: 'Hello', body: 'Hi' }];
    const a = await launch(c, await campaignOf(c, 2, step));
    const b = await launch(c, await campaignOf(c, 2, step));
    await until(c, `/v1/sequences/${a.sequence_id}`, 'live');
    await until(c, `/v1/sequences/${b.sequence_id}`, 'live');

    clock.set(at('2027-06-14T09:00:00Z'));
    const count = async () => (await sentBy(c, a.sequence_id)).length + (await sentBy(c, b.sequence_id)).length;
    await waitFor(count, (n) => n === 3);
    await waitFor(() => balance(c), (n) => n === 0);
    const pending = async (id: string) => (await get(c, `/v1/sequences/${id}/enrollments?status=pending`)) as unknown as Json[];
    const waiting = [...await pending(a.sequence_id), ...await pending(b.sequence_id)];
    expect(waiting).toHaveLength(1);
    expect(waiting[0].due_at).toBe(clock.seconds() + 300);

    // With nothing left, a third launch is refused before anything is enrolled.
    const poor = await campaignOf(c, 1, step);
    await fails(c.post(`/v1/campaigns/${poor.id}/launch`, { force: true }), 402, 'Not enough credits: the launch needs 1 (one per message it may send) and the balance is 0');
    expect(await get(c, `/v1/campaigns/${poor.id}`)).toMatchObject({ status: 'draft', sequence_id: null, audience_count: 0 });

    await runWrite(app.services.database, { orgId: org.org_id, mode: 'test' }, (w) => grantCredits(w, 5, 'Top-up'));
    clock.advance(300);
    await waitFor(count, (n) => n === 4);
    await waitFor(() => balance(c), (n) => n === 4);
    expect((await ledger(c, 'debit')).reduce((sum, d) => sum + Number(d.amount), 0)).toBe(4);
  });

  it('follows its sequence when the sequence itself is paused, resumed or terminated', async () => {
    clock.set(at('2027-06-21T10:00:00Z'));
    const c = (await tenant(app, { sandbox: false })).test;
    const campaign = await campaignOf(c, 2, [{ channel: 'email', delay_days: 3, subject: 'Later', body: 'Hi' }]);
    const { sequence_id } = await launch(c, campaign);
    const seq = `/v1/sequences/${sequence_id}`;
    const cpg = `/v1/campaigns/${campaign.id}`;
    await until(c, seq, 'live');
    expect(await get(c, seq)).toMatchObject({ campaign_id: campaign.id, counts: { enrolled: 2, active: 2 } });

    await ok(c.post(`${seq}/pause`));
    await until(c, cpg, 'paused');
    await ok(c.post(`${seq}/resume`));
    await until(c, cpg, 'active');
    await ok(c.post(`${seq}/terminate`));
    await until(c, cpg, 'completed');
    expect(await get(c, seq)).toMatchObject({ status: 'completed', counts: { enrolled: 2, finished: 2, active: 0 } });
    expect(await sentBy(c, sequence_id)).toEqual([]);
    expect(await ledger(c, 'debit')).toEqual([]);
  });

  it('gives back the credit of a message the provider refuses for good', async () => {
    clock.set(at('2027-06-28T10:00:00Z'));
    // Live mode with no e-mail provider configured: the message is queued, paid for, then fails.
    const c = (await tenant(app, { sandbox: false })).live;
    const campaign = await campaignOf(c, 1, [{ channel: 'email', subject: 'Hello', body: 'Hi' }]);
    const { sequence_id } = await launch(c, campaign);
    const [message] = await waitFor(() => sentBy(c, sequence_id), (m) => m.length === 1);
    expect(message).toMatchObject({ status: 'failed', error: expect.stringMatching(/No e-mail provider is configured/) });
    const [refund] = await waitFor(() => ledger(c, 'refund'), (r) => r.length === 1);
    expect(refund).toMatchObject({ amount: 1, operation: 'campaign.send', resource_id: campaign.id, description: expect.stringContaining(message.id) });
    expect(await ledger(c, 'debit')).toMatchObject([{ amount: 1, resource_id: campaign.id }]);
    expect(await balance(c)).toBe(1000);
  });

  it('texts its SMS steps to each contact\'s phone, one credit per text, and counts texts in what a launch must pay', async () => {
    clock.set(at('2027-07-05T10:00:00Z')); // a Monday, in the window
    const c = (await tenant(app, { sandbox: false })).test;
    const list = await ok(c.post('/v1/lists', { name: `Audience ${++lists}`, type: 'contacts' }), 201);
    for (const [i, phone] of ['+44 20 7946 0100', '+44 20 7946 0101'].entries()) await ok(c.post('/v1/contacts', { list_id: list.id, first_name: `Ada${i}`, phone }), 201);
    const steps = [{ channel: 'sms', subject: 'Never sent', body: 'Hi {{first_name}}. Stop: {{ unsubscribe_link }}' }];
    const campaign = await ok(c.post('/v1/campaigns', { name: 'Texts', list_id: list.id, steps, schedule: WEEKDAYS }), 201);
    const launched = await launch(c, campaign);
    expect(launched).toMatchObject({ status: 'active', audience_count: 2 });
    const texts = await sent(c, launched.sequence_id, 2);
    expect(texts.map((m) => [m.channel, m.status, m.to_addresses[0], m.subject]).sort()).toEqual([['sms', 'delivered', '+442079460100', null], ['sms', 'delivered', '+442079460101', null]]);
    expect(texts.every((m) => /^Hi Ada[01]\. Stop: \S+\/public\/unsubscribe\/\S+$/.test(String(m.text)))).toBe(true);
    const [debit] = await waitFor(() => ledger(c, 'debit'), (d) => d.length === 1);
    expect(debit).toMatchObject({ amount: 2, operation: 'campaign.send', resource_id: campaign.id, description: 'Campaign "Texts": 2 messages sent' });
    expect(await balance(c)).toBe(998);
    await until(c, `/v1/campaigns/${campaign.id}`, 'completed');

    // Two contacts, an e-mail and a text each: the launch needs four credits.
    const org = await createOrganization(app.services.database, { defaultCredits: 3 }, `Three credits ${Date.now()}`);
    const poor = client(app, org.test_token);
    const both = await campaignOf(poor, 2, [{ channel: 'email', subject: 'Hello', body: 'Hi' }, { channel: 'sms', delay_days: 1, body: 'Hi' }]);
    await fails(poor.post(`/v1/campaigns/${both.id}/launch`, { force: true }), 402, 'Not enough credits: the launch needs 4 (one per message it may send) and the balance is 3');
  });

  it('gives back the credit of a text the SMS provider refuses for good', async () => {
    clock.set(at('2027-07-12T10:00:00Z'));
    // Live mode through an sms connection to the local driver, which refuses +15005550001 (not a valid number).
    const c = (await tenant(app, { sandbox: false })).live;
    await ok(c.post('/v1/connections', { kind: 'sms', provider: 'local' }), 201);
    const list = await ok(c.post('/v1/lists', { name: `Audience ${++lists}`, type: 'contacts' }), 201);
    await ok(c.post('/v1/contacts', { list_id: list.id, first_name: 'Nobody', phone: '+1 500 555 0001' }), 201);
    const campaign = await ok(c.post('/v1/campaigns', { name: 'Refused', list_id: list.id, steps: [{ channel: 'sms', body: 'Hi' }] }), 201);
    const { sequence_id } = await launch(c, campaign);
    const [text] = await waitFor(() => sentBy(c, sequence_id), (m) => m.length === 1);
    expect(text).toMatchObject({ channel: 'sms', status: 'failed', provider: 'local', attempts: 1, error: expect.stringContaining('21211'), provider_answer: { response: expect.stringMatching(/^21211/) } });
    const [refund] = await waitFor(() => ledger(c, 'refund'), (r) => r.length === 1);
    expect(refund).toMatchObject({ amount: 1, resource_id: campaign.id, description: expect.stringContaining(text.id) });
    expect(await balance(c)).toBe(1000);
  });
});
