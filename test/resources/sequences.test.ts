// Sequences through HTTP, on a clock the tests move (never by sleeping): the steps and their order,
// strict templates, running a sequence in test mode (the local driver records every message in the
// outbox), the sending window in the sequence's and each contact's time zone across a daylight-saving
// change, same-thread follow-ups, what replies, automatic replies, bounces and unsubscribes do to an
// enrollment, task steps, pausing, resuming without a burst, terminating, enrolling by hand, the
// preview and the analytics.
import { afterAll, describe, expect, it } from 'vitest';
import { clock, tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ok, type Json } from '../helpers/records.ts';
import { emailConnection, inboundUrl, rawMail, receive } from '../helpers/inbox.ts';
import { waitFor } from '../helpers/wait.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_SECOND: '100000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());
const db = app.services.database.db;

const at = (iso: string) => Date.parse(iso) / 1000;
const noSandbox = { sandbox: false };

interface Setup {
  c: Client;
  list: Json;
  mailbox: Json;
  contacts: Json[];
}

/** A list of contacts and a mailbox, in test mode (its sends go to the local driver). */
async function setup(people: Array<Record<string, unknown>>): Promise<Setup> {
  const t = await tenant(app, noSandbox);
  const c = t.test;
  const list = await ok(c.post('/v1/lists', { name: 'Founders', type: 'contacts' }), 201);
  const contacts: Json[] = [];
  for (const p of people) contacts.push(await ok(c.post('/v1/contacts', { list_id: list.id, ...p }), 201));
  const mailbox = await ok(c.post('/v1/mailboxes', { email: 'ada@sender.example', display_name: 'Ada', signature: 'Ada, Sender Inc.' }), 201);
  return { c, list, mailbox, contacts };
}

async function sequence(s: Setup, body: Record<string, unknown>, steps: Array<Record<string, unknown>>): Promise<Json> {
  const seq = await ok(s.c.post('/v1/sequences', { name: 'Outreach', associated_list_id: s.list.id, mailbox_ids: [s.mailbox.id], ...body }), 201);
  for (const step of steps) await ok(s.c.post(`/v1/sequences/${seq.id}/steps`, step), 201);
  return seq;
}

const get = (c: Client, path: string) => ok(c.get(path));
const status = async (c: Client, id: string) => (await get(c, `/v1/sequences/${id}`)).status as string;
const until = (c: Client, id: string, wanted: string) => waitFor(() => status(c, id), (s) => s === wanted);
const enrollmentsOf = async (c: Client, id: string) => (await get(c, `/v1/sequences/${id}/enrollments?limit=100`)) as unknown as Json[];
const outboxOf = async (c: Client, id: string) => (await get(c, `/v1/outbox?record_id=${id}&limit=100`)) as unknown as Json[];
const sentOf = async (c: Client, id: string) => (await outboxOf(c, id)).filter((m) => m.status !== 'queued');
/** Waits until the sequence's outbox holds `n` messages taken by the local driver. */
const sent = (c: Client, id: string, n: number) => waitFor(() => sentOf(c, id), (m) => m.length >= n);

