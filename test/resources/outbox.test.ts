// The outbox, its send job and the local drivers through HTTP: messages queued in a write are sent by
// the job (test mode: the local driver, whose `bounce@` addresses bounce and suppress), keyed by what
// they send (one message, one Message-ID), marketing mail's one-click unsubscribe, filters, simulated
// outcomes, live mode with no provider configured, a send interrupted during the provider's call
// failed rather than sent again, and texts (the SMS kind) under the same rules.
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { queueEmail, queueSms, type OutgoingEmail, type OutgoingSms } from '../../src/platform/outbox/send.ts';
import { resolveProvider } from '../../src/platform/providers/registry.ts';
import { smsKind } from '../../src/platform/providers/sms/sms.ts';
import { runWrite } from '../../src/platform/write.ts';
import { INTERRUPTED } from '../../src/resources/outbox/outbox.jobs.ts';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ids, ok, type Json } from '../helpers/records.ts';
import { waitFor } from '../helpers/wait.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', EMAIL_SMTP_URL: undefined } });
afterAll(() => app.close());

type Tenant = Awaited<ReturnType<typeof tenant>>;
const noSandbox = { sandbox: false };
const email = (to: string, more: Partial<OutgoingEmail> = {}): OutgoingEmail => ({ from: 'ada@example.com', to: [to], subject: 'Hello', text: 'Hello there', ...more });
const queue = (t: Tenant, mode: 'test' | 'live', message: OutgoingEmail, key = `k:${randomUUID()}`) =>
  runWrite(app.services.database, { orgId: t.org_id, mode }, (w) => queueEmail(w, key, message));
const text = (t: Tenant, mode: 'test' | 'live', message: OutgoingSms, key = `k:${randomUUID()}`) =>
  runWrite(app.services.database, { orgId: t.org_id, mode }, (w) => queueSms(w, key, message));
const settled = (c: Client, id: string) => waitFor(() => ok(c.get(`/v1/outbox/${id}`)), (m) => m.status !== 'queued', 30_000);
const eventsOf = async (c: Client, type: string) => (await ok(c.get(`/v1/events?type=${type}`))) as Json[];

