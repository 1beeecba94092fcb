// A sequence stepping across SIGKILL, counted at a real SMTP server. A real service process runs a
// live sequence of two e-mail steps for 1,000 enrolled contacts, sending through a mailbox to an SMTP
// server in this process, and is killed with SIGKILL five times while it sends, each time started
// again. At the end every enrollment has finished its two steps; the outbox holds exactly one
// message per enrollment and step; at the server no Message-ID arrives twice and every message the
// outbox calls sent arrived once; the only ones not sent are those whose provider call a kill
// interrupted (failed "interrupted", never sent again: at most one per worker slot and kill).
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { createRecord } from '../../src/platform/resource/store.ts';
import { runWrite } from '../../src/platform/write.ts';
import { contacts } from '../../src/resources/contacts/contacts.resource.ts';
import { INTERRUPTED } from '../../src/resources/outbox/outbox.jobs.ts';
import { startSmtp } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import { json } from './support/reply.ts';
import { afterProcessTests, processActor, startServer } from './support/server-process.ts';
import { freshStore, orgIn, type FreshStore } from './support/stores.ts';

const ENROLLED = 1000;
const STEPS = 2;
const KILLS = 5;
const CONCURRENCY = 8;
/** Messages the server receives between two kills. */
const BETWEEN_KILLS = 250;
const stores: FreshStore[] = [];

afterProcessTests(import.meta.filename, stores);

describe('a sequence stepping across SIGKILL', () => {
  it(`sends each step of ${ENROLLED} enrollments exactly once through ${KILLS} kills`, { timeout: 300_000 }, async () => {
    const store = await freshStore('seqcrash');
    stores.push(store);
    const smtp = await startSmtp();
    const env = {
      DATABASE_URL: store.url, RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000',
      WORKER_CONCURRENCY: String(CONCURRENCY), WORKER_CONCURRENCY_PER_ORG: String(CONCURRENCY), JOB_LEASE_SECONDS: '2',
    };
    let server = await startServer(env);
    const port = server.port;
    const database = openDatabase(store.url);
    try {
      const org = await orgIn(store.url, 'Sequence crash');
      const owner = processActor(() => server.base, org.org_id, org.live_token);
      const connection = json(await owner.call('POST', '/v1/connections', { body: { kind: 'email', provider: 'smtp', settings: { smtp: { host: '127.0.0.1', port: smtp.port } }, credentials: { username: 'ada', password: 'right-password' } } })).data;
      const mailbox = json(await owner.call('POST', '/v1/mailboxes', { body: { email: 'ada@crash.test', connection_id: connection.id, daily_limit: 100_000 } })).data;
      const list = json(await owner.call('POST', '/v1/lists', { body: { name: 'Crash audience', type: 'contacts' } })).data;
      await runWrite(database, { orgId: org.org_id, mode: 'live' }, async (w) => {
        for (let i = 0; i < ENROLLED; i++) await createRecord(contacts, w, { list_id: list.id, first_name: `P${i}`, work_email: `p${i}@people.example` });
      });
      const always = { timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start_hour: 0, end_hour: 24 };
      const sequence = json(await owner.call('POST', '/v1/sequences', { body: { name: 'Crash', associated_list_id: list.id, mailbox_ids: [mailbox.id], schedule: always } })).data;
      await owner.call('POST', `/v1/sequences/${sequence.id}/steps`, { body: { subject: 'Hello {{ contact.first_name }}', body: 'First' } });
      await owner.call('POST', `/v1/sequences/${sequence.id}/steps`, { body: { time_interval: 1, body: 'Second' } });
      expect((await owner.call('POST', `/v1/sequences/${sequence.id}/run`)).status).toBe(200);

      for (let kill = 1; kill <= KILLS; kill++) {
        await waitFor(async () => smtp.received.length, (n) => n >= kill * BETWEEN_KILLS, 120_000, 5);
        await server.stop('SIGKILL');
        expect(smtp.received.length).toBeLessThan(ENROLLED * STEPS);
        server = await startServer(env, { port });
      }

      const finished = await waitFor(
        () => database.db.selectFrom('sequence_enrollments').select(['status', 'reason', 'step_index']).where('org_id', '=', org.org_id).where('mode', '=', 'live').execute(),
        (all) => all.length === ENROLLED && all.every((e) => e.status === 'finished'), 180_000, 250);
      expect(finished.every((e) => e.reason === 'completed' && e.step_index === STEPS)).toBe(true);
      const rows = await waitFor(
        () => database.db.selectFrom('outbox_messages').select(['message_id', 'status', 'error', 'step_id', 'contact_id']).where('org_id', '=', org.org_id).where('mode', '=', 'live').where('record_type', '=', 'sequence').execute(),
        (all) => all.length === ENROLLED * STEPS && all.every((r) => r.status !== 'queued'), 120_000, 250);
      expect(new Set(rows.map((r) => `${r.contact_id}:${r.step_id}`)).size).toBe(ENROLLED * STEPS);

      const received = new Map<string, number>();
      for (const r of smtp.received) received.set(r.messageId, (received.get(r.messageId) ?? 0) + 1);
      expect([...received.values()].filter((n) => n > 1)).toEqual([]);
      const sent = rows.filter((r) => r.status === 'sent');
      const interrupted = rows.filter((r) => r.status === 'failed');
      for (const r of sent) expect(received.get(r.message_id!), r.message_id!).toBe(1);
      for (const r of interrupted) {
        expect(r.error).toBe(INTERRUPTED);
        expect(received.get(r.message_id!) ?? 0).toBeLessThanOrEqual(1);
      }
      expect(interrupted.length).toBeLessThanOrEqual(CONCURRENCY * KILLS);
      expect(sent.length + interrupted.length).toBe(ENROLLED * STEPS);
      expect(smtp.received.length).toBe(received.size);
    } finally {
      await database.close();
      await server.stop();
      await smtp.close();
    }
  });
});
