// The inbox through HTTP: messages posted to a connection's inbound URL (signed, bounded, never a
// 500), threading (by In-Reply-To to a received or a sent message, by reply address, by contact and
// subject), automatic replies and delivery status notifications, the list's filters, the thread's
// moves (assign, tag, snooze until woken by its job, close, reopen), a reply sent through the outbox
// with its threading headers, and the draft that needs a provider the service does not have.
import { afterAll, describe, expect, it } from 'vitest';
import { parseJson } from '../../src/db/sql.ts';
import { queueEmail } from '../../src/platform/outbox/send.ts';
import { runWrite } from '../../src/platform/write.ts';
import { clock, tenant, testApp } from '../helpers/app.ts';
import { emailConnection, inboundUrl, post, rawMail, receive, signed, uniqueId } from '../helpers/inbox.ts';
import { fails, ok, type Json } from '../helpers/records.ts';
import { waitFor } from '../helpers/wait.ts';

const MAX = 200_000;
const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_SECOND: '100000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000', INBOUND_MAX_BYTES: String(MAX) } });
afterAll(() => app.close());

/** A tenant with an e-mail connection and its inbound URL, in live mode. */
async function setup() {
  const t = await tenant(app, { sandbox: false });
  const connectionId = await emailConnection(t.live);
  return { t, c: t.live, connectionId, link: await inboundUrl(t.live, connectionId) };
}

const thread = (c: Setup['c'], id: string) => ok(c.get(`/v1/inbox/${id}`));
type Setup = Awaited<ReturnType<typeof setup>>;

/** A message the service sent (an outbox row), as a sequence step would queue it. */
async function sent(s: Setup, to = 'bob@example.org', contactId: string | null = null) {
  return runWrite(app.services.database, { orgId: s.t.org_id, mode: 'live' }, (w) =>
    queueEmail(w, `test:${Math.random()}`, { from: 'ada@acme.example', to: [to], subject: 'Pilot next week', text: 'Shall we talk?', contactId, record: { type: 'sequence', id: 'seq_walked' } }));
}

