// A mailbox's hourly limit held by sequences stepping in two worker processes. Two live sequences
// share one mailbox (25 an hour) and enrol 60 contacts each; an API process without workers and two
// worker processes step them at once, sending to a real SMTP server in this process. Exactly 25
// messages reach the server and the outbox, however the two processes interleave; every other
// enrollment waits, pending, for the mailbox to have room again.
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { createRecord } from '../../src/platform/resource/store.ts';
import { runWrite } from '../../src/platform/write.ts';
import { contacts } from '../../src/resources/contacts/contacts.resource.ts';
import { startSmtp } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import { json } from './support/reply.ts';
import { afterProcessTests, processActor, startServer, startWorker } from './support/server-process.ts';
import { freshStore, orgIn, type FreshStore } from './support/stores.ts';

const HOURLY = 25;
const PER_SEQUENCE = 60;
const stores: FreshStore[] = [];

afterProcessTests(import.meta.filename, stores);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a mailbox shared by sequences in two worker processes', () => {
  it(`sends no more than its ${HOURLY} an hour`, { timeout: 240_000 }, async () => {
    const store = await freshStore('seqcaps');
    stores.push(store);
    const smtp = await startSmtp();
    const env = { DATABASE_URL: store.url, RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000', JOB_LEASE_SECONDS: '2' };
    const server = await startServer({ ...env, WORKERS: 'off' });
    const database = openDatabase(store.url);
    try {
      const org = await orgIn(store.url, 'Sequence caps');
      const owner = processActor(() => server.base, org.org_id, org.live_token);
      const connection = json(await owner.call('POST', '/v1/connections', { body: { kind: 'email', provider: 'smtp', settings: { smtp: { host: '127.0.0.1', port: smtp.port } }, credentials: { username: 'ada', password: 'right-password' } } })).data;
      const mailbox = json(await owner.call('POST', '/v1/mailboxes', { body: { email: 'ada@caps.test', connection_id: connection.id, daily_limit: 1000, hourly_limit: HOURLY } })).data;
      const always = { timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start_hour: 0, end_hour: 24 };
      const ids: string[] = [];
      for (const name of ['First', 'Second']) {
        const list = json(await owner.call('POST', '/v1/lists', { body: { name, type: 'contacts' } })).data;
        await runWrite(database, { orgId: org.org_id, mode: 'live' }, async (w) => {
          for (let i = 0; i < PER_SEQUENCE; i++) await createRecord(contacts, w, { list_id: list.id, work_email: `${name}${i}@people.example` });
        });
        const sequence = json(await owner.call('POST', '/v1/sequences', { body: { name, associated_list_id: list.id, mailbox_ids: [mailbox.id], schedule: always } })).data;
        await owner.call('POST', `/v1/sequences/${sequence.id}/steps`, { body: { subject: 'Hello', body: 'Hi' } });
        ids.push(sequence.id);
      }
      // Both run before either worker starts, so the two schedulers are due together.
      for (const id of ids) expect((await owner.call('POST', `/v1/sequences/${id}/run`)).status).toBe(200);
      const workers = await Promise.all([startWorker(env), startWorker(env)]);
      try {
        await waitFor(async () => smtp.received.length, (n) => n >= HOURLY, 60_000, 10);
        const enrolled = await waitFor(
          () => database.db.selectFrom('sequence_enrollments').select(['status', 'step_index']).where('org_id', '=', org.org_id).where('mode', '=', 'live').execute(),
          (all) => all.length === 2 * PER_SEQUENCE && all.every((e) => e.status === 'pending' || e.step_index === 1), 60_000, 100);
        // Time for any send beyond the limit to show itself.
        await sleep(3000);
        expect(smtp.received.length).toBe(HOURLY);
        const queued = await database.db.selectFrom('outbox_messages').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', org.org_id).where('mode', '=', 'live').where('mailbox_id', '=', mailbox.id).executeTakeFirstOrThrow();
        expect(Number(queued.n)).toBe(HOURLY);
        expect(enrolled.filter((e) => e.status === 'pending').length).toBe(2 * PER_SEQUENCE - HOURLY);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    } finally {
      await database.close();
      await server.stop();
      await smtp.close();
    }
  });
});
