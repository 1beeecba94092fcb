// Sends per second through the outbox's send job: live mode through the SMTP adapter (nodemailer,
// pooled, each message DKIM-signed) to a real SMTP server in this process (smtp-server, AUTH, no
// TLS), and test mode through the local driver. A backlog of messages from one mailbox is queued as
// the service's own writes queue them, and the in-process workers drain it; the figure is messages
// over the time from the first commit to the last `sent` (or `delivered`) row. Targets: 200/s over
// SMTP, 1,000/s local. Standalone (not part of `npm run bench`):
//   npx node bench/mail-send.ts [--quick] [--store sqlite|postgres]
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createOrganization } from '../src/orgs/orgs.ts';
import { newId } from '../src/platform/ids.ts';
import { queueEmail } from '../src/platform/outbox/send.ts';
import { seal } from '../src/platform/sealing.ts';
import { runWrite } from '../src/platform/write.ts';
import { startSmtp } from '../test/helpers/smtp.ts';
import { createStore, postgresServerUrl } from './stores.ts';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, store: { type: 'string', default: 'sqlite' } } });
const MESSAGES = values.quick ? 1000 : 5000;
const BATCH = 500;
const DOMAIN = 'bench-mail.test';

const store = await createStore(values.store as 'sqlite' | 'postgres', postgresServerUrl());
const smtp = await startSmtp();
const config = loadConfig({
  DATABASE_URL: store.url, DATABASE_POOL_SIZE: '8', LOG_LEVEL: 'warn', OUTBOUND_ALLOW_PRIVATE: 'true',
  WORKER_CONCURRENCY: '32', WORKER_CONCURRENCY_PER_ORG: '32', WORKER_CONCURRENCY_PER_KEY: '32', RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000',
});
const app = await buildApp({ config, logger: pino({ level: 'warn' }) });
await app.ready();
try {
  const org = await createOrganization(app.services.database, app.services.config, 'Mail bench', { sandbox: false });
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
  const at = Math.floor(Date.now() / 1000);
  await app.services.database.db.insertInto('sending_domains').values({
    org_id: org.org_id, mode: 'live', id: newId('dom'), domain: DOMAIN, description: null, status: 'verified', dkim_selector: 'rds1',
    dkim_public_key: 'unused', dkim_private_key: seal(app.services.secret, keys.privateKey), records: '[]', verified_at: at, last_checked_at: at, created_at: at, updated_at: at,
  }).execute();
  const call = async (token: string, url: string, body: unknown) => {
    const res = await app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` }, payload: body as object });
    if (res.statusCode !== 201) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return res.json().data as { id: string };
  };
  const connection = await call(org.live_token, '/v1/connections', { kind: 'email', provider: 'smtp', settings: { smtp: { host: '127.0.0.1', port: smtp.port } }, credentials: { username: 'ada', password: 'right-password' } });
  const mailboxes = {
    live: await call(org.live_token, '/v1/mailboxes', { email: `ada@${DOMAIN}`, connection_id: connection.id, daily_limit: 100_000 }),
    test: await call(org.test_token, '/v1/mailboxes', { email: `ada@${DOMAIN}`, daily_limit: 100_000 }),
  };

  for (const mode of ['live', 'test'] as const) {
    const scope = { orgId: org.org_id, mode };
    const done = mode === 'live' ? 'sent' : 'delivered';
    const started = performance.now();
    for (let i = 0; i < MESSAGES; i += BATCH) {
      await runWrite(app.services.database, scope, async (w) => {
        for (let j = i; j < Math.min(MESSAGES, i + BATCH); j++) {
          await queueEmail(w, `bench:${randomUUID()}`, { from: `ada@${DOMAIN}`, to: [`r${j}@example.org`], subject: `Message ${j}`, text: 'Hello from the bench', mailboxId: mailboxes[mode].id });
        }
      });
    }
    for (;;) {
      const { n } = await app.services.database.db.selectFrom('outbox_messages').select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', org.org_id).where('mode', '=', mode).where('status', '=', done).executeTakeFirstOrThrow();
      if (Number(n) >= MESSAGES) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seconds = (performance.now() - started) / 1000;
    const rate = MESSAGES / seconds;
    const target = mode === 'live' ? 200 : 1000;
    console.log(`${store.kind} ${mode === 'live' ? 'SMTP + DKIM' : 'local driver'}: ${MESSAGES} messages in ${seconds.toFixed(1)} s = ${rate.toFixed(0)}/s (target ${target}/s: ${rate >= target ? 'met' : 'MISSED'})`);
  }
  const signed = smtp.received.filter((r) => /^DKIM-Signature:/im.test(r.raw)).length;
  console.log(`the SMTP server received ${smtp.received.length} messages, ${signed} signed`);
} finally {
  await app.close();
  await smtp.close();
  await store.drop();
}
