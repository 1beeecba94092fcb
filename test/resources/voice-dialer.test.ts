// The dialer in test mode, through HTTP, with the local telephony driver playing the outcome each
// number's last digit chooses: a session over a list calls every contact with a phone once (skipping
// suppressed ones and waiting for contacts outside their hours), never holds more lines than it may
// or more connected calls than the agent can take, records each call's states forward only, its
// stats and its disposition, and completes when the list is exhausted.
import { describe, expect, it } from 'vitest';
import { clock, tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ok, walk, type Json } from '../helpers/records.ts';
import { waitFor } from '../helpers/wait.ts';

const app = await testApp();
const at = (iso: string) => Date.parse(iso) / 1000;

async function setUp(c: Client, phones: Array<string | null>, options: { lines?: number; zones?: Array<string | null> } = {}) {
  const member = await ok(c.post('/v1/members', { name: 'Ada Agent', email: `ada${Math.random()}@example.com`, timezone: 'Europe/London' }), 201);
  const agent = await ok(c.post('/v1/voice/agents', { member_id: member.id, status: 'available' }), 201);
  const number = await ok(c.post('/v1/voice/numbers', { phone_number: '+1 (415) 555-0100', label: 'Main' }), 201);
  const list = await ok(c.post('/v1/lists', { name: 'Call list', type: 'contacts' }), 201);
  const contacts: Json[] = [];
  for (const [i, phone] of phones.entries()) {
    contacts.push(await ok(c.post('/v1/contacts', { list_id: list.id, first_name: `C${i}`, phone, timezone: options.zones?.[i] ?? 'Europe/London' }), 201));
  }
  const session = await ok(c.post('/v1/voice/dialer/sessions', { list_id: list.id, agent_id: agent.id, number_id: number.id, parallel_lines: options.lines ?? 1, script: 'Hi {{first_name}}' }), 201);
  return { member, agent, number, list, contacts, session };
}

const callsOf = (c: Client, sessionId: string) => walk(c, `/v1/voice/calls?session_id=${sessionId}`, 100);
const sessionOf = (c: Client, id: string) => ok(c.get(`/v1/voice/dialer/sessions/${id}`));

