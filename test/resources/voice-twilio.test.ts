// Calls through a Twilio telephony connection, against a local server written from Twilio's Voice
// documentation (test/helpers/twilio-server.ts), over real sockets both ways: a live session places
// each call with the connection's credentials, the session's number and TwiML that dials the agent;
// Twilio's signed status callbacks move each call forward only, whatever their order (duplicated,
// late, out of order: a thousand shuffled replays, the final state always the one Twilio ended the
// call with); a tampered callback is 401, a made-up URL 404; and a call whose callbacks stopped is
// reconciled by asking Twilio.
import { describe, expect, it } from 'vitest';
import { clock, tenant, type Client } from '../helpers/app.ts';
import { ok, walk, type Json } from '../helpers/records.ts';
import { appWithTwilio, type TwilioCall } from '../helpers/twilio-server.ts';
import { waitFor } from '../helpers/wait.ts';

const { app, twilio, publicUrl: PUBLIC_URL } = await appWithTwilio();

const at = (iso: string) => Date.parse(iso) / 1000;
const callsOf = (c: Client, sessionId: string) => walk(c, `/v1/voice/calls?session_id=${sessionId}`, 200);

async function liveSession(phones: string[], lines = 1) {
  const t = await tenant(app, { sandbox: false });
  const c = t.live;
  const connection = await ok(c.post('/v1/connections', {
    kind: 'telephony', provider: 'twilio', name: 'Twilio voice', settings: { account_sid: twilio.accountSid, api_url: twilio.url }, credentials: { auth_token: twilio.authToken },
  }), 201);
  const member = await ok(c.post('/v1/members', { name: 'Ada Agent', email: 'ada@example.com', timezone: 'Europe/London' }), 201);
  const agent = await ok(c.post('/v1/voice/agents', { member_id: member.id, status: 'available', phone: '+44 20 7946 0555' }), 201);
  const number = await ok(c.post('/v1/voice/numbers', { phone_number: '+14155550100', connection_id: connection.id }), 201);
  const list = await ok(c.post('/v1/lists', { name: 'Calls', type: 'contacts' }), 201);
  for (const [i, phone] of phones.entries()) await ok(c.post('/v1/contacts', { list_id: list.id, first_name: `P${i}`, phone, timezone: 'Europe/London' }), 201);
  const session = await ok(c.post('/v1/voice/dialer/sessions', { list_id: list.id, agent_id: agent.id, number_id: number.id, parallel_lines: lines }), 201);
  return { c, connection, agent, session };
}

/** The calls Twilio was asked to place to `to`, once there are `n`. */
const placedTo = (to: string, n = 1) => waitFor(async () => twilio.calls.filter((x) => x.to === to), (x) => x.length >= n);
const statusOf = async (res: Response) => ((await res.json()) as Json).data?.status as string;

