// Mailboxes sending through a real SMTP server (smtp-server in this process, AUTH without TLS): the
// test route and the send job deliver each message once with its Message-ID, From and a DKIM
// signature that verifies; a 5xx ends the message failed and unretried, a 4xx or a refused
// connection is retried until it is sent once; a wrong password is reported by the test; a mailbox
// never exceeds its hourly limit (the rest wait, and go when the clock moves); a live message with no
// provider fails `provider_not_configured`; a test-mode key never reaches the server.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueEmail, type OutgoingEmail } from '../../src/platform/outbox/send.ts';
import { newId } from '../../src/platform/ids.ts';
import { seal } from '../../src/platform/sealing.ts';
import { runWrite } from '../../src/platform/write.ts';
import { clock, tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ok, type Json } from '../helpers/records.ts';
import { startSmtp, verifyDkim, type SmtpPeer } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import { freePort } from '../security/support/server-process.ts';

const app = await testApp({ env: { OUTBOUND_ALLOW_PRIVATE: 'true', RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
let smtp: SmtpPeer;
beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const DOMAIN = 'acme-mail.test';
const keys = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });

/** A tenant with a verified sending domain (its key sealed as the domains group seals it), a connection to the server and a mailbox. */
async function sender(mailbox: Json = {}, connection: Json = {}) {
  const t = await tenant(app, { sandbox: false });
  const at = Math.floor(Date.now() / 1000);
  await app.services.database.db.insertInto('sending_domains').values({
    org_id: t.org_id, mode: 'live', id: newId('dom'), domain: DOMAIN, description: null, status: 'verified', dkim_selector: 'rds1',
    dkim_public_key: 'unused', dkim_private_key: seal(app.services.secret, keys.privateKey), records: '[]', verified_at: at, last_checked_at: at, created_at: at, updated_at: at,
  }).execute();
  const conn = await ok(t.live.post('/v1/connections', { kind: 'email', provider: 'smtp', settings: { smtp: { host: '127.0.0.1', port: smtp.port, secure: false } }, credentials: { username: 'ada', password: 'right-password' }, ...connection }), 201);
  const box = await ok(t.live.post('/v1/mailboxes', { email: `ada-${randomUUID().slice(0, 8)}@${DOMAIN}`, display_name: 'Ada Lovelace', connection_id: conn.id, ...mailbox }), 201);
  return { ...t, connection: conn, mailbox: box };
}

/** Queues a message as the service's own writes do (a sequence step, a reply). */
const queue = (orgId: string, message: Partial<OutgoingEmail> & { to: string[] }, mode: 'live' | 'test' = 'live') =>
  runWrite(app.services.database, { orgId, mode }, (w) => queueEmail(w, `test:${randomUUID()}`, { from: `ada@${DOMAIN}`, subject: 'Hello', text: 'Hi there', ...message }));

const outbox = (c: Client, id: string) => ok(c.get(`/v1/outbox/${id}`));
const settled = (c: Client, id: string, status = 'sent') => waitFor(() => outbox(c, id), (m) => m.status === status, 60_000, 100);
const recipient = () => `grace-${randomUUID().slice(0, 8)}@example.org`;

describe('mailboxes over SMTP', () => {
  it('the test route sends one message now, signed, with the mailbox\'s name, and records it in the outbox', async () => {
    const t = await sender();
    const to = recipient();
    const result = await ok(t.live.post(`/v1/mailboxes/${t.mailbox.id}/test`, { to }));
    expect(result).toEqual({ ok: true, response: expect.stringMatching(/^250 2\.0\.0 Ok: queued as/), message_id: expect.stringMatching(new RegExp(`^<[0-9a-f]{40}@${DOMAIN}>$`)), outbox_message_id: expect.stringMatching(/^msg_/) });
    expect(smtp.count(result.message_id)).toBe(1);
    const got = smtp.received.find((r) => r.messageId === result.message_id)!;
    expect(got.to).toEqual([to]);
    expect(got.raw).toMatch(new RegExp(`^From: Ada Lovelace <${t.mailbox.email}>`, 'm'));
    expect(verifyDkim(got.raw, keys.publicKey)).toMatchObject({ valid: true, domain: DOMAIN, selector: 'rds1' });
    expect(await outbox(t.live, result.outbox_message_id)).toMatchObject({
      status: 'sent', provider: 'smtp', connection_id: t.connection.id, mailbox_id: t.mailbox.id, record_type: 'mailbox', record_id: t.mailbox.id, attempts: 1, message_id: result.message_id,
    });
    // The guard job left with it finds the message sent and sends nothing more.
    await clock.advance(11 * 60);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(smtp.count(result.message_id)).toBe(1);
    expect((await ok(t.live.get(`/v1/mailboxes/${t.mailbox.id}`))).allowance).toEqual({ today: 100, this_hour: 100, remaining_today: 99, remaining_this_hour: 99 });
  });

  it('the send job sends a mailbox\'s message once through its connection, signed', async () => {
    const t = await sender();
    const queued = await queue(t.org_id, { from: t.mailbox.email, to: [recipient()], mailboxId: t.mailbox.id });
    const sent = await settled(t.live, queued.id);
    expect(sent).toMatchObject({ provider: 'smtp', connection_id: t.connection.id, attempts: 1, from_address: t.mailbox.email });
    expect(smtp.count(queued.message_id)).toBe(1);
    const got = smtp.received.find((r) => r.messageId === queued.message_id)!;
    expect(got.raw).toMatch(/^From: Ada Lovelace </m);
    expect(verifyDkim(got.raw, keys.publicKey).valid).toBe(true);
    // A message from a domain that is not verified is sent unsigned.
    const other = await queue(t.org_id, { from: 'ada@unverified.test', to: [recipient()], connectionId: t.connection.id });
    await settled(t.live, other.id);
    expect(smtp.received.find((r) => r.messageId === other.message_id)!.raw).not.toMatch(/^DKIM-Signature:/im);
  });

  it('a 550 fails the message with the server\'s reply and is never retried', async () => {
    const t = await sender();
    const to = recipient();
    smtp.refuse.add(to);
    const queued = await queue(t.org_id, { from: t.mailbox.email, to: [to], mailboxId: t.mailbox.id });
    const failed = await settled(t.live, queued.id, 'failed');
    expect(failed.error).toMatch(/550 5\.1\.1 No such user here/);
    expect(failed.provider_answer.response).toMatch(/550/);
    expect(failed.attempts).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await outbox(t.live, queued.id)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(smtp.count(queued.message_id)).toBe(0);
  });

  it('a 451 is retried until the message is sent, once', async () => {
    const t = await sender();
    const to = recipient();
    smtp.deferNext.set(to, 1);
    const queued = await queue(t.org_id, { from: t.mailbox.email, to: [to], mailboxId: t.mailbox.id });
    const sent = await settled(t.live, queued.id);
    expect(sent.attempts).toBe(2);
    expect(smtp.count(queued.message_id)).toBe(1);
    expect(smtp.deferNext.get(to)).toBe(0);
  });

  it('a campaign\'s message whose recipient is suppressed while the server defers it is never sent, and its credit goes back', async () => {
    const t = await sender();
    const to = recipient();
    smtp.deferNext.set(to, 1000);
    const list = await ok(t.live.post('/v1/lists', { name: 'Deferred', type: 'contacts' }), 201);
    await ok(t.live.post('/v1/contacts', { list_id: list.id, first_name: 'Grace', work_email: to }), 201);
    const anyTime = { timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start_hour: 0, end_hour: 24 };
    const campaign = await ok(t.live.post('/v1/campaigns', { name: 'Deferred', list_id: list.id, mailbox_ids: [t.mailbox.id], steps: [{ channel: 'email', subject: 'Hello', body: 'Hi' }], schedule: anyTime }), 201);
    const { sequence_id } = await ok(t.live.post(`/v1/campaigns/${campaign.id}/launch`, { force: true }));
    // Queued and paid for, then deferred by the server (451) and waiting to be tried again.
    const [deferred] = await waitFor(async () => (await ok(t.live.get(`/v1/outbox?record_id=${sequence_id}`))) as unknown as Json[], (m) => m.length === 1 && m[0].attempts >= 1, 60_000, 100);
    await ok(t.live.post('/v1/suppressions', { channel: 'email', address: to }), 201);
    const suppressed = await settled(t.live, deferred.id, 'suppressed');
    expect(suppressed.error).toBe(`${to} is suppressed (manual)`);
    expect(smtp.count(deferred.message_id)).toBe(0);
    const ledger = async (type: string) => (await ok(t.live.get(`/v1/usage/transactions?type=${type}`))) as unknown as Json[];
    expect(await ledger('debit')).toMatchObject([{ amount: 1, resource_id: campaign.id }]);
    const [refund] = await waitFor(() => ledger('refund'), (r) => r.length === 1);
    expect(refund).toMatchObject({ amount: 1, operation: 'campaign.send', resource_id: campaign.id, description: expect.stringContaining(deferred.id) });
    const [failed] = (await ok(t.live.get('/v1/events?type=message.failed'))) as unknown as Json[];
    expect(failed.previous_attributes).toEqual({ status: 'queued', error: expect.stringContaining('451') });
  });

  it('a server that refuses connections is retried until it answers, and the message is sent once', async () => {
    const port = await freePort();
    const t = await sender({}, { settings: { smtp: { host: '127.0.0.1', port, secure: false } } });
    const queued = await queue(t.org_id, { from: t.mailbox.email, to: [recipient()], mailboxId: t.mailbox.id });
    const waiting = await waitFor(() => outbox(t.live, queued.id), (m) => m.error !== null, 60_000, 100);
    expect(waiting).toMatchObject({ status: 'queued', error: expect.stringMatching(/could not take the message now/) });
    const late = await startSmtp({ port });
    try {
      await settled(t.live, queued.id);
      expect(late.count(queued.message_id)).toBe(1);
    } finally {
      await late.close();
    }
  });

  it('the test route reports a refused login, and the message ends failed', async () => {
    const t = await sender({}, { credentials: { username: 'ada', password: 'wrong-password' } });
    const result = await ok(t.live.post(`/v1/mailboxes/${t.mailbox.id}/test`, {}));
    expect(result).toMatchObject({ ok: false, response: expect.stringMatching(/535 5\.7\.8 Authentication credentials invalid/) });
    expect(await outbox(t.live, result.outbox_message_id)).toMatchObject({ status: 'failed', error: expect.stringMatching(/535/) });
    expect(smtp.count(result.message_id)).toBe(0);
  });

  it('a mailbox never sends past its hourly limit: the rest wait, and go when the hour has passed', async () => {
    const t = await sender({ hourly_limit: 3 });
    const queued = [];
    for (let i = 0; i < 5; i++) queued.push(await queue(t.org_id, { from: t.mailbox.email, to: [recipient()], mailboxId: t.mailbox.id }));
    await waitFor(async () => (await ok(t.live.get(`/v1/outbox?mailbox_id=${t.mailbox.id}&status=sent`))).length, (n) => n === 3, 60_000, 100);
    // Time for a fourth to slip through, if it could.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const page = await ok(t.live.get(`/v1/outbox?mailbox_id=${t.mailbox.id}`));
    expect(page.map((m: Json) => m.status).sort()).toEqual(['queued', 'queued', 'sent', 'sent', 'sent']);
    expect(queued.filter((q) => smtp.count(q.message_id) === 1)).toHaveLength(3);
    expect((await ok(t.live.get(`/v1/mailboxes/${t.mailbox.id}`))).allowance).toMatchObject({ this_hour: 3, remaining_this_hour: 0, remaining_today: 97 });
    // A test at the limit is refused, naming when the mailbox has room again.
    await fails(t.live.post(`/v1/mailboxes/${t.mailbox.id}/test`, {}), 409);
    // Waiting is no failed attempt: the jobs are not used up however long they wait.
    const jobs = await app.services.database.db.selectFrom('jobs').select(['attempts', 'status']).where('org_id', '=', t.org_id).where('kind', '=', 'outbox.send').where('status', '!=', 'succeeded').execute();
    expect(jobs.map((j) => Number(j.attempts))).toEqual([0, 0]);
    // A job whose last attempt finds the mailbox full (after transient failures) leaves a job keyed
    // by its message to wait for the slot: it does not die.
    const db = app.services.database.db;
    const last = await db.selectFrom('jobs').select(['id', 'payload']).where('org_id', '=', t.org_id).where('kind', '=', 'outbox.send').where('status', '=', 'failed').executeTakeFirstOrThrow();
    await db.updateTable('jobs').set({ attempts: 7, run_at: 0 }).where('org_id', '=', t.org_id).where('mode', '=', 'live').where('id', '=', last.id).execute();
    await waitFor(() => db.selectFrom('jobs').select('status').where('org_id', '=', t.org_id).where('mode', '=', 'live').where('id', '=', last.id).executeTakeFirstOrThrow(), (j) => j.status === 'succeeded', 60_000, 100);
    const messageId = (JSON.parse(last.payload) as { id: string }).id;
    const waiting = await db.selectFrom('jobs').select(['status', 'schedule_key']).where('org_id', '=', t.org_id).where('schedule_key', '=', `outbox.send:${messageId}`).execute();
    expect(waiting).toEqual([{ status: 'queued', schedule_key: `outbox.send:${messageId}` }]);
    expect((await outbox(t.live, messageId)).status).toBe('queued');
    await clock.advance(3601);
    await waitFor(async () => (await ok(t.live.get(`/v1/outbox?mailbox_id=${t.mailbox.id}&status=sent`))).length, (n) => n === 5, 60_000, 100);
    for (const q of queued) expect(smtp.count(q.message_id)).toBe(1);
  });

  it('a live message with no connection and no EMAIL_SMTP_URL fails provider_not_configured', async () => {
    const t = await tenant(app, { sandbox: false });
    const box = await ok(t.live.post('/v1/mailboxes', { email: `ada@${DOMAIN}` }), 201);
    const refused = (await t.live.post(`/v1/mailboxes/${box.id}/test`, {})).json();
    expect(refused).toMatchObject({ type: 'provider_not_configured', detail: expect.stringMatching(/POST \/v1\/connections.*EMAIL_SMTP_URL/) });
    const queued = await queue(t.org_id, { from: box.email, to: [recipient()], mailboxId: box.id });
    const failed = await settled(t.live, queued.id, 'failed');
    expect(failed.error).toBe(refused.detail);
  });

  it('a test-mode key goes to the local driver even with a real connection: nothing reaches the server', async () => {
    const t = await tenant(app, { sandbox: false });
    const conn = await ok(t.test.post('/v1/connections', { kind: 'email', provider: 'smtp', settings: { smtp: { host: '127.0.0.1', port: smtp.port } }, credentials: { username: 'ada', password: 'right-password' } }), 201);
    const box = await ok(t.test.post('/v1/mailboxes', { email: `ada-${randomUUID().slice(0, 8)}@${DOMAIN}`, connection_id: conn.id }), 201);
    const result = await ok(t.test.post(`/v1/mailboxes/${box.id}/test`, {}));
    expect(result).toMatchObject({ ok: true, response: expect.stringMatching(/local driver/) });
    const queued = await queue(t.org_id, { from: box.email, to: [recipient()], mailboxId: box.id }, 'test');
    // The local driver knows the outcome at once: delivered.
    expect(await settled(t.test, queued.id, 'delivered')).toMatchObject({ provider: 'local' });
    expect(await outbox(t.test, result.outbox_message_id)).toMatchObject({ provider: 'local', status: 'delivered' });
    expect(smtp.received.filter((r) => r.from === box.email)).toEqual([]);
  });
});