describe('outbox and the local driver', () => {
  it('sends a test-mode message through the local driver: delivered, one message per send key', async () => {
    const t = await tenant(app, noSandbox);
    const key = `k:${randomUUID()}`;
    const first = await queue(t, 'test', email('grace@example.org'), key);
    const second = await queue(t, 'test', email('other@example.org', { subject: 'Changed' }), key);
    // The same key answers the first message, unchanged, and says it made nothing.
    expect(second).toEqual({ ...first, created: false });
    expect(first.created).toBe(true);
    expect(first.message_id).toMatch(/^<[0-9a-f]{40}@example\.com>$/);
    const sent = await settled(t.test, first.id);
    expect(sent).toMatchObject({
      id: first.id, channel: 'email', status: 'delivered', provider: 'local', message_id: first.message_id, to_addresses: ['grace@example.org'],
      subject: 'Hello', attempts: 1, sent_at: expect.any(Number), delivered_at: expect.any(Number), bounced_at: null,
    });
    expect(ids(await ok(t.test.get('/v1/outbox')) as Json[])).toEqual([first.id]);
    expect(await ok(t.live.get('/v1/outbox'))).toEqual([]);
    expect((await eventsOf(t.test, 'message.delivered')).length).toBe(1);
    await fails(t.test.get('/v1/outbox/msg_nope'), 404);
    await fails(t.live.get(`/v1/outbox/${first.id}`), 404);
    const other = await tenant(app, noSandbox);
    await fails(other.test.get(`/v1/outbox/${first.id}`), 404);
  });

  it('bounces bounce@ and +bounce addresses, suppressing them; a suppressed address is never sent to', async () => {
    const t = await tenant(app, noSandbox);
    for (const to of ['bounce@example.org', 'ada+bounce@example.org']) {
      const q = await queue(t, 'test', email(to));
      expect(await settled(t.test, q.id)).toMatchObject({ status: 'bounced', provider: 'local', bounced_at: expect.any(Number), error: expect.stringMatching(/^550/) });
    }
    const suppressions = await ok(t.test.get('/v1/suppressions')) as Json[];
    expect(suppressions.map((s) => [s.address, s.reason]).sort()).toEqual([['ada+bounce@example.org', 'hard_bounce'], ['bounce@example.org', 'hard_bounce']]);
    expect((await eventsOf(t.test, 'message.bounced')).length).toBe(2);
    const again = await queue(t, 'test', email('Bounce@Example.org'));
    expect(again.status).toBe('suppressed');
    const read = await ok(t.test.get(`/v1/outbox/${again.id}`));
    expect(read).toMatchObject({ status: 'suppressed', sent_at: null, attempts: 0, error: 'bounce@example.org is suppressed (hard_bounce)' });
  });

  it('gives marketing mail one-click unsubscribe headers with a working link', async () => {
    const t = await tenant(app, noSandbox);
    const q = await queue(t, 'test', email('grace@example.org', { marketing: true }));
    const plain = await queue(t, 'test', email('grace@example.org'));
    const sent = await settled(t.test, q.id);
    expect(sent.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    const url = /^<([^>]+)>$/.exec(sent.headers['List-Unsubscribe'])![1];
    const path = new URL(url).pathname;
    expect(path).toMatch(/^\/public\/unsubscribe\/[\w-]+$/);
    expect((await ok(t.test.get(`/v1/outbox/${plain.id}`))).headers).not.toHaveProperty('List-Unsubscribe');
    const res = await app.inject({ method: 'POST', url: path, payload: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.statusCode).toBe(200);
    expect((await ok(t.test.get('/v1/suppressions')) as Json[]).map((s) => [s.address, s.reason])).toEqual([['grace@example.org', 'unsubscribed']]);
  });

  it('filters by channel, status, record, contact and creation time', async () => {
    const t = await tenant(app, noSandbox);
    const a = await queue(t, 'test', email('a@example.org', { record: { type: 'deal', id: 'deal_one' }, contactId: 'con_one' }));
    const b = await queue(t, 'test', email('bounce@example.org'));
    await settled(t.test, a.id);
    await settled(t.test, b.id);
    const list = async (query: string) => ids(await ok(t.test.get(`/v1/outbox?${query}`)) as Json[]);
    expect(await list('channel=email')).toEqual([b.id, a.id]);
    expect(await list('status=bounced')).toEqual([b.id]);
    expect(await list('status=delivered')).toEqual([a.id]);
    expect(await list('record_id=deal_one')).toEqual([a.id]);
    expect(await list('contact_id=con_one')).toEqual([a.id]);
    const created = (await ok(t.test.get(`/v1/outbox/${a.id}`))).created_at as number;
    expect(await list(`created_after=${created}`)).toEqual(expect.arrayContaining([a.id]));
    expect(await list(`created_after=${created + 86_400}`)).toEqual([]);
    await fails(t.test.get('/v1/outbox?status=lost'), 400);
  });

  it('simulates outcomes of a sent message in test mode, each once', async () => {
    const t = await tenant(app, noSandbox);
    const q = await queue(t, 'test', email('grace@example.org'));
    await settled(t.test, q.id);
    const simulate = (id: string, body: object, c = t.test) => c.post(`/v1/outbox/${id}/simulate`, body);
    const opened = await ok(simulate(q.id, { outcome: 'opened' }));
    expect(opened).toMatchObject({ status: 'delivered', opened_at: expect.any(Number) });
    expect(await ok(simulate(q.id, { outcome: 'opened' }))).toEqual(opened);
    expect((await eventsOf(t.test, 'message.opened')).length).toBe(1);
    expect(await ok(simulate(q.id, { outcome: 'clicked' }))).toMatchObject({ clicked_at: expect.any(Number) });
    expect(await ok(simulate(q.id, { outcome: 'delivered' }))).toMatchObject({ status: 'delivered' });
    expect((await eventsOf(t.test, 'message.delivered')).length).toBe(1);
    // An automatic reply is its event only: the message was not answered by a person.
    expect(await ok(simulate(q.id, { outcome: 'replied', is_auto_reply: true }))).toMatchObject({ replied_at: null });
    expect(JSON.stringify(await eventsOf(t.test, 'reply.received'))).toContain('"is_auto_reply":true');
    expect(await ok(simulate(q.id, { outcome: 'replied' }))).toMatchObject({ replied_at: expect.any(Number) });
    await ok(simulate(q.id, { outcome: 'replied' }));
    const replies = await eventsOf(t.test, 'reply.received');
    expect(replies.length).toBe(2);
    expect(JSON.stringify(replies[0])).toContain('"is_auto_reply":false');

    const soft = await queue(t, 'test', email('soft@example.org'));
    await settled(t.test, soft.id);
    expect(await ok(simulate(soft.id, { outcome: 'bounced', hard: false, reason: '452 Mailbox full' }))).toMatchObject({ status: 'bounced', error: '452 Mailbox full' });
    expect(await ok(t.test.get('/v1/suppressions'))).toEqual([]);
    const hard = await queue(t, 'test', email('hard@example.org'));
    await settled(t.test, hard.id);
    await ok(simulate(hard.id, { outcome: 'bounced' }));
    expect((await ok(t.test.get('/v1/suppressions')) as Json[]).map((s) => [s.address, s.reason])).toEqual([['hard@example.org', 'hard_bounce']]);

    const never = await queue(t, 'test', email('hard@example.org'));
    expect(never.status).toBe('suppressed');
    await fails(simulate(never.id, { outcome: 'delivered' }), 409);
    await fails(simulate(q.id, { outcome: 'exploded' }), 400);
    await fails(simulate('msg_nope', { outcome: 'delivered' }), 404);
    // A test helper: a live key is refused before the route runs, whatever message it names.
    const refused = await fails(simulate(q.id, { outcome: 'delivered' }, t.live), 403, 'This route simulates what a provider or a person does next, so it takes a test key (svc_test_…): in live mode that comes from the outside world');
    expect(await fails(simulate('msg_nope', { outcome: 'delivered' }, t.live), 403)).toEqual(refused);
  });

  it('in live mode with no connection and no EMAIL_SMTP_URL fails the message, naming both', async () => {
    const t = await tenant(app, noSandbox);
    const q = await queue(t, 'live', email('grace@example.org'));
    const failed = await settled(t.live, q.id);
    expect(failed).toMatchObject({ status: 'failed', sent_at: null });
    expect(failed.error).toContain('POST /v1/connections');
    expect(failed.error).toContain('EMAIL_SMTP_URL');
    expect(JSON.stringify(await eventsOf(t.live, 'message.failed'))).toContain(q.id);
    // A live connection to the local driver: delivered, recorded with the connection.
    const conn = await ok(t.live.post('/v1/connections', { kind: 'email', provider: 'local' }), 201);
    const next = await queue(t, 'live', email('grace@example.org'));
    expect(await settled(t.live, next.id)).toMatchObject({ status: 'delivered', provider: 'local', connection_id: conn.id });
  });

  it('fails a message whose attempt was begun and never finished, and never calls the driver again', async () => {
    const t = await tenant(app, noSandbox);
    // The attempt committed with the row, as if the process had stopped during the provider's call.
    const q = await runWrite(app.services.database, { orgId: t.org_id, mode: 'test' }, async (w) => {
      const queued = await queueEmail(w, `k:${randomUUID()}`, email('grace@example.org'));
      await w.tx.updateTable('outbox_messages').set({ attempted_at: w.now, attempts: 1 }).where('id', '=', queued.id).execute();
      return queued;
    });
    const failed = await settled(t.test, q.id);
    expect(failed).toMatchObject({ status: 'failed', error: INTERRUPTED, attempts: 1, sent_at: null, delivered_at: null });
    expect(await eventsOf(t.test, 'message.sent')).toEqual([]);
    expect((await eventsOf(t.test, 'message.failed')).length).toBe(1);
  });

  it('sends a text through the local SMS driver once per send key; refused, suppressed and interrupted texts are not sent', async () => {
    const t = await tenant(app, noSandbox);
    const key = `k:${randomUUID()}`;
    const first = await text(t, 'test', { to: '+442079460123', text: 'Hello there' }, key);
    expect(await text(t, 'test', { to: '+442079460999', text: 'Changed' }, key)).toEqual({ ...first, created: false });
    expect(first.message_id).toMatch(/^sms_[0-9a-f]{40}$/);
    expect(await settled(t.test, first.id)).toMatchObject({
      channel: 'sms', status: 'delivered', provider: 'local', from_address: '+12015550100', to_addresses: ['+442079460123'], subject: null,
      text: 'Hello there', attempts: 1, delivered_at: expect.any(Number), provider_answer: { id: expect.stringMatching(/^SMlocal/) },
    });
    expect(ids(await ok(t.test.get('/v1/outbox?channel=sms')) as Json[])).toEqual([first.id]);
    // A number the gateway cannot text is refused for good; the local driver does so for +15005550009.
    const refused = await text(t, 'test', { to: '+15005550009', text: 'x' });
    expect(await settled(t.test, refused.id)).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringContaining('21614'), provider_answer: { response: expect.stringMatching(/^21614/) } });
    // A suppression on sms stops texts; one of e-mail does not.
    await ok(t.test.post('/v1/suppressions', { channel: 'sms', address: '+442079460777' }), 201);
    const suppressed = await text(t, 'test', { to: '+442079460777', text: 'x' });
    expect(await ok(t.test.get(`/v1/outbox/${suppressed.id}`))).toMatchObject({ status: 'suppressed', attempts: 0, error: '+442079460777 is suppressed (manual)' });
    // A bounce reported for a text suppresses the number on sms.
    await ok(t.test.post(`/v1/outbox/${first.id}/simulate`, { outcome: 'bounced', reason: '30003 Unreachable' }));
    expect((await ok(t.test.get('/v1/suppressions?address=%2B442079460123')) as Json[]).map((x) => [x.channel, x.reason])).toEqual([['sms', 'hard_bounce']]);
    const interrupted = await runWrite(app.services.database, { orgId: t.org_id, mode: 'test' }, async (w) => {
      const queued = await queueSms(w, `k:${randomUUID()}`, { to: '+442079460124', text: 'x' });
      await w.tx.updateTable('outbox_messages').set({ attempted_at: w.now, attempts: 1 }).where('id', '=', queued.id).execute();
      return queued;
    });
    expect(await settled(t.test, interrupted.id)).toMatchObject({ status: 'failed', error: INTERRUPTED, attempts: 1, sent_at: null });
  });

  it('fails a live text with no sms connection and no SMS_PROVIDER, naming both; SMS_PROVIDER=local is the operator\'s default', async () => {
    const t = await tenant(app, noSandbox);
    const q = await text(t, 'live', { to: '+442079460123', text: 'Hello' });
    expect(await settled(t.live, q.id)).toMatchObject({ status: 'failed', sent_at: null, error: 'No SMS provider is configured: create a connection (POST /v1/connections with "kind": "sms") or set SMS_PROVIDER' });
    const scope = { orgId: t.org_id, mode: 'live' as const };
    const resolved = await resolveProvider(smsKind, { db: app.services.database.db, scope, secret: app.services.secret, config: loadConfig({ SMS_PROVIDER: 'local' }) });
    expect(resolved).toMatchObject({ provider: 'local', connectionId: null });
    expect(() => loadConfig({ SMS_PROVIDER: 'pigeon' })).toThrow('SMS_PROVIDER must be local, or unset; got "pigeon"');
  });
});