describe('dialer sessions with the local driver', () => {
  it('calls each contact once, skips what it must, records the outcomes and completes', async () => {
    clock.set(at('2027-05-10T13:00:00Z'));
    const { c, s } = await (async () => {
      const t = await tenant(app, { sandbox: false });
      await ok(t.test.post('/v1/suppressions', { channel: 'phone', address: '+442079460993', reason: 'manual' }), 201);
      return { c: t.test, s: await setUp(t.test, ['+44 20 7946 0990', '+44 20 7946 0994', '+44 20 7946 0995', '+44 20 7946 0996', '+44 20 7946 0997', null, '+44 20 7946 0993']) };
    })();
    expect(s.number.phone_number).toBe('+14155550100');
    expect(s.session).toMatchObject({ status: 'paused', parallel_lines: 1, calling_window: { start_hour: 8, end_hour: 21, timezone: null }, pass: 1, exhausted: false });
    const running = await ok(c.patch(`/v1/voice/dialer/sessions/${s.session.id}`, { status: 'running' }));
    expect(running.status).toBe('running');
    const done = await waitFor(() => sessionOf(c, s.session.id), (x) => x.status === 'completed', 60_000);
    expect(done.exhausted).toBe(true);
    const calls = await callsOf(c, s.session.id);
    const byNumber = Object.fromEntries(calls.map((x) => [x.to_number, x]));
    expect(calls).toHaveLength(5);
    expect(byNumber['+442079460990']).toMatchObject({ status: 'completed', voicemail: false, duration: 3, provider: 'local', from_number: '+14155550100', attempt: 1 });
    expect(byNumber['+442079460994'].status).toBe('busy');
    expect(byNumber['+442079460995'].status).toBe('no-answer');
    expect(byNumber['+442079460996']).toMatchObject({ status: 'failed', error: expect.stringContaining('21217') });
    expect(byNumber['+442079460997']).toMatchObject({ status: 'completed', voicemail: true });
    const stats = await ok(c.get(`/v1/voice/dialer/sessions/${s.session.id}/stats`));
    expect(stats).toMatchObject({ dialed: 5, in_flight: 0, connected: 1, voicemail: 1, no_answer: 1, busy: 1, failed: 1, canceled: 0, average_talk_seconds: 3, skipped: { no_phone: 1, suppressed: 1 } });
    // The agent is free again, and each call's events were recorded.
    expect(await ok(c.get(`/v1/voice/agents/${s.agent.id}`))).toMatchObject({ status: 'available', current_call_id: null });
    const events = await walk(c, '/v1/events?type=call.completed', 100);
    expect(events.filter((e) => e.data.object.session_id === s.session.id)).toHaveLength(5);

    // The disposition: do_not_call suppresses the number and can make a follow-up task.
    const answered = byNumber['+442079460990'];
    const dispositioned = await ok(c.post(`/v1/voice/calls/${answered.id}/disposition`, { disposition: 'do_not_call', notes: 'Asked not to be called', follow_up: { due_at: at('2027-05-11T09:00:00Z') } }));
    expect(dispositioned).toMatchObject({ disposition: 'do_not_call', notes: 'Asked not to be called' });
    const suppression = (await walk(c, '/v1/suppressions?channel=phone', 100)).find((x) => x.address === '+442079460990');
    expect(suppression).toMatchObject({ reason: 'manual', contact_id: answered.contact_id });
    const tasks = await walk(c, `/v1/tasks?contact_id=${answered.contact_id}`, 10);
    expect(tasks).toEqual([expect.objectContaining({ type: 'call', assignee: s.member.id, title: 'Call back C0' })]);
    await fails(c.post(`/v1/voice/calls/${answered.id}/disposition`, { disposition: 'maybe' }), 400, 'Invalid disposition: must be one of connected, left_voicemail, not_interested, meeting_booked, call_back_later, wrong_number, do_not_call', { param: 'disposition' });
    // A transcript is posted and read back.
    await fails(c.get(`/v1/voice/calls/${answered.id}/transcript`), 404, 'Transcript not found');
    await ok(c('PUT', `/v1/voice/calls/${answered.id}/transcript`, { text: 'Agent: Hello' }));
    expect(await ok(c.get(`/v1/voice/calls/${answered.id}/transcript`))).toEqual({ call_id: answered.id, text: 'Agent: Hello' });
    // Grading needs a language-model provider, which the service has none of yet: 503, after the checks.
    const rubric = await ok(c.post('/v1/voice/rubrics', { name: 'Discovery', criteria: [{ key: 'pain', description: 'Asks about the pain', weight: 60 }, { key: 'next_step', description: 'Agrees a next step', weight: 40 }] }), 201);
    await fails(c.post('/v1/voice/rubrics', { name: 'Twice', criteria: [{ key: 'a', description: 'A', weight: 1 }, { key: 'a', description: 'B', weight: 2 }] }), 422);
    await fails(c.post(`/v1/voice/calls/${answered.id}/grade`, { rubric_id: 'rub_nope' }), 404, 'Rubric not found');
    await fails(c.post(`/v1/voice/calls/${byNumber['+442079460994'].id}/grade`, { rubric_id: rubric.id }), 409);
    const grade = await c.post(`/v1/voice/calls/${answered.id}/grade`, { rubric_id: rubric.id });
    expect([grade.statusCode, grade.json().type]).toEqual([503, 'provider_not_configured']);
    // Completed: frozen.
    await fails(c.patch(`/v1/voice/dialer/sessions/${s.session.id}`, { parallel_lines: 2 }), 409);
  });

  it('never holds more lines than parallel_lines, and connects one answered call at a time: the others are dropped and called again', async () => {
    clock.set(at('2027-05-10T13:00:00Z'));
    const t = await tenant(app, { sandbox: false });
    const c = t.test;
    // Three people who answer after 1 s (digits 0–3) and one after 2 s (8), three lines.
    const s = await setUp(c, ['+44 20 7946 0100', '+44 20 7946 0101', '+44 20 7946 0108', '+44 20 7946 0110'], { lines: 3 });
    await ok(c.post(`/v1/voice/dialer/sessions/${s.session.id}/resume`));
    let most = 0;
    let connectedAtOnce = 0;
    await waitFor(async () => {
      const calls = await callsOf(c, s.session.id);
      most = Math.max(most, calls.filter((x) => ['queued', 'ringing', 'in-progress'].includes(x.status)).length);
      connectedAtOnce = Math.max(connectedAtOnce, calls.filter((x) => x.status === 'in-progress').length);
      return calls;
    }, (calls) => calls.filter((x) => x.status === 'completed').length === 4, 90_000, 150);
    await waitFor(() => sessionOf(c, s.session.id), (x) => x.status === 'completed');
    expect(most).toBeLessThanOrEqual(3);
    expect(connectedAtOnce).toBeLessThanOrEqual(1);
    const calls = await callsOf(c, s.session.id);
    // Every contact was talked to once in the end; the dropped calls are canceled, their contacts called again.
    const completed = calls.filter((x) => x.status === 'completed');
    expect(new Set(completed.map((x) => x.contact_id)).size).toBe(4);
    expect(completed).toHaveLength(4);
    const dropped = calls.filter((x) => x.status === 'canceled');
    expect(dropped.length).toBeGreaterThan(0);
    for (const d of dropped) expect(d.error).toBe('Dropped: the agent took another call');
    expect(calls.filter((x) => !['completed', 'canceled'].includes(x.status))).toEqual([]);
  });

  it('waits for a contact outside its hours (its own zone), and refuses what it must', async () => {
    // 13:00 UTC: 22:00 in Tokyo (closed), 14:00 in London.
    clock.set(at('2027-05-10T13:00:00Z'));
    const t = await tenant(app, { sandbox: false });
    const c = t.test;
    const s = await setUp(c, ['+81 3 1234 5670', '+44 20 7946 0120'], { zones: ['Asia/Tokyo', 'Europe/London'] });
    await ok(c.post(`/v1/voice/dialer/sessions/${s.session.id}/resume`));
    await waitFor(() => callsOf(c, s.session.id), (calls) => calls.some((x) => x.status === 'completed'));
    await new Promise((r) => setTimeout(r, 500));
    expect((await callsOf(c, s.session.id)).map((x) => x.to_number)).toEqual(['+442079460120']);
    expect(await ok(c.get(`/v1/voice/dialer/sessions/${s.session.id}/stats`))).toMatchObject({ skipped: { outside_window: 1 } });
    expect((await sessionOf(c, s.session.id)).status).toBe('running');
    // 08:00 in Tokyo the next day: it is called.
    clock.set(at('2027-05-10T23:00:01Z'));
    const done = await waitFor(() => sessionOf(c, s.session.id), (x) => x.status === 'completed', 60_000);
    expect(done.status).toBe('completed');
    expect((await callsOf(c, s.session.id)).map((x) => x.to_number).sort()).toEqual(['+442079460120', '+81312345670']);

    await fails(c.post('/v1/voice/numbers', { phone_number: 'not a number' }), 422);
    await fails(c.post('/v1/voice/numbers', { phone_number: '+1 415 555 0100' }), 409);
    await fails(c.post('/v1/voice/dialer/sessions', { list_id: s.list.id, agent_id: s.agent.id, number_id: s.number.id, parallel_lines: 5 }), 422);
    await fails(c.post('/v1/voice/dialer/sessions', { list_id: s.list.id, agent_id: s.agent.id, number_id: s.number.id, calling_window: { start_hour: 21, end_hour: 8 } }), 422);
    await fails(c.post('/v1/voice/dialer/sessions', { list_id: s.list.id, agent_id: 'vag_nope', number_id: s.number.id }), 404, 'Voice agent not found');
    await fails(c.post(`/v1/voice/dialer/sessions/${s.session.id}/pause`), 409, 'A dialer session that is completed cannot be paused');
  });
  it('reads calling hours in each contact\'s zone across daylight-saving changes, both ways, in two zones', async () => {
    // [zone, the moment the session runs, whether the contact may be called then, when its hours open]
    const cases: Array<[string, string, boolean, string]> = [
      // New York springs forward on 14 March 2027: 12:30 UTC is 07:30 the day before, 08:30 that day.
      ['America/New_York', '2027-03-13T12:30:00Z', false, '2027-03-13T13:00:00Z'],
      ['America/New_York', '2027-03-14T12:30:00Z', true, ''],
      // Berlin falls back on 31 October 2027: 06:30 UTC is 08:30 the day before, 07:30 that day.
      ['Europe/Berlin', '2027-10-30T06:30:00Z', true, ''],
      ['Europe/Berlin', '2027-10-31T06:30:00Z', false, '2027-10-31T07:00:00Z'],
    ];
    for (const [zone, now, open, opens] of cases) {
      clock.set(at(now));
      const t = await tenant(app, { sandbox: false });
      const s = await setUp(t.test, ['+44 20 7946 0146'], { zones: [zone] });
      await ok(t.test.post(`/v1/voice/dialer/sessions/${s.session.id}/resume`));
      if (open) {
        await waitFor(() => callsOf(t.test, s.session.id), (calls) => calls.length === 1);
        continue;
      }
      await new Promise((r) => setTimeout(r, 400));
      expect(await callsOf(t.test, s.session.id), `${zone} ${now}`).toEqual([]);
      clock.set(at(opens) - 30);
      await new Promise((r) => setTimeout(r, 400));
      expect(await callsOf(t.test, s.session.id), `${zone} before ${opens}`).toEqual([]);
      clock.set(at(opens) + 1);
      await waitFor(() => callsOf(t.test, s.session.id), (calls) => calls.length === 1);
    }
  });
});