describe('the Twilio telephony adapter', () => {
  it('places a live session\'s calls with the connection\'s credentials, and records the callbacks forward only', async () => {
    clock.set(at('2027-05-10T13:00:00Z'));
    const s = await liveSession(['+44 20 7946 0301', '+44 20 7946 0302']);
    await ok(s.c.patch(`/v1/voice/dialer/sessions/${s.session.id}`, { status: 'running' }));
    const [first] = await placedTo('+442079460301');
    expect(first).toMatchObject({ from: '+14155550100', machineDetection: 'Enable', events: ['initiated', 'ringing', 'answered', 'completed'] });
    expect(first.twiml).toBe('<Response><Dial callerId="+14155550100"><Number>+442079460555</Number></Dial></Response>');
    expect(first.statusCallback.startsWith(`${PUBLIC_URL}/public/voice/twilio/`)).toBe(true);
    const [call] = await waitFor(() => callsOf(s.c, s.session.id), (x) => x[0]?.provider_call_id === first.sid);
    expect(call).toMatchObject({ status: 'queued', provider: 'twilio', to_number: '+442079460301' });

    expect(await statusOf(await twilio.callStatus(first, 'initiated'))).toBe('unchanged');
    expect(await statusOf(await twilio.callStatus(first, 'ringing'))).toBe('recorded');
    expect(await statusOf(await twilio.callStatus(first, 'in-progress', { AnsweredBy: 'human' }))).toBe('recorded');
    expect(await ok(s.c.get(`/v1/voice/agents/${s.agent.id}`))).toMatchObject({ status: 'busy', current_call_id: call.id });
    // A tampered callback and a made-up URL change nothing.
    expect((await twilio.callStatus(first, 'busy', {}, true)).status).toBe(401);
    const madeUp = await fetch(first.statusCallback.replace(/\/[^/]+$/, '/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), { method: 'POST', body: 'CallSid=x&CallStatus=completed', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(madeUp.status).toBe(404);
    expect(await statusOf(await twilio.callStatus(first, 'completed', { AnsweredBy: 'human', CallDuration: '42' }))).toBe('recorded');
    // Late and repeated: nothing moves back.
    expect(await statusOf(await twilio.callStatus(first, 'ringing'))).toBe('unchanged');
    expect(await statusOf(await twilio.callStatus(first, 'no-answer'))).toBe('unchanged');
    expect(await ok(s.c.get(`/v1/voice/calls/${call.id}`))).toMatchObject({ status: 'completed', duration: 42, voicemail: false });
    expect(await ok(s.c.get(`/v1/voice/agents/${s.agent.id}`))).toMatchObject({ status: 'available', current_call_id: null });
    // The line is free: the next contact is called; a machine answers it.
    const [second] = await placedTo('+442079460302');
    await twilio.callStatus(second, 'in-progress', { AnsweredBy: 'machine_start' });
    await twilio.callStatus(second, 'completed', { AnsweredBy: 'machine_start', CallDuration: '20' });
    const done = await waitFor(() => ok(s.c.get(`/v1/voice/dialer/sessions/${s.session.id}`)), (x) => x.status === 'completed');
    expect(done.status).toBe('completed');
    expect(await ok(s.c.get(`/v1/voice/dialer/sessions/${s.session.id}/stats`))).toMatchObject({ dialed: 2, connected: 1, voicemail: 1, average_talk_seconds: 42 });
  });

  it('ends every call in the state Twilio ended it with, whatever order its callbacks come in, duplicated and late', async () => {
    clock.set(at('2027-05-10T13:00:00Z'));
    const ORDERS = 1000;
    const phones = Array.from({ length: ORDERS }, (_, i) => `+4420794${String(i).padStart(5, '0')}`);
    const s = await liveSession(phones);
    // Each call's story as Twilio tells it; its last state is final.
    const stories: string[][] = [
      ['initiated', 'ringing', 'in-progress', 'completed'], ['initiated', 'ringing', 'busy'], ['initiated', 'ringing', 'no-answer'],
      ['initiated', 'failed'], ['initiated', 'ringing', 'canceled'],
    ];
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const expected = new Map<string, string>();
    await ok(s.c.post(`/v1/voice/dialer/sessions/${s.session.id}/resume`));
    for (let i = 0; i < ORDERS; i++) {
      const [call] = await placedTo(phones[i].replace(/\s/g, '')) as TwilioCall[];
      const story = stories[Math.floor(random() * stories.length)];
      // Shuffled, with one callback sent twice.
      const sent = [...story, story[Math.floor(random() * story.length)]];
      for (let j = sent.length - 1; j > 0; j--) {
        const k = Math.floor(random() * (j + 1));
        [sent[j], sent[k]] = [sent[k], sent[j]];
      }
      for (const state of sent) {
        const res = await twilio.callStatus(call, state, state === 'completed' ? { CallDuration: '30', AnsweredBy: 'human' } : state === 'in-progress' ? { AnsweredBy: 'human' } : {});
        expect(res.status).toBe(200);
      }
      expected.set(call.sid, story.at(-1)!);
    }
    await waitFor(() => ok(s.c.get(`/v1/voice/dialer/sessions/${s.session.id}`)), (x) => x.status === 'completed', 120_000);
    const calls = await callsOf(s.c, s.session.id);
    expect(calls).toHaveLength(ORDERS);
    for (const call of calls) expect(call.status, call.provider_call_id).toBe(expected.get(call.provider_call_id));
  }, 600_000);

  it('asks Twilio about a call whose callbacks stopped, and records what it says', async () => {
    clock.set(at('2027-05-11T13:00:00Z'));
    const s = await liveSession(['+44 20 7946 0401']);
    await ok(s.c.post(`/v1/voice/dialer/sessions/${s.session.id}/resume`));
    const [placed] = await placedTo('+442079460401');
    await twilio.callStatus(placed, 'ringing');
    // Twilio ended it, and its callback was lost.
    twilio.setCall(placed, 'no-answer');
    clock.set(at('2027-05-11T13:05:00Z'));
    const [call] = await waitFor(() => callsOf(s.c, s.session.id), (x) => x[0]?.status === 'no-answer');
    expect(call.status).toBe('no-answer');
    await waitFor(() => ok(s.c.get(`/v1/voice/dialer/sessions/${s.session.id}`)), (x) => x.status === 'completed');
  });
});
