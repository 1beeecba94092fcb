// Texts through a Twilio connection, against a local server written from Twilio's documentation
// (test/helpers/twilio-server.ts), over real sockets both ways: a live sequence's SMS step is sent
// with the connection's credentials and number, a refusal for good fails the text, a 5xx sends
// nothing and is tried again, and Twilio's signed status callbacks record what became of each text,
// forward only (late, repeated and out-of-order callbacks change nothing; a tampered one is 401).
import { describe, expect, it } from 'vitest';
import { clock, tenant, type Client } from '../helpers/app.ts';
import { fails, ok, type Json } from '../helpers/records.ts';
import { appWithTwilio } from '../helpers/twilio-server.ts';
import { waitFor } from '../helpers/wait.ts';

const { app, twilio, publicUrl: PUBLIC_URL } = await appWithTwilio();

const at = (iso: string) => Date.parse(iso) / 1000;
const get = (c: Client, path: string) => ok(c.get(path));
const outboxOf = async (c: Client, id: string) => (await get(c, `/v1/outbox?record_id=${id}&limit=100`)) as unknown as Json[];
const byNumber = async (c: Client, id: string) => Object.fromEntries((await outboxOf(c, id)).map((m) => [m.to_addresses[0] as string, m]));

async function liveSequence(phones: string[]) {
  const t = await tenant(app, { sandbox: false });
  const c = t.live;
  const connection = await ok(c.post('/v1/connections', {
    kind: 'sms', provider: 'twilio', name: 'Twilio',
    settings: { account_sid: twilio.accountSid, from: '+14155550100', api_url: twilio.url }, credentials: { auth_token: twilio.authToken },
  }), 201);
  const list = await ok(c.post('/v1/lists', { name: 'Texted', type: 'contacts' }), 201);
  for (const [i, phone] of phones.entries()) await ok(c.post('/v1/contacts', { list_id: list.id, first_name: `P${i}`, phone }), 201);
  const seq = await ok(c.post('/v1/sequences', { name: 'Texts', associated_list_id: list.id }), 201);
  await ok(c.post(`/v1/sequences/${seq.id}/steps`, { step_type: 'SMS', body: 'Hi {{ contact.first_name }}' }), 201);
  return { c, connection, seq };
}

