// Exactly once, at the SMTP server, across a crash. A real service process sends a burst of 500
// messages from one mailbox to a real SMTP server (in this process) and is killed with SIGKILL in the
// middle of it, then started again and left to drain its queue. At the server no Message-ID
// arrives twice; every message the outbox calls sent arrived exactly once; the only ones not sent
// are those whose provider call the kill interrupted (failed "interrupted", never sent again: at
// most one per worker slot, each received at most once); every other message was sent.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { queueEmail } from '../../src/platform/outbox/send.ts';
import { runWrite } from '../../src/platform/write.ts';
import { INTERRUPTED } from '../../src/resources/outbox/outbox.jobs.ts';
import { startSmtp } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import { json } from './support/reply.ts';
import { afterProcessTests, processActor, startServer } from './support/server-process.ts';
import { freshStore, orgIn, type FreshStore } from './support/stores.ts';

const MESSAGES = 500;
const CONCURRENCY = 8;
/** Messages the server receives before the kill: well into the burst, far from its end. */
const KILL_AFTER = 120;
const stores: FreshStore[] = [];

afterProcessTests(import.meta.filename, stores);

describe('sending mail across SIGKILL', () => {
  it(`sends each of ${MESSAGES} messages at most once, and all but the interrupted ones once`, { timeout: 240_000 }, async () => {
    const store = await freshStore('mailcrash');
    stores.push(store);
    const smtp = await startSmtp();
    const env = {
      DATABASE_URL: store.url, RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000',
      WORKER_CONCURRENCY: String(CONCURRENCY), WORKER_CONCURRENCY_PER_ORG: String(CONCURRENCY), JOB_LEASE_SECONDS: '2',
    };
    let server = await startServer(env);
    const port = server.port;
    try {
      const org = await orgIn(store.url, 'Mail crash');
      const owner = processActor(() => server.base, org.org_id, org.live_token);
      const connection = json(await owner.call('POST', '/v1/connections', { body: { kind: 'email', provider: 'smtp', settings: { smtp: { host: '127.0.0.1', port: smtp.port } }, credentials: { username: 'ada', password: 'right-password' } } })).data;
      const mailbox = json(await owner.call('POST', '/v1/mailboxes', { body: { email: 'ada@crash.test', display_name: 'Ada', connection_id: connection.id, daily_limit: 100_000 } })).data;

      // The burst, queued as the service's own writes queue messages: rows and jobs in one write.
      const database = openDatabase(store.url);
      try {
        await runWrite(database, { orgId: org.org_id, mode: 'live' }, async (w) => {
          for (let i = 0; i < MESSAGES; i++) {
            await queueEmail(w, `burst:${i}`, { from: mailbox.email, to: [`r${i}-${randomUUID().slice(0, 6)}@example.org`], subject: `Message ${i}`, text: 'Hello', mailboxId: mailbox.id });
          }
        });
        await waitFor(async () => smtp.received.length, (n) => n >= KILL_AFTER, 60_000, 5);
        await server.stop('SIGKILL');
        const atKill = smtp.received.length;
        expect(atKill).toBeLessThan(MESSAGES);

        server = await startServer(env, { port });
        const rows = await waitFor(
          () => database.db.selectFrom('outbox_messages').select(['message_id', 'status', 'error']).where('org_id', '=', org.org_id).execute(),
          (all) => all.length === MESSAGES && all.every((r) => r.status !== 'queued'), 120_000, 250);

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
        expect(interrupted.length).toBeLessThanOrEqual(CONCURRENCY);
        expect(sent.length + interrupted.length).toBe(MESSAGES);
        // Nothing reached the server that the outbox does not hold.
        expect(smtp.received.length).toBe(received.size);
        expect(received.size).toBeGreaterThanOrEqual(sent.length);
      } finally {
        await database.close();
      }
    } finally {
      await server.stop();
      await smtp.close();
    }
  });
});
