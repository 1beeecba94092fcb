// A dialer session across SIGKILL, counted at a Twilio written from its documentation. A real service
// process runs a live session of 4 lines over 120 contacts, calling through a Twilio connection to a
// local Twilio server that answers its calls as people do (some answer and talk, some are busy, some
// never pick up) and posts each call's signed status callbacks; the process is killed with SIGKILL
// three times while it dials, each time started again. Callbacks posted while it is down are lost:
// reconciliation asks Twilio about the calls that went silent. At the end the session completed,
// Twilio was asked to place each call at most once (no contact called twice for one call), a contact
// is called again only after a call dropped for another that connected, and no call is left in a
// state that is not final.
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { createRecord } from '../../src/platform/resource/store.ts';
import { runWrite } from '../../src/platform/write.ts';
import { contacts } from '../../src/resources/contacts/contacts.resource.ts';
import { startTwilio, type TwilioCall } from '../helpers/twilio-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { json } from './support/reply.ts';
import { afterProcessTests, freePort, processActor, startServer } from './support/server-process.ts';
import { freshStore, orgIn, type FreshStore } from './support/stores.ts';

const CONTACTS = 120;
const KILLS = 3;
const stores: FreshStore[] = [];

afterProcessTests(import.meta.filename, stores);

/** What the called person does: every third answers and talks, the rest are busy or never pick up. */
const storyOf = (i: number): Array<[string, Record<string, string>]> =>
  i % 3 === 0 ? [['ringing', {}], ['in-progress', { AnsweredBy: 'human' }], ['completed', { AnsweredBy: 'human', CallDuration: '1' }]]
    : i % 3 === 1 ? [['ringing', {}], ['busy', {}]] : [['ringing', {}], ['no-answer', {}]];

describe('a dialer session across SIGKILL', () => {
  it(`calls ${CONTACTS} contacts on 4 lines through ${KILLS} kills, each call placed once and every call ending final`, { timeout: 300_000 }, async () => {
    const store = await freshStore('voicecrash');
    stores.push(store);
    const twilio = await startTwilio();
    const port = await freePort();
    const env = {
      DATABASE_URL: store.url, PUBLIC_URL: `http://127.0.0.1:${port}`, OUTBOUND_ALLOW_PRIVATE: 'true', RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000',
      PUBLIC_RATE_LIMIT_PER_SECOND: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000000', JOB_LEASE_SECONDS: '2', CALL_SILENCE_SECONDS: '2',
    };
    let server = await startServer(env, { port });
    const database = openDatabase(store.url);
    // Twilio's side: each call placed plays its story, the Call resource following it whether or not
    // the callback reached the service.
    const playing = new Set<string>();
    let stopped = false;
    const play = async (call: TwilioCall, i: number) => {
      for (const [state, extra] of storyOf(i)) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        twilio.setCall(call, state, extra.AnsweredBy ?? null, extra.CallDuration ?? null);
        await twilio.callStatus(call, state, extra).catch(() => undefined);
      }
    };
    const answering = (async () => {
      while (!stopped) {
        for (const call of twilio.calls) {
          if (playing.has(call.sid)) continue;
          playing.add(call.sid);
          void play(call, Number(call.to.slice(-3)));
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      const org = await orgIn(store.url, 'Voice crash');
      const owner = processActor(() => server.base, org.org_id, org.live_token);
      const connection = json(await owner.call('POST', '/v1/connections', { body: { kind: 'telephony', provider: 'twilio', settings: { account_sid: twilio.accountSid, api_url: twilio.url }, credentials: { auth_token: twilio.authToken } } })).data;
      const member = json(await owner.call('POST', '/v1/members', { body: { name: 'Ada Agent', email: 'ada@crash.test' } })).data;
      const agent = json(await owner.call('POST', '/v1/voice/agents', { body: { member_id: member.id, status: 'available', phone: '+442079460555' } })).data;
      const number = json(await owner.call('POST', '/v1/voice/numbers', { body: { phone_number: '+14155550100', connection_id: connection.id } })).data;
      const list = json(await owner.call('POST', '/v1/lists', { body: { name: 'Crash calls', type: 'contacts' } })).data;
      await runWrite(database, { orgId: org.org_id, mode: 'live' }, async (w) => {
        for (let i = 0; i < CONTACTS; i++) await createRecord(contacts, w, { list_id: list.id, first_name: `P${i}`, phone: `+4420794${String(60_000 + i).padStart(5, '0')}` });
      });
      const session = json(await owner.call('POST', '/v1/voice/dialer/sessions', { body: { list_id: list.id, agent_id: agent.id, number_id: number.id, parallel_lines: 4, calling_window: { start_hour: 0, end_hour: 24, timezone: 'UTC' } } })).data;
      expect((await owner.call('POST', `/v1/voice/dialer/sessions/${session.id}/resume`)).status).toBe(200);

      for (let kill = 1; kill <= KILLS; kill++) {
        await waitFor(async () => twilio.calls.length, (n) => n >= kill * 25, 120_000, 5);
        await server.stop('SIGKILL');
        await new Promise((resolve) => setTimeout(resolve, 300));
        server = await startServer(env, { port });
      }

      const done = await waitFor(() => owner.call('GET', `/v1/voice/dialer/sessions/${session.id}`), (r) => json(r).data?.status === 'completed', 180_000, 250);
      expect(json(done).data.exhausted).toBe(true);
      const calls = await database.db.selectFrom('calls').select(['id', 'contact_id', 'status', 'error', 'provider_call_id', 'attempt']).where('org_id', '=', org.org_id).where('mode', '=', 'live').execute();
      // Every call ended, and the provider was asked to place each at most once.
      expect(calls.filter((c) => !['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(c.status))).toEqual([]);
      const placed = new Map<string, number>();
      for (const call of twilio.calls) {
        const reference = call.statusCallback.split('/').at(-2)!;
        placed.set(reference, (placed.get(reference) ?? 0) + 1);
      }
      expect([...placed.values()].filter((n) => n > 1)).toEqual([]);
      for (const c of calls.filter((x) => x.provider_call_id)) expect(placed.get(c.id), c.id).toBe(1);
      // Each contact reached once, called again only after a call of theirs was dropped for another or
      // lost to a kill during the provider's call (failed: never placed again).
      const byContact = new Map<string, typeof calls>();
      for (const c of calls) byContact.set(c.contact_id!, [...(byContact.get(c.contact_id!) ?? []), c]);
      expect(byContact.size).toBe(CONTACTS);
      for (const [contact, theirs] of byContact) {
        const sorted = theirs.sort((a, b) => a.attempt - b.attempt);
        expect(new Set(sorted.map((c) => c.attempt)).size, contact).toBe(sorted.length);
        for (const earlier of sorted.slice(0, -1)) expect(earlier.status, `${contact} ${earlier.error}`).toBe('canceled');
      }
    } finally {
      stopped = true;
      await answering;
      await server.stop();
      await database.close();
      await twilio.close();
    }
  });
});