describe('the inbound URL', () => {
  it('records a signed message once, in a new thread, with its HTML sanitized', async () => {
    const s = await setup();
    const raw = rawMail({ html: '<p onclick="steal()">Tuesday <script>alert(1)</script><a href="javascript:alert(2)">works</a> <a href="https://acme.example/x">ok</a></p>' });
    const first = await receive(app, s.link, raw);
    expect(first).toMatchObject({ status: 'recorded', is_auto_reply: false, outbox_id: null, bounce: null });
    const t = await thread(s.c, first.thread_id);
    expect(t).toMatchObject({ id: first.thread_id, status: 'open', channel: 'email', subject: 'Pilot next week', from_address: 'bob@example.org', message_count: 1, connection_id: s.connectionId });
    expect(t.messages).toHaveLength(1);
    const m = t.messages[0];
    expect(m).toMatchObject({ direction: 'inbound', from_address: 'bob@example.org', from_name: 'Bob Example', to_addresses: ['sales@acme.example'], subject: 'Pilot next week', is_auto_reply: false, source: 'webhook' });
    expect(m.html).not.toMatch(/script|onclick|javascript:/i);
    expect(m.html).toContain('href="https://acme.example/x"');
    expect(m.date).toBe(Date.UTC(2026, 11, 1, 10) / 1000);
    // The same message again (a provider retrying) is answered as recorded, never recorded twice.
    const again = await receive(app, s.link, raw);
    expect(again).toMatchObject({ status: 'duplicate', id: first.id, thread_id: first.thread_id });
    expect((await thread(s.c, first.thread_id)).message_count).toBe(1);
    // A message without a Message-ID is known again by its bytes.
    const anonymous = rawMail({ messageId: null, subject: 'No id' });
    const once = await receive(app, s.link, anonymous);
    expect(once.message_id).toMatch(/^<[0-9a-f]{64}@message-without-id\.invalid>$/);
    expect(await receive(app, s.link, anonymous)).toMatchObject({ status: 'duplicate', id: once.id });
    const events = await ok(s.c.get('/v1/events?type=inbox_message.received'));
    expect(events).toHaveLength(2);
    expect((await ok(s.c.get('/v1/events?type=thread.created'))).map((e: Json) => e.data.object.id)).toEqual([once.thread_id, first.thread_id]);
  });

  it('answers 401 to a missing, wrong or stale signature and 404 to an unknown token, recording nothing', async () => {
    const s = await setup();
    const body = Buffer.from(rawMail());
    await fails(post(app, s.link, body, {}), 401);
    await fails(post(app, s.link, body, signed('whsec_' + Buffer.from('another secret of 32 bytes......').toString('base64'), body)), 401);
    await fails(post(app, s.link, body, signed(s.link.secret, body, Math.floor(Date.now() / 1000) - 3600)), 401);
    // Signed over other bytes than those posted.
    await fails(post(app, s.link, body, signed(s.link.secret, Buffer.from(rawMail({ subject: 'Other' })))), 401);
    await fails(post(app, { ...s.link, path: '/public/inbound/unknown-token' }, body), 404, 'Inbound URL not found');
    // A new URL retires the old one.
    const renewed = await inboundUrl(s.c, s.connectionId);
    await fails(post(app, s.link, body), 404);
    expect((await receive(app, renewed, rawMail())).status).toBe('recorded');
    expect((await ok(s.c.get('/v1/inbox'))).length).toBe(1);
  });

  it('refuses what is too large (413), not mail or too intricate (422), never answering 500', async () => {
    const s = await setup();
    const big = rawMail({ text: 'x'.repeat(MAX + 10) });
    expect((await post(app, s.link, big)).statusCode).toBe(413);
    await fails(post(app, s.link, Buffer.from([0, 1, 2, 255, 254, 10, 13, 0])), 422);
    await fails(post(app, s.link, 'just some words without any header\r\n'), 422);
    // Many parts, each small: a MIME bomb under the size limit.
    const parts = Array.from({ length: 800 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join('');
    const bomb = `From: bob@example.org\r\nSubject: bomb\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${parts}--b--\r\n`;
    const refused = await fails(post(app, s.link, bomb), 422);
    expect(JSON.stringify(refused.detail)).toContain('parts');
    let nested = 'From: bob@example.org\r\nSubject: nested\r\n';
    for (let i = 0; i < 60; i++) nested += `Content-Type: multipart/mixed; boundary="n${i}"\r\n\r\n--n${i}\r\n`;
    await fails(post(app, s.link, nested), 422);
    // Markup nested far deeper than mail is kept as text, without its HTML.
    const deep = await receive(app, s.link, rawMail({ text: 'deep', html: '<div>'.repeat(30_000) }));
    const [m] = (await thread(s.c, deep.thread_id)).messages;
    expect(m.html).toBeNull();
    expect(m.text).toBe('deep');
    expect((await ok(s.c.get('/v1/inbox'))).length).toBe(1);
  });
});

describe('threading', () => {
  it('puts an answer in the thread of the message it names (In-Reply-To, References)', async () => {
    const s = await setup();
    const first = await receive(app, s.link, rawMail({ messageId: uniqueId() }));
    const firstId = (await thread(s.c, first.thread_id)).messages[0].message_id;
    const second = await receive(app, s.link, rawMail({ subject: 'Something else', inReplyTo: firstId }));
    const third = await receive(app, s.link, rawMail({ subject: 'Yet another', references: ['<unknown@x>', firstId] }));
    expect([second.thread_id, third.thread_id]).toEqual([first.thread_id, first.thread_id]);
    const t = await thread(s.c, first.thread_id);
    expect(t.message_count).toBe(3);
    expect((await ok(s.c.get('/v1/inbox')))[0].message_count).toBe(3);
    const counted = (await ok(s.c.get('/v1/events?type=thread.updated'))).map((e: Json) => e.previous_attributes.message_count);
    expect(counted).toEqual([2, 1]);
    expect(t.messages[1]).toMatchObject({ in_reply_to: firstId });
  });

  it('puts a message from a contact with the same subject, without Re: or its translations, in that contact\'s thread', async () => {
    const s = await setup();
    const list = await ok(s.c.post('/v1/lists', { name: 'People', type: 'contacts' }), 201);
    const contact = await ok(s.c.post('/v1/contacts', { list_id: list.id, name: 'Bob', work_email: 'bob@example.org' }), 201);
    const first = await receive(app, s.link, rawMail({ subject: 'Pilot next week' }));
    const second = await receive(app, s.link, rawMail({ subject: 'AW: Re:  pilot NEXT week' }));
    const stranger = await receive(app, s.link, rawMail({ from: 'eve@example.net', subject: 'Re: Pilot next week' }));
    expect(second.thread_id).toBe(first.thread_id);
    expect(stranger.thread_id).not.toBe(first.thread_id);
    expect(await thread(s.c, first.thread_id)).toMatchObject({ contact_id: contact.id, message_count: 2 });
    expect((await ok(s.c.get(`/v1/inbox?contact_id=${contact.id}`))).map((x: Json) => x.id)).toEqual([first.thread_id]);
  });

  it('puts a message sent to a thread\'s reply address in that thread; a forged address starts a thread of its own', async () => {
    const s = await setup();
    const first = await receive(app, s.link, rawMail());
    const { replyAddress, replyToken } = await import('../../src/resources/inbox/threading.ts');
    const scope = { orgId: s.t.org_id, mode: 'live' as const };
    const token = replyToken(app.services.secret, scope, first.thread_id);
    const byToken = await receive(app, s.link, rawMail({ from: 'carol@example.net', subject: 'New subject', to: `reply+${token}@acme.example` }));
    expect(byToken.thread_id).toBe(first.thread_id);
    // The address a sender puts in Reply-To, on its own mailbox (mail systems may change its case).
    const address = replyAddress(app.services.secret, scope, first.thread_id, 'Sales@Acme.example');
    expect(address).toMatch(/^Sales\+thr_[0-9a-z]+\.[0-9a-f]{20}@acme\.example$/);
    const byAddress = await receive(app, s.link, rawMail({ from: 'dan@example.net', subject: 'Other', to: address.toUpperCase() }));
    expect(byAddress.thread_id).toBe(first.thread_id);
    const forged = await receive(app, s.link, rawMail({ from: 'carol@example.net', subject: 'New subject', to: `reply+${first.thread_id.toLowerCase()}.0123456789abcdef0123@acme.example` }));
    expect(forged.thread_id).not.toBe(first.thread_id);
  });

  it('threads a reply to a sent message with it, marks the send replied and records reply.received', async () => {
    const s = await setup();
    const out = await sent(s);
    const answer = await receive(app, s.link, rawMail({ subject: 'Re: Pilot next week', inReplyTo: out.message_id }));
    expect(answer).toMatchObject({ status: 'recorded', outbox_id: out.id, is_auto_reply: false });
    const t = await thread(s.c, answer.thread_id);
    expect(t).toMatchObject({ subject: 'Pilot next week', sequence_id: 'seq_walked', message_count: 2 });
    expect(t.messages.map((m: Json) => [m.direction, m.message_id])).toEqual([['outbound', out.message_id], ['inbound', expect.any(String)]]);
    const replies = await ok(s.c.get('/v1/events?type=reply.received'));
    expect(replies).toHaveLength(1);
    expect(replies[0].data.object).toMatchObject({ id: out.id, is_auto_reply: false });
    const row = await app.services.database.db.selectFrom('outbox_messages').select(['replied_at', 'thread_id']).where('id', '=', out.id).executeTakeFirstOrThrow();
    expect(row.replied_at).not.toBeNull();
    expect(row.thread_id).toBe(answer.thread_id);
    // A later answer names the sent message in References only: the same thread.
    const later = await receive(app, s.link, rawMail({ subject: 'Re: Pilot', references: [out.message_id] }));
    expect(later.thread_id).toBe(answer.thread_id);
  });

  it('flags an out-of-office answer, which is kept but counts as no reply and reopens nothing', async () => {
    const s = await setup();
    const out = await sent(s);
    const auto = await receive(app, s.link, rawMail({ subject: 'Automatic reply: Pilot next week', inReplyTo: out.message_id, headers: { 'Auto-Submitted': 'auto-replied' } }));
    expect(auto.is_auto_reply).toBe(true);
    const [m] = (await thread(s.c, auto.thread_id)).messages.filter((x: Json) => x.direction === 'inbound');
    expect(m).toMatchObject({ is_auto_reply: true, auto_reply_kind: 'auto_submitted:auto-replied' });
    const replies = await ok(s.c.get('/v1/events?type=reply.received'));
    expect(replies.map((e: Json) => e.data.object.is_auto_reply)).toEqual([true]);
    const row = await app.services.database.db.selectFrom('outbox_messages').select('replied_at').where('id', '=', out.id).executeTakeFirstOrThrow();
    expect(row.replied_at).toBeNull();
    await ok(s.c.post(`/v1/inbox/${auto.thread_id}/close`));
    for (const headers of [{ 'X-Autoreply': 'yes' }, { Precedence: 'bulk' }, {}] as Array<Record<string, string>>) {
      const subject = Object.keys(headers).length === 0 ? 'Out of Office: back Monday' : 'Re: Pilot next week';
      expect((await receive(app, s.link, rawMail({ subject, inReplyTo: out.message_id, headers }))).is_auto_reply).toBe(true);
    }
    expect((await thread(s.c, auto.thread_id)).status).toBe('closed');
    // A person's answer reopens it.
    await receive(app, s.link, rawMail({ subject: 'Re: Pilot next week', inReplyTo: out.message_id }));
    expect((await thread(s.c, auto.thread_id)).status).toBe('open');
  });

  it('marks a sent message bounced from its delivery status notification, and a hard bounce suppresses the address', async () => {
    const s = await setup();
    const out = await sent(s, 'gone@example.org');
    // The report answers a message handed over: its send job is done before the report arrives.
    const statusOf = async () => (await app.services.database.db.selectFrom('outbox_messages').select('status').where('id', '=', out.id).executeTakeFirstOrThrow()).status;
    await waitFor(statusOf, (status) => status !== 'queued');
    const dsn = [
      'From: Mail Delivery System <MAILER-DAEMON@mx.example.org>', 'To: ada@acme.example', 'Subject: Undelivered Mail Returned to Sender',
      `Message-ID: ${uniqueId('mx.example.org')}`, 'Auto-Submitted: auto-replied', 'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="R"', '',
      '--R', 'Content-Type: text/plain', '', 'Your message could not be delivered.', '',
      '--R', 'Content-Type: message/delivery-status', '', 'Reporting-MTA: dns; mx.example.org', '',
      'Final-Recipient: rfc822; gone@example.org', 'Action: failed', 'Status: 5.1.1', 'Diagnostic-Code: smtp; 550 5.1.1 No such user', '',
      '--R', 'Content-Type: text/rfc822-headers', '', 'From: ada@acme.example', 'To: gone@example.org', `Message-ID: ${out.message_id}`, 'Subject: Pilot next week', '',
      '--R--', '',
    ].join('\r\n');
    const report = await receive(app, s.link, dsn);
    expect(report).toMatchObject({ outbox_id: out.id, bounce: 'hard', is_auto_reply: true });
    const row = await app.services.database.db.selectFrom('outbox_messages').select(['status', 'bounced_at']).where('id', '=', out.id).executeTakeFirstOrThrow();
    expect(row.status).toBe('bounced');
    const suppressed = await ok(s.c.get('/v1/suppressions?address=gone@example.org'));
    expect(suppressed).toHaveLength(1);
    expect(suppressed[0]).toMatchObject({ reason: 'hard_bounce' });
    expect(await ok(s.c.get('/v1/events?type=reply.received'))).toHaveLength(0);
  });
});

describe('threads', () => {
  it('filter by status, assignee, tag, contact and text', async () => {
    const s = await setup();
    const a = await receive(app, s.link, rawMail({ subject: 'Pricing question' }));
    const b = await receive(app, s.link, rawMail({ from: 'dora@example.net', subject: 'Security review' }));
    await ok(s.c.post(`/v1/inbox/${a.thread_id}/assign`, { assignee: 'ada@acme.example' }));
    await ok(s.c.post(`/v1/inbox/${b.thread_id}/tag`, { tags: ['security', ' security ', 'urgent'] }));
    await ok(s.c.post(`/v1/inbox/${b.thread_id}/close`));
    const ids = async (query: string) => (await ok(s.c.get(`/v1/inbox?${query}`))).map((x: Json) => x.id);
    expect(await ids('status=open')).toEqual([a.thread_id]);
    expect(await ids('status=closed')).toEqual([b.thread_id]);
    expect(await ids('assignee=ada@acme.example')).toEqual([a.thread_id]);
    expect(await ids('tag=urgent')).toEqual([b.thread_id]);
    expect(await ids('q=PRICING')).toEqual([a.thread_id]);
    expect(await ids('q=dora@')).toEqual([b.thread_id]);
    expect(await ids('channel=email')).toEqual([b.thread_id, a.thread_id]);
    expect((await thread(s.c, b.thread_id)).tags).toEqual(['security', 'urgent']);
    const page = await s.c.get('/v1/inbox?limit=1');
    expect(page.json().pagination).toMatchObject({ total: 2, has_next: true });
    const updated = await ok(s.c.get('/v1/events?type=thread.updated'));
    expect(updated.find((e: Json) => e.data.object.id === a.thread_id).previous_attributes).toEqual({ assignee: null });
    await fails(s.c.post(`/v1/inbox/${a.thread_id}/assign`, { assignee: 'mem_doesnotexist' }), 404, 'Member not found');
    await fails(s.c.get('/v1/inbox/thr_unknown'), 404, 'Thread not found');
  });

  it('snooze until a time in the future, then wake up by their job; close and reopen', async () => {
    const s = await setup();
    const { thread_id: id } = await receive(app, s.link, rawMail());
    await fails(s.c.post(`/v1/inbox/${id}/snooze`, { until: Math.floor(clock.now() / 1000) - 1 }), 400);
    const until = Math.floor(clock.now() / 1000) + 3600;
    expect(await ok(s.c.post(`/v1/inbox/${id}/snooze`, { until }))).toMatchObject({ status: 'snoozed', snoozed_until: until });
    clock.advance(3601);
    await waitFor(() => thread(s.c, id), (t) => t.status === 'open', 60_000, 100);
    expect((await thread(s.c, id)).snoozed_until).toBeNull();
    expect(await ok(s.c.get('/v1/events?type=thread.woke'))).toHaveLength(1);
    await ok(s.c.post(`/v1/inbox/${id}/close`));
    await fails(s.c.post(`/v1/inbox/${id}/close`), 409, 'A thread that is closed cannot be closed');
    expect(await ok(s.c.post(`/v1/inbox/${id}/reopen`))).toMatchObject({ status: 'open' });
    // A thread snoozed and then closed is not woken.
    await ok(s.c.post(`/v1/inbox/${id}/snooze`, { until: Math.floor(clock.now() / 1000) + 60 }));
    await ok(s.c.post(`/v1/inbox/${id}/close`));
    clock.advance(61);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await thread(s.c, id)).status).toBe('closed');
  });

  it('send a reply through the outbox, threaded, and hold it as an outbound message', async () => {
    const s = await setup();
    const first = await receive(app, s.link, rawMail({ from: 'Bob <bob@example.org>', headers: { 'Reply-To': 'bob.replies@example.org' } }));
    const theirs = (await thread(s.c, first.thread_id)).messages[0].message_id;
    // A list read before (and so kept) is not answered again once the thread has a reply.
    expect((await ok(s.c.get('/v1/inbox')))[0].message_count).toBe(1);
    // Without a mailbox, from the address their message came to.
    const plain = await ok(s.c.post(`/v1/inbox/${first.thread_id}/reply`, { body: 'Thanks, looking.' }), 201);
    expect(plain).toMatchObject({ from_address: 'sales@acme.example', to_addresses: ['bob.replies@example.org'] });
    await fails(s.c.post(`/v1/inbox/${first.thread_id}/reply`, { body: 'x', mailbox_id: 'mbx_unknown' }), 404, 'Mailbox not found');
    const mailbox = await ok(s.c.post('/v1/mailboxes', { email: 'ada@acme.example', display_name: 'Ada Lovelace' }), 201);
    const reply = await ok(s.c.post(`/v1/inbox/${first.thread_id}/reply`, { body: 'Tuesday at 10 works.', mailbox_id: mailbox.id }), 201);
    expect(reply).toMatchObject({ direction: 'outbound', from_address: 'ada@acme.example', to_addresses: ['bob.replies@example.org'], subject: 'Re: Pilot next week', in_reply_to: theirs, references: [theirs, plain.message_id], source: 'reply' });
    const row = await app.services.database.db.selectFrom('outbox_messages').selectAll().where('id', '=', reply.outbox_id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ message_id: reply.message_id, thread_id: first.thread_id, mailbox_id: mailbox.id, from_address: 'Ada Lovelace <ada@acme.example>', subject: 'Re: Pilot next week', text: 'Tuesday at 10 works.' });
    expect(parseJson(row.headers)).toMatchObject({ 'In-Reply-To': theirs, References: `${theirs} ${plain.message_id}` });
    const t = await thread(s.c, first.thread_id);
    expect(t.message_count).toBe(3);
    expect((await ok(s.c.get('/v1/inbox')))[0].message_count).toBe(3);
    const counted = (await ok(s.c.get('/v1/events?type=thread.updated'))).map((e: Json) => e.previous_attributes.message_count);
    expect(counted).toEqual([2, 1]);
    // Their answer to the reply comes back into the thread.
    const back = await receive(app, s.link, rawMail({ subject: 'Re: Re: Pilot next week', inReplyTo: reply.message_id }));
    expect(back).toMatchObject({ thread_id: first.thread_id, outbox_id: reply.outbox_id });
  });

  it('answer 503 for a draft: no language-model provider exists', async () => {
    const s = await setup();
    const { thread_id: id } = await receive(app, s.link, rawMail());
    const answer = await s.c.get(`/v1/inbox/${id}/draft`);
    expect(answer.statusCode).toBe(503);
    const refused = answer.json();
    expect(refused.type).toBe('provider_not_configured');
    expect(refused.detail).toMatch(/language-model provider/);
    await fails(s.c.get('/v1/inbox/thr_unknown/draft'), 404);
  });

  it('delete with their messages; another tenant sees none of them', async () => {
    const s = await setup();
    const other = await tenant(app, { sandbox: false });
    const { thread_id: id } = await receive(app, s.link, rawMail());
    await fails(other.live.get(`/v1/inbox/${id}`), 404, 'Thread not found');
    await fails(s.t.test.get(`/v1/inbox/${id}`), 404, 'Thread not found');
    expect(await ok(other.live.get('/v1/inbox'))).toEqual([]);
    await ok(s.c.delete(`/v1/inbox/${id}`));
    await fails(s.c.get(`/v1/inbox/${id}`), 404);
    const left = await app.services.database.db.selectFrom('inbox_messages').select('id').where('thread_id', '=', id).execute();
    expect(left).toEqual([]);
  });
});