describe('the Twilio SMS adapter', () => {
  it('sends a live step with the connection\'s credentials and number; a refusal fails the text, a 503 sends nothing and is retried', async () => {
    clock.set(at('2027-05-10T10:00:00Z')); // a Monday, in the window
    twilio.failNext('+442079460111', 503);
    const s = await liveSequence(['+44 20 7946 0123', '+1 500 555 0009', '+44 20 7946 0111']);
    await ok(s.c.post(`/v1/sequences/${s.seq.id}/run`));
    const messages = await waitFor(() => byNumber(s.c, s.seq.id), (m) => m['+442079460123']?.status === 'sent' && m['+15005550009']?.status === 'failed' && m['+442079460111']?.error != null);
    const sent = messages['+442079460123'];
    const text = twilio.texts.find((x) => x.to === '+442079460123')!;
    expect(text).toMatchObject({ from: '+14155550100', body: 'Hi P0', authorization: `Basic ${Buffer.from(`${twilio.accountSid}:${twilio.authToken}`).toString('base64')}` });
    expect(text.statusCallback.startsWith(`${PUBLIC_URL}/public/sms/twilio/`)).toBe(true);
    expect(sent).toMatchObject({ channel: 'sms', provider: 'twilio', connection_id: s.connection.id, from_address: '+14155550100', provider_answer: { id: text.sid } });
    expect(messages['+15005550009'].error).toContain('21614');
    // The 503 took nothing: the attempt is undone, the message waits for its retry.
    expect(messages['+442079460111']).toMatchObject({ status: 'queued', attempts: 1, error: expect.stringContaining('Twilio answered 20500') });
    expect(twilio.texts.filter((x) => x.to === '+442079460111')).toEqual([]);
    expect(JSON.stringify(await get(s.c, `/v1/connections/${s.connection.id}`))).not.toContain(twilio.authToken);
  });

  it('records what Twilio\'s signed status callbacks say, forward only; a tampered or made-up callback is refused', async () => {
    clock.set(at('2027-05-10T10:00:00Z'));
    const s = await liveSequence(['+44 20 7946 0201', '+44 20 7946 0202']);
    await ok(s.c.post(`/v1/sequences/${s.seq.id}/run`));
    await waitFor(() => byNumber(s.c, s.seq.id), (m) => m['+442079460201']?.status === 'sent' && m['+442079460202']?.status === 'sent');
    const [first, second] = ['+442079460201', '+442079460202'].map((n) => twilio.texts.find((x) => x.to === n)!);

    const answer = async (res: Response) => ({ status: res.status, body: await res.json() as Json });
    expect(await answer(await twilio.callback(first, 'sent'))).toEqual({ status: 200, body: { data: { status: 'unchanged' } } });
    expect(await answer(await twilio.callback(first, 'delivered'))).toEqual({ status: 200, body: { data: { status: 'recorded' } } });
    // Repeated and late: nothing moves back.
    expect((await answer(await twilio.callback(first, 'delivered'))).body).toEqual({ data: { status: 'unchanged' } });
    expect((await answer(await twilio.callback(first, 'sending'))).body).toEqual({ data: { status: 'unchanged' } });
    // A number that does not exist: bounced, and suppressed on texts.
    expect((await answer(await twilio.callback(second, 'undelivered', { ErrorCode: '30005' }))).body).toEqual({ data: { status: 'recorded' } });
    const messages = await byNumber(s.c, s.seq.id);
    expect(messages['+442079460201']).toMatchObject({ status: 'delivered', delivered_at: expect.any(Number) });
    expect(messages['+442079460202']).toMatchObject({ status: 'bounced', error: 'Twilio: undelivered (error 30005)' });
    const suppressions = (await get(s.c, '/v1/suppressions?channel=sms')) as unknown as Json[];
    expect(suppressions.map((x) => [x.address, x.reason])).toEqual([['+442079460202', 'hard_bounce']]);
    const events = ((await get(s.c, '/v1/events?limit=100')) as unknown as Json[]).map((e) => e.type);
    expect(events.filter((e) => e === 'message.delivered')).toHaveLength(1);
    expect(events.filter((e) => e === 'message.bounced')).toHaveLength(1);

    // Signed with another token, or altered after signing: 401, nothing recorded.
    const tampered = await twilio.callback(second, 'failed', {}, true);
    expect(tampered.status).toBe(401);
    expect((await tampered.json() as Json).detail).toBeTruthy();
    const forged = await fetch(first.statusCallback.replace('/live/', '/test/'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'x' }, body: 'MessageSid=SM1&MessageStatus=delivered' });
    expect(forged.status).toBe(404);
    expect(((await forged.json()) as Json).detail).toBe('Callback URL not found');
    expect((await byNumber(s.c, s.seq.id))['+442079460202'].status).toBe('bounced');
  });

  it('takes the texts the number receives into the inbox: a reply marks the sent text replied, STOP suppresses the number', async () => {
    clock.set(at('2027-05-10T10:00:00Z'));
    const s = await liveSequence(['+44 20 7946 0301']);
    await ok(s.c.post(`/v1/sequences/${s.seq.id}/run`));
    await waitFor(() => byNumber(s.c, s.seq.id), (m) => m['+442079460301']?.status === 'sent');
    const { url } = await get(s.c, `/v1/connections/${s.connection.id}/sms-inbound-url`);
    expect(url.startsWith(`${PUBLIC_URL}/public/sms/twilio/`)).toBe(true);

    const reply = { sid: 'SM00000000000000000000000000000301', from: '+442079460301', to: '+14155550100', body: 'Sounds good, call me tomorrow' };
    const res = await twilio.inbound(url, reply);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/xml/);
    expect(await res.text()).toContain('<Response></Response>');
    expect((await twilio.inbound(url, reply)).status).toBe(200); // repeated: recorded once
    const threads = (await get(s.c, '/v1/inbox?channel=sms')) as unknown as Json[];
    expect(threads).toHaveLength(1);
    expect(threads[0]).toMatchObject({ channel: 'sms', from_address: '+442079460301', message_count: 1, sequence_id: s.seq.id });
    const sent = (await byNumber(s.c, s.seq.id))['+442079460301'];
    expect(sent.replied_at).toEqual(expect.any(Number));
    // Each text sent and received has its event beside the outbox's and the inbox's own.
    expect(((await get(s.c, '/v1/events?type=sms.sent')) as unknown as Json[]).map((e) => e.data.object.id)).toContain(sent.id);
    expect(((await get(s.c, '/v1/events?type=sms.received')) as unknown as Json[]).map((e) => e.data.object.thread_id)).toEqual([threads[0].id]);
    // Answered from the thread: a text to the number, from the connection's.
    await ok(s.c.post(`/v1/inbox/${threads[0].id}/reply`, { body: 'Will do, talk tomorrow' }), 201);
    await waitFor(async () => twilio.texts.filter((x) => x.to === '+442079460301'), (t) => t.length === 2);
    expect(twilio.texts.filter((x) => x.to === '+442079460301')[1]).toMatchObject({ from: '+14155550100', body: 'Will do, talk tomorrow' });
    await fails(s.c.post(`/v1/inbox/${threads[0].id}/reply`, { body: 'x', html: '<p>x</p>' }), 400);

    // An opt-out keyword from another number suppresses it on texts; a forged post changes nothing.
    expect((await twilio.inbound(url, { from: '+44 20 7946 0302', to: '+14155550100', body: ' stop ' })).status).toBe(200);
    const suppressions = (await get(s.c, '/v1/suppressions?channel=sms')) as unknown as Json[];
    expect(suppressions.map((x) => [x.address, x.reason])).toEqual([['+442079460302', 'unsubscribed']]);
    const forged = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'AAAA' }, body: 'MessageSid=SM1&From=%2B1&To=%2B2&Body=STOP' });
    expect(forged.status).toBe(401);
    expect(((await get(s.c, '/v1/inbox?channel=sms')) as unknown as Json[])).toHaveLength(2);
    await fails(s.c.get(`/v1/connections/conn_01JD8X4M6R2T9Q3V5W7Y8Z0A1B/sms-inbound-url`), 404, 'Connection not found');
  });

  it('checks a Twilio connection\'s settings and credentials when saved', async () => {
    const t = await tenant(app, { sandbox: false });
    const connection = (settings: Record<string, unknown>, credentials: Record<string, unknown> = { auth_token: twilio.authToken }) =>
      fails(t.live.post('/v1/connections', { kind: 'sms', provider: 'twilio', name: 'T', settings, credentials }), 422);
    expect((await connection({ account_sid: 'nope', from: '+14155550100' })).param).toBe('settings.account_sid');
    expect((await connection({ account_sid: twilio.accountSid, from: '0207 946 0000' })).param).toBe('settings.from');
    expect((await connection({ account_sid: twilio.accountSid, from: '+14155550100' }, { auth_token: 'short' })).param).toBe('credentials.auth_token');
  });
});