describe('sequences', () => {
  it('keeps its steps in order, checks their templates when saved, and an SMS step\'s rules', async () => {
    const s = await setup([]);
    const seq = await sequence(s, {}, []);
    expect(seq).toMatchObject({
      status: 'drafted', finish_on_reply: true, send_in_same_thread: true, wait_for_new_contacts: false, use_contact_timezone: false,
      schedule: { timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_hour: 9, end_hour: 17 }, counts: { enrolled: 0, active: 0, finished: 0, replied: 0, bounced: 0 },
    });
    const steps = `/v1/sequences/${seq.id}/steps`;
    const a = await ok(s.c.post(steps, { subject: 'Hi {{ contact.first_name }}', body: 'Hello' }), 201);
    const b = await ok(s.c.post(steps, { step_type: 'PHONE', time_interval: 86_400 }), 201);
    const first = await ok(s.c.post(steps, { step_order: 1, subject: 'First', body: 'Before all' }), 201);
    expect(a.id).toMatch(/^stp_/);
    expect((await get(s.c, steps)).map((x: Json) => [x.id, x.step_order])).toEqual([[first.id, 1], [a.id, 2], [b.id, 3]]);
    await ok(s.c.patch(`${steps}/${b.id}`, { step_order: 1 }));
    expect((await get(s.c, steps)).map((x: Json) => x.id)).toEqual([b.id, first.id, a.id]);
    const reordered = await ok(s.c.post(`${steps}/reorder`, { step_ids: [a.id, b.id, first.id] }));
    expect(reordered.map((x: Json) => [x.id, x.step_order])).toEqual([[a.id, 1], [b.id, 2], [first.id, 3]]);
    await fails(s.c.post(`${steps}/reorder`, { step_ids: [a.id, b.id] }), 422);
    await ok(s.c.delete(`${steps}/${b.id}`));
    expect((await get(s.c, steps)).map((x: Json) => [x.id, x.step_order])).toEqual([[a.id, 1], [first.id, 2]]);
    await fails(s.c.delete(`${steps}/${b.id}`), 404, 'Step not found');

    const refusal = async (body: Json) => (await fails(s.c.post(steps, body), 422)).detail as Json[];
    expect(await refusal({ subject: 'Hi {{ contact.frist_name }}', body: 'x' })).toEqual([{ loc: ['body', 'subject'], msg: '{{ contact.frist_name }} is not a contact field', type: 'value_error.template_variable' }]);
    expect(await refusal({ body: '{{ nope }}' })).toEqual([expect.objectContaining({ loc: ['body', 'body'], msg: expect.stringContaining('{{ nope }} is not a variable') })]);
    expect(await refusal({ body: 'Hi {% if %}' })).toEqual([expect.objectContaining({ loc: ['body', 'body'], msg: expect.stringContaining('is not a valid Liquid template'), type: 'value_error.template' })]);
    expect(await refusal({ body: 'x', variants: [{ body: '{{ company.nmae }}', weight: 1 }] })).toEqual([expect.objectContaining({ loc: ['body', 'variants', '0', 'body'] })]);
    await fails(s.c.post(steps, { body: '{{ contact.custom_fields.plan }}' }), 422);
    await ok(s.c.post('/v1/fields', { object: 'contacts', name: 'plan', title: 'Plan', data_type: 'text' }), 201);
    await ok(s.c.post(steps, { body: 'On {{ contact.custom_fields.plan }}, {{ first_name | default: "there" }}, from {{ sender.name }}: {{ unsubscribe_url }}' }), 201);
    // A text: a body (its template checked), no subject, sent by the sequence, within what gateways take.
    expect((await refusal({ step_type: 'SMS', subject: 'Hi', body: 'x' }))[0].loc).toEqual(['body', 'subject']);
    expect((await refusal({ step_type: 'SMS' }))[0]).toMatchObject({ loc: ['body', 'body'], msg: 'An SMS step needs a body: the text to send' });
    expect((await refusal({ step_type: 'SMS', body: 'x', input_type: 'ON_DEMAND' }))[0].loc).toEqual(['body', 'input_type']);
    expect((await refusal({ step_type: 'SMS', body: 'x'.repeat(1601) }))[0].loc).toEqual(['body', 'body']);
    expect((await refusal({ step_type: 'SMS', body: 'x', variants: [{ subject: 'No', body: 'y', weight: 1 }] }))[0].loc).toEqual(['body', 'variants', '0', 'subject']);
    expect((await refusal({ step_type: 'SMS', body: 'Hi {{ contact.frist_name }}' }))[0]).toMatchObject({ loc: ['body', 'body'], type: 'value_error.template_variable' });
    const text = await ok(s.c.post(steps, { step_type: 'SMS', body: 'Hi {{ first_name | default: "there" }}: {{ unsubscribe_url }}' }), 201);
    expect(text).toMatchObject({ step_type: 'SMS', subject: null, input_type: 'TEMPLATE' });
    expect((await fails(s.c.patch(`${steps}/${a.id}`, { step_type: 'SMS' }), 422)).detail[0].loc).toEqual(['body', 'subject']);
    await fails(s.c.post('/v1/sequences/seq_nope/steps', { body: 'x' }), 404, 'Sequence not found');

    expect((await fails(s.c.post('/v1/sequences', { name: 'x', schedule: { timezone: 'Mars/Olympus' } }), 422)).detail[0].loc).toEqual(['body', 'schedule', 'timezone']);
    await fails(s.c.post('/v1/sequences', { name: 'x', associated_list_id: 'lst_nope' }), 404, 'List not found');
    await fails(s.c.post('/v1/sequences', { name: 'x', mailbox_ids: ['mbx_nope'] }), 404, 'Mailbox not found');
    await ok(s.c.delete(`/v1/sequences/${seq.id}`));
    await fails(s.c.get(`/v1/sequences/${seq.id}`), 404, 'Sequence not found');
    await fails(s.c.get(steps), 404, 'Sequence not found');
  });

  it('refuses to run without steps or without a mailbox for its e-mail', async () => {
    const s = await setup([]);
    const empty = await sequence(s, {}, []);
    await fails(s.c.post(`/v1/sequences/${empty.id}/run`), 400, expect.stringContaining('at least one step'));
    const noMailbox = await sequence(s, { mailbox_ids: [] }, [{ subject: 'Hi', body: 'x' }]);
    await fails(s.c.post(`/v1/sequences/${noMailbox.id}/run`), 400, expect.stringContaining('mailbox'));
    expect(await status(s.c, noMailbox.id)).toBe('drafted');
  });

  it('sends in the window only, answers in the same thread, and completes', async () => {
    clock.set(at('2027-01-02T10:00:00Z')); // a Saturday
    const s = await setup([{ first_name: 'Grace', work_email: 'grace@example.org' }, { first_name: 'Alan', work_email: 'alan@example.org' }]);
    const seq = await sequence(s, {}, [
      { subject: 'Hello {{ contact.first_name }}', body: 'Hi {{ contact.first_name }}, from {{ sender.name }}. Leave: {{ unsubscribe_url }}' },
      { time_interval: 2 * 86_400, body: 'Following up, {{ first_name }}' },
    ]);
    expect((await ok(s.c.post(`/v1/sequences/${seq.id}/run`))).status).toBe('scheduling');
    await until(s.c, seq.id, 'live');
    // Nothing goes out on a weekend: both wait for Monday 09:00 UTC.
    const monday = at('2027-01-04T09:00:00Z');
    const waiting = await waitFor(() => enrollmentsOf(s.c, seq.id), (es) => es.length === 2 && es.every((e) => e.due_at === monday));
    expect(waiting.every((e) => e.status === 'pending' && e.step_index === 0)).toBe(true);
    expect(await outboxOf(s.c, seq.id)).toEqual([]);

    clock.set(monday + 30);
    const firsts = await sent(s.c, seq.id, 2);
    const grace = firsts.find((m) => m.to_addresses[0] === 'grace@example.org')!;
    expect(grace).toMatchObject({ subject: 'Hello Grace', from_address: 'Ada <ada@sender.example>', record_type: 'sequence', contact_id: s.contacts[0].id, mailbox_id: s.mailbox.id });
    expect(grace.text).toMatch(/^Hi Grace, from Ada\. Leave: https?:\/\/\S+\/public\/unsubscribe\/\S+\n\n-- \nAda, Sender Inc\.$/);
    expect(grace.headers['List-Unsubscribe']).toContain('/public/unsubscribe/');
    const moved = await enrollmentsOf(s.c, seq.id);
    expect(moved.map((e) => [e.step_index, e.status, e.mailbox_id])).toEqual([[1, 'active', s.mailbox.id], [1, 'active', s.mailbox.id]]);
    expect(moved[0].due_at - moved[0].last_sent_at).toBe(2 * 86_400);
    // The preview of the follow-up is what goes: it answers Grace's first message.
    const [, second] = (await get(s.c, `/v1/sequences/${seq.id}/steps`)) as unknown as Json[];
    const preview = await ok(s.c.post(`/v1/sequences/${seq.id}/preview`, { contact_id: s.contacts[0].id, step_id: second.id }));

    clock.advance(2 * 86_400);
    const all = await sent(s.c, seq.id, 4);
    const followUp = all.find((m) => m.to_addresses[0] === 'grace@example.org' && m.id !== grace.id)!;
    expect(followUp).toMatchObject({ subject: 'Re: Hello Grace', text: 'Following up, Grace\n\n-- \nAda, Sender Inc.' });
    expect(preview).toMatchObject({ subject: followUp.subject, text: followUp.text, to: 'grace@example.org' });
    expect(followUp.headers).toMatchObject({ 'In-Reply-To': grace.message_id, References: grace.message_id });
    await until(s.c, seq.id, 'completed');
    const done = await enrollmentsOf(s.c, seq.id);
    expect(done.map((e) => [e.status, e.reason, e.step_index])).toEqual([['finished', 'completed', 2], ['finished', 'completed', 2]]);
    expect((await get(s.c, `/v1/sequences/${seq.id}`)).counts).toEqual({ enrolled: 2, active: 0, finished: 2, replied: 0, bounced: 0 });
    const analytics = (await get(s.c, `/v1/sequences/${seq.id}/analytics`)).steps;
    expect(analytics.map((x: Json) => [x.step_order, x.sent])).toEqual([[1, 2], [2, 2]]);
    // Nothing is sent twice: one message per enrollment and step.
    expect(new Set(all.map((m) => `${m.contact_id}:${m.step_id}`)).size).toBe(4);
  });

  it('sends nothing to a suppressed contact (its own suppression, its address or domain on a suppression list): the enrollment finishes suppressed', async () => {
    clock.set(at('2027-05-03T10:00:00Z')); // a Monday, in the window
    const s = await setup(['grace@example.org', 'own@example.org', 'listed@example.org', 'anyone@blocked.example'].map((work_email) => ({ work_email })));
    await ok(s.c.post('/v1/suppressions', { channel: 'email', address: 'own@example.org' }), 201);
    const list = await ok(s.c.post('/v1/lists', { name: 'Do not contact', type: 'suppressions' }), 201);
    await ok(s.c.post(`/v1/lists/${list.id}/entries`, { values: ['listed@example.org', 'blocked.example'] }), 201);
    const seq = await sequence(s, {}, [{ subject: 'Hi', body: 'x' }]);
    await ok(s.c.post(`/v1/sequences/${seq.id}/run`));
    await until(s.c, seq.id, 'completed');
    await sent(s.c, seq.id, 4);
    const messages = await outboxOf(s.c, seq.id);
    const byAddress = Object.fromEntries(messages.map((m) => [m.to_addresses[0], m.status]));
    expect(byAddress).toEqual({ 'grace@example.org': 'delivered', 'own@example.org': 'suppressed', 'listed@example.org': 'suppressed', 'anyone@blocked.example': 'suppressed' });
    // Only the message sent has an unsubscribe link: none is made for a message never sent.
    const links = await db.selectFrom('unsubscribe_links').select('address').where('message_id', 'in', messages.map((m) => String(m.message_id))).execute();
    expect(links.map((l) => l.address)).toEqual(['grace@example.org']);
    const reasons = (await enrollmentsOf(s.c, seq.id)).map((e) => e.reason).sort();
    expect(reasons).toEqual(['completed', 'suppressed', 'suppressed', 'suppressed']);
  });

  it('reads the hours in each contact\'s time zone, across a daylight-saving change', async () => {
    clock.set(at('2027-03-13T12:00:00Z')); // Saturday; New York springs forward on Sunday, Berlin two weeks later
    const s = await setup([
      { first_name: 'Ny', work_email: 'ny@example.org', timezone: 'America/New_York' },
      { first_name: 'Be', work_email: 'be@example.org', timezone: 'Europe/Berlin' },
      { first_name: 'Utc', work_email: 'utc@example.org' },
    ]);
    await fails(s.c.patch(`/v1/contacts/${s.contacts[2].id}`, { timezone: 'Nowhere/City' }), 422);
    const seq = await sequence(s, { use_contact_timezone: true }, [{ subject: 'Hi', body: 'x' }]);
    await ok(s.c.post(`/v1/sequences/${seq.id}/run`));
    await until(s.c, seq.id, 'live');
    const es = await waitFor(() => enrollmentsOf(s.c, seq.id), (list) => list.length === 3 && list.every((e) => e.status === 'pending'));
    const due = Object.fromEntries(es.map((e) => [s.contacts.find((c) => c.id === e.contact_id)!.first_name, e.due_at]));
    expect(due).toEqual({ Ny: at('2027-03-15T13:00:00Z'), Be: at('2027-03-15T08:00:00Z'), Utc: at('2027-03-15T09:00:00Z') });
  });

  it('a reply finishes, an automatic reply pauses for a week, a bounce finishes and suppresses, an unsubscribe finishes every enrollment', async () => {
    clock.set(at('2027-04-05T10:00:00Z')); // a Monday, in the window
    const s = await setup([
      { work_email: 'replies@example.org' }, { work_email: 'away@example.org' }, { work_email: 'bounces@example.org' }, { work_email: 'leaves@example.org' },
    ]);
    const steps = [{ subject: 'Hi', body: 'Hello' }, { time_interval: 86_400, subject: 'Again', body: 'Hello again' }];
    const seq = await sequence(s, {}, steps);
    const other = await sequence(s, { name: 'Other', associated_list_id: null }, steps);
    await ok(s.c.post(`/v1/sequences/${seq.id}/run`));
    await ok(s.c.post(`/v1/sequences/${other.id}/run`));
    await ok(s.c.post(`/v1/sequences/${other.id}/enrollments`, { contact_ids: [s.contacts[3].id] }), 201);
    const messages = await sent(s.c, seq.id, 4);
    const to = (address: string) => messages.find((m) => m.to_addresses[0] === address)!;
    await ok(s.c.post(`/v1/outbox/${to('replies@example.org').id}/simulate`, { outcome: 'replied' }));
    await ok(s.c.post(`/v1/outbox/${to('away@example.org').id}/simulate`, { outcome: 'replied', is_auto_reply: true }));
    await ok(s.c.post(`/v1/outbox/${to('bounces@example.org').id}/simulate`, { outcome: 'bounced', reason: '550 5.1.1 no such user' }));
    await sent(s.c, other.id, 1);
    const unsubscribe = /<([^>]+)>/.exec(to('leaves@example.org').headers['List-Unsubscribe'])![1];
    const res = await app.inject({ method: 'POST', url: new URL(unsubscribe).pathname, payload: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.statusCode).toBeLessThan(300);

    const byAddress = async (id: string) => {
      const es = await enrollmentsOf(s.c, id);
      return Object.fromEntries(es.map((e) => [s.contacts.find((c) => c.id === e.contact_id)!.work_email, [e.status, e.reason]]));
    };
    expect(await byAddress(seq.id)).toEqual({
      'replies@example.org': ['finished', 'replied'], 'away@example.org': ['paused', null], 'bounces@example.org': ['finished', 'bounced'], 'leaves@example.org': ['finished', 'unsubscribed'],
    });
    expect(await byAddress(other.id)).toEqual({ 'leaves@example.org': ['finished', 'unsubscribed'] });
    const away = (await enrollmentsOf(s.c, seq.id)).find((e) => e.contact_id === s.contacts[1].id)!;
    expect(away.paused_until).toBe(away.due_at);
    expect(away.paused_until - clock.seconds()).toBeGreaterThan(6 * 86_400);
    expect((await get(s.c, '/v1/suppressions?address=bounces@example.org')).length).toBe(1);
    const counts = (await get(s.c, `/v1/sequences/${seq.id}`)).counts;
    expect(counts).toEqual({ enrolled: 4, active: 1, finished: 3, replied: 1, bounced: 1 });
    const analytics = (await get(s.c, `/v1/sequences/${seq.id}/analytics`)).steps[0];
    expect(analytics).toMatchObject({ sent: 4, replied: 1, bounced: 1, unsubscribed: 1 });

    // The week over, the paused one goes on with its next step; the finished ones get nothing more.
    clock.advance(7 * 86_400 + 60);
    const after = await sent(s.c, seq.id, 5);
    expect(after.filter((m) => m.subject === 'Re: Hi' || m.subject === 'Again').map((m) => m.to_addresses[0])).toEqual(['away@example.org']);
  });

  it('a reply that comes into the inbox threads with the sequence and finishes the enrollment; an out-of-office one does not', async () => {
    clock.set(at('2027-04-14T10:00:00Z')); // a Wednesday
    const s = await setup([{ work_email: 'grace@example.org' }, { work_email: 'alan@example.org' }]);
    const seq = await sequence(s, {}, [{ subject: 'Hello', body: 'Hi' }, { time_interval: 86_400, subject: 'Again', body: 'Hi again' }]);
    await ok(s.c.post(`/v1/sequences/${seq.id}/run`));
    const messages = await sent(s.c, seq.id, 2);
    const link = await inboundUrl(s.c, await emailConnection(s.c));
    const to = (address: string) => messages.find((m) => m.to_addresses[0] === address)!;
    const reply = await receive(app, link, rawMail({ from: 'Grace <grace@example.org>', to: 'ada@sender.example', subject: 'Re: Hello', inReplyTo: to('grace@example.org').message_id, text: 'Yes, let us talk.' }));
    await receive(app, link, rawMail({ from: 'alan@example.org', to: 'ada@sender.example', subject: 'Out of office', inReplyTo: to('alan@example.org').message_id, headers: { 'Auto-Submitted': 'auto-replied' }, text: 'Away until Monday.' }));
    const threads = await get(s.c, `/v1/inbox?sequence_id=${seq.id}`);
    expect(threads.map((x: Json) => x.id)).toContain(reply.thread_id);
    expect((await get(s.c, '/v1/inbox?sequence_id=seq_nope')).length).toBe(0);
    const byAddress = Object.fromEntries((await enrollmentsOf(s.c, seq.id)).map((e) => [s.contacts.find((c) => c.id === e.contact_id)!.work_email, [e.status, e.reason]]));
    expect(byAddress).toEqual({ 'grace@example.org': ['finished', 'replied'], 'alan@example.org': ['paused', null] });
    // Alan's notice says when he is back ("until Monday", read at noon): his enrollment waits until then, not a week.
    const alan = (await enrollmentsOf(s.c, seq.id)).find((e) => e.contact_id === s.contacts[1].id)!;
    expect(alan.paused_until).toBe(at('2027-04-19T12:00:00Z'));
    const [notice] = (await get(s.c, '/v1/events?type=reply.received')).filter((e: Json) => e.data.object.is_auto_reply);
    expect(notice.data.object.returns_at).toBe(at('2027-04-19T12:00:00Z'));
  });

  it('a call step makes a task for the mailbox\'s owner and goes on when it is completed', async () => {
    clock.set(at('2027-04-19T10:00:00Z')); // Monday
    const s = await setup([{ name: 'Grace Hopper', work_email: 'grace@example.org' }]);
    const owner = await ok(s.c.post('/v1/members', { name: 'Ada', email: 'ada@sender.example' }), 201);
    await ok(s.c.patch(`/v1/mailboxes/${s.mailbox.id}`, { owner_id: owner.id }));
    const seq = await sequence(s, {}, [{ step_type: 'PHONE', body: 'Ask about the pilot' }, { subject: 'After our call', body: 'Thanks' }]);
    await ok(s.c.post(`/v1/sequences/${seq.id}/run`));
    const [waiting] = await waitFor(() => enrollmentsOf(s.c, seq.id), (es) => es[0]?.task_id !== null && es[0]?.task_id !== undefined);
    const task = await get(s.c, `/v1/tasks/${waiting.task_id}`);
    expect(task).toMatchObject({ type: 'call', status: 'open', assignee: owner.id, description: 'Ask about the pilot', associations: { contact_ids: [s.contacts[0].id] } });
    expect(waiting).toMatchObject({ status: 'active', step_index: 0, due_at: null });
    expect(await outboxOf(s.c, seq.id)).toEqual([]);
    await ok(s.c.patch(`/v1/tasks/${task.id}`, { status: 'completed' }));
    const [message] = await sent(s.c, seq.id, 1);
    expect(message.subject).toBe('After our call');
    await until(s.c, seq.id, 'completed');
  });

  it('pausing stops sending, resuming spreads what fell due at the mailboxes\' rate, terminating finishes the rest', async () => {
    clock.set(at('2027-04-26T10:00:00Z')); // Monday
    const people = Array.from({ length: 6 }, (_, i) => ({ work_email: `p${i}@example.org` }));
    const s = await setup(people);
    await ok(s.c.patch(`/v1/mailboxes/${s.mailbox.id}`, { hourly_limit: 12 }));
    const seq = await sequence(s, {}, [{ time_interval: 3600, subject: 'Hi', body: 'x' }, { time_interval: 86_400, subject: 'Again', body: 'y' }]);
    await ok(s.c.post(`/v1/sequences/${seq.id}/run`));
    await until(s.c, seq.id, 'live');
    await ok(s.c.post(`/v1/sequences/${seq.id}/pause`));
    await until(s.c, seq.id, 'paused');
    await fails(s.c.post(`/v1/sequences/${seq.id}/pause`), 409, 'A sequence that is paused cannot be paused');
    await fails(s.c.delete(`/v1/sequences/${seq.id}/steps/stp_nope`), 404, 'Step not found');
    clock.advance(2 * 3600); // every first step falls due while paused
    expect(await outboxOf(s.c, seq.id)).toEqual([]);
    const resumedAt = clock.seconds();
    await ok(s.c.post(`/v1/sequences/${seq.id}/resume`));
    await until(s.c, seq.id, 'live');
    // 12 an hour: one every 300 seconds from the resume, in the order they fell due; the first at once.
    const [firstOut] = await sent(s.c, seq.id, 1);
    expect(firstOut.subject).toBe('Hi');
    const es0 = await waitFor(() => enrollmentsOf(s.c, seq.id), (es) => es.filter((e) => e.step_index === 1).length === 1);
    const waitingOnes = es0.filter((e) => e.step_index === 0).map((e) => e.due_at - resumedAt).sort((x: number, y: number) => x - y);
    expect(waitingOnes).toEqual([300, 600, 900, 1200, 1500].map((x) => expect.closeTo(x, -1)));
    expect((await sentOf(s.c, seq.id)).length).toBe(1);
    await ok(s.c.post(`/v1/sequences/${seq.id}/terminate`));
    const done = await until(s.c, seq.id, 'completed');
    expect(done).toBe('completed');
    const es = await enrollmentsOf(s.c, seq.id);
    expect(es.every((e) => e.status === 'finished' && ['terminated', 'completed'].includes(e.reason))).toBe(true);
    expect(es.filter((e) => e.reason === 'terminated').length).toBeGreaterThanOrEqual(5);
    await fails(s.c.patch(`/v1/sequences/${seq.id}`, { name: 'Again' }), 409);
  });

  it('enrols by hand with a result per contact, one open enrollment per contact, and an enrollment is paused, resumed and finished', async () => {
    clock.set(at('2027-05-03T10:00:00Z'));
    const s = await setup([{ work_email: 'a@example.org' }, { work_email: 'b@example.org' }]);
    const seq = await sequence(s, { associated_list_id: null }, [{ time_interval: 86_400, subject: 'Hi', body: 'x' }]);
    const path = `/v1/sequences/${seq.id}/enrollments`;
    await fails(s.c.post(path, { contact_ids: [s.contacts[0].id, 'con_nope'] }), 404, 'Contact not found');
    const first = await ok(s.c.post(path, { contact_ids: [s.contacts[0].id] }), 201);
    expect(first).toEqual({ enrolled: 1, results: [{ contact_id: s.contacts[0].id, status: 'enrolled', enrollment_id: expect.stringMatching(/^enr_/) }] });
    const again = await ok(s.c.post(path, { list_id: s.list.id }), 201);
    expect(again.results.map((r: Json) => r.status)).toEqual(['already_enrolled', 'enrolled']);
    expect(again.results[0].enrollment_id).toBe(first.results[0].enrollment_id);
    expect((await ok(s.c.post(path, { list_id: s.list.id }))).enrolled).toBe(0);
    await fails(s.c.post(path, {}), 400);
    const id = first.results[0].enrollment_id;
    expect(await ok(s.c.patch(`/v1/enrollments/${id}`, { status: 'paused' }))).toMatchObject({ status: 'paused', due_at: null });
    await fails(s.c.patch(`/v1/enrollments/${id}`, { status: 'paused' }), 409, 'An enrollment that is paused cannot be paused');
    expect(await ok(s.c.patch(`/v1/enrollments/${id}`, { status: 'active' }))).toMatchObject({ status: 'active', due_at: clock.seconds() });
    expect(await ok(s.c.patch(`/v1/enrollments/${id}`, { status: 'finished' }))).toMatchObject({ status: 'finished', reason: 'manual' });
    expect((await fails(s.c.patch(`/v1/enrollments/${id}`, { status: 'bogus' }), 400)).detail).toBe('Invalid status: must be one of paused, active, finished');
    expect((await get(s.c, `/v1/contacts/${s.contacts[0].id}/enrollments`)).map((e: Json) => e.id)).toEqual([id]);
    expect((await get(s.c, `${path}?status=active`)).length).toBe(1);
    await fails(s.c.get('/v1/contacts/con_nope/enrollments'), 404, 'Contact not found');
    const events = (await get(s.c, '/v1/events?type=enrollment.finished')).map((e: Json) => e.data.object.id);
    expect(events).toEqual([id]);
  });

  it('previews a step for a contact exactly as it would be sent', async () => {
    const s = await setup([{ first_name: 'Grace', work_email: 'grace@example.org' }]);
    const seq = await sequence(s, {}, [{ subject: 'Hi {{ contact.first_name }}', body: 'From {{ sender.name }}' }]);
    const [step] = (await get(s.c, `/v1/sequences/${seq.id}/steps`)) as unknown as Json[];
    const preview = await ok(s.c.post(`/v1/sequences/${seq.id}/preview`, { contact_id: s.contacts[0].id, step_id: step.id }));
    expect(preview).toEqual({ step_id: step.id, step_type: 'EMAIL', from: 'ada@sender.example', to: 'grace@example.org', subject: 'Hi Grace', text: 'From Ada\n\n-- \nAda, Sender Inc.' });
    await fails(s.c.post(`/v1/sequences/${seq.id}/preview`, { contact_id: 'con_nope', step_id: step.id }), 404, 'Contact not found');
    await fails(s.c.post(`/v1/sequences/${seq.id}/preview`, { contact_id: s.contacts[0].id, step_id: 'stp_nope' }), 404, 'Step not found');
  });

  it('texts an SMS step to the contact\'s phone through the local driver; a contact without a number fails, a suppressed number is not sent', async () => {
    clock.set(at('2027-05-10T10:00:00Z')); // a Monday, in the window
    const s = await setup([
      { first_name: 'Grace', phone: '+44 20 7946 0123' }, { first_name: 'Alan' }, { first_name: 'Linus' }, { first_name: 'Hedy', phone: '+1 (201) 555-0142' },
    ]);
    // A number stored before contacts' phones were normalized: the API now refuses it (no phone_region).
    await db.updateTable('contacts').set({ phone: '020 7946 0999' }).where('id', '=', s.contacts[2].id).execute();
    await ok(s.c.post('/v1/suppressions', { channel: 'sms', address: '+12015550142' }), 201);
    const seq = await sequence(s, {}, [{ step_type: 'SMS', body: 'Hi {{ contact.first_name }}, {{ sender.name }} here. Stop: {{ unsubscribe_url }}' }]);
    const [step] = (await get(s.c, `/v1/sequences/${seq.id}/steps`)) as unknown as Json[];
    const preview = await ok(s.c.post(`/v1/sequences/${seq.id}/preview`, { contact_id: s.contacts[0].id, step_id: step.id }));
    expect(preview).toMatchObject({ step_type: 'SMS', from: null, to: '+442079460123', subject: '', text: expect.stringMatching(/^Hi Grace, Ada here\. Stop: \S+\/public\/unsubscribe\/preview$/) });
    await ok(s.c.post(`/v1/sequences/${seq.id}/run`));
    const messages = await sent(s.c, seq.id, 2);
    expect(messages.map((m) => [m.to_addresses[0], m.status]).sort()).toEqual([['+12015550142', 'suppressed'], ['+442079460123', 'delivered']]);
    const text = messages.find((m) => m.status === 'delivered')!;
    expect(text).toMatchObject({
      channel: 'sms', provider: 'local', from_address: '+12015550100', subject: null, html: null, mailbox_id: null, contact_id: s.contacts[0].id, step_id: step.id,
      message_id: expect.stringMatching(/^sms_[0-9a-f]{40}$/), provider_answer: { id: expect.stringMatching(/^SMlocal[0-9a-f]{32}$/) }, attempts: 1,
    });
    expect(text.text).toMatch(/^Hi Grace, Ada here\. Stop: https?:\/\/\S+\/public\/unsubscribe\/\S+$/);
    expect((await get(s.c, `/v1/outbox?channel=sms&record_id=${seq.id}`)).length).toBe(2);
    await until(s.c, seq.id, 'completed');
    const byName = Object.fromEntries((await enrollmentsOf(s.c, seq.id)).map((e) => [s.contacts.find((c) => c.id === e.contact_id)!.first_name, [e.status, e.reason, e.error]]));
    expect(byName).toEqual({
      Grace: ['finished', 'completed', null], Alan: ['failed', null, 'The contact has no phone number'],
      Linus: ['failed', null, expect.stringContaining('has no country code')], Hedy: ['finished', 'suppressed', null],
    });

    // The text's own link unsubscribes the number from texts, and counts on its step.
    const res = await app.inject({ method: 'POST', url: new URL(/\S+$/.exec(text.text)![0]).pathname });
    expect(res.json().data).toEqual({ unsubscribed: true, channel: 'sms', address: '+442079460123' });
    expect((await get(s.c, '/v1/suppressions?channel=sms')).map((x: Json) => [x.address, x.reason]).sort()).toEqual([['+12015550142', 'manual'], ['+442079460123', 'unsubscribed']]);
    expect((await get(s.c, `/v1/sequences/${seq.id}/analytics`)).steps[0]).toMatchObject({ sent: 1, delivered: 1, unsubscribed: 1 });
  });

  it('refuses to run live SMS steps with no SMS provider (503), and texts through an sms connection', async () => {
    clock.set(at('2027-05-17T10:00:00Z')); // a Monday
    const t = await tenant(app, noSandbox);
    const list = await ok(t.live.post('/v1/lists', { name: 'Texts', type: 'contacts' }), 201);
    await ok(t.live.post('/v1/contacts', { list_id: list.id, first_name: 'Grace', phone: '+44 20 7946 0456' }), 201);
    const seq = await ok(t.live.post('/v1/sequences', { name: 'Texts', associated_list_id: list.id }), 201);
    await ok(t.live.post(`/v1/sequences/${seq.id}/steps`, { step_type: 'SMS', body: 'Hi {{ first_name }}' }), 201);
    const noProvider = 'No SMS provider is configured: create a connection (POST /v1/connections with "kind": "sms") or set SMS_PROVIDER';
    await fails(t.live.post(`/v1/sequences/${seq.id}/run`), 503, noProvider, { type: 'provider_not_configured' });
    expect(await status(t.live, seq.id)).toBe('drafted');

    const conn = await ok(t.live.post('/v1/connections', { kind: 'sms', provider: 'local', name: 'Records texts' }), 201);
    expect(conn).toMatchObject({ kind: 'sms', provider: 'local' });
    await ok(t.live.post(`/v1/sequences/${seq.id}/run`));
    const [text] = await sent(t.live, seq.id, 1);
    expect(text).toMatchObject({ channel: 'sms', status: 'delivered', provider: 'local', connection_id: conn.id, to_addresses: ['+442079460456'], text: 'Hi Grace' });
    await until(t.live, seq.id, 'completed');
  });
});
