// Scenarios 20 to 22: the e-mail channel.
// 20: sends per second through the outbox's send job, drained by a worker process (`npm run worker`)
//     on the server core: live mode through the SMTP adapter (nodemailer, pooled, every message
//     DKIM-signed with RSA 2048) to a real SMTP server (smtp-server, AUTH, in this process), and
//     test mode through the local driver; beside them baseline (i), nodemailer alone sending the
//     same messages to the same server (bench/baselines/nodemailer-send.ts).
// 21: raw messages posted to an e-mail connection's inbound URL, parsed and threaded (half of them
//     answer an earlier one), by the API process on the server core.
// 22: GET /v1/inbox's first page with its exact total at 100,000 threads (20,000 quick), computed
//     for every request (`Cache-Control: no-cache`), in turn with GET one.
import { createHmac, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { Agent, fetch as undiciFetch } from 'undici';
import type { Database } from '../src/db/database.ts';
import { createOrganization } from '../src/orgs/orgs.ts';
import { newId } from '../src/platform/ids.ts';
import { queueEmail } from '../src/platform/outbox/send.ts';
import { writeMissingJson } from '../src/platform/resource/stored-json.ts';
import { tenantOf } from '../src/platform/resource/tenancy.ts';
import { inbox } from '../src/resources/inbox/inbox.resource.ts';
import { seal } from '../src/platform/sealing.ts';
import type { Scope } from '../src/platform/scope.ts';
import { bumpCounter, runWrite } from '../src/platform/write.ts';
import { startSmtp } from '../test/helpers/smtp.ts';
import type { BenchOptions } from './options.ts';
import { runOnServerCore, startWorkerProcess, type Server } from './processes.ts';
import type { Figure } from './scenarios.ts';

export interface MailResults {
  s20_mail_sends: {
    messages: number;
    smtp: { perSecond: number; received: number; signed: number; duplicates: number };
    local: { perSecond: number; delivered: number };
    /** Baseline (i): nodemailer alone, the same messages to the same server. */
    bare: { perSecond: number };
  };
  s21_inbound: { messages: number; perSecond: number; threads: number; refused: number };
  s22_inbox_list: { threads: number; list: Figure; getOne: Figure };
}

type LoadSpecOf = { kind: 'fixed' | 'random-id'; path: string; headers?: Record<string, string>; idsFile?: string };

interface Context {
  kind: 'sqlite' | 'postgres';
  storeUrl: string;
  database: Database;
  options: BenchOptions;
  workDir: string;
  log: (message: string) => void;
  start: (script: string, env: Record<string, string>) => Promise<Server>;
  stop: (server: Server) => Promise<void>;
  inTurn: (runs: Array<{ server: Server; spec: LoadSpecOf }>) => Promise<Figure[]>;
  env: Record<string, string>;
  getOneSpec: LoadSpecOf;
}

const DOMAIN = 'bench-mail.example';
const SELECTOR = 'rds1';
const SMTP_USER = { user: 'ada', password: 'right-password' };
// One mailbox of one tenant sends every message: it may use every slot, as many as scenario 10's
// webhook workers (a worker's sends wait on the store and the SMTP server, not on its core).
const WORKERS_ENV = { WORKER_CONCURRENCY: '64', WORKER_CONCURRENCY_PER_KEY: '64', WORKER_CONCURRENCY_PER_ORG: '64', OUTBOUND_ALLOW_PRIVATE: 'true' };
const RAISED_PUBLIC = { PUBLIC_RATE_LIMIT_PER_SECOND: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000000', OUTBOUND_ALLOW_PRIVATE: 'true' };

async function call<T = { id: string }>(url: string, token: string, body?: unknown): Promise<T> {
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
  if (res.status !== 201) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}

async function until(done: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what} not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Queues `count` messages from the mailbox, as a sequence's writes queue them, in transactions of 500. */
async function queueBacklog(database: Database, scope: Scope, mailboxId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 500) {
    await runWrite(database, scope, async (w) => {
      for (let j = i; j < Math.min(count, i + 500); j++) {
        await queueEmail(w, `bench:${randomUUID()}`, { from: `ada@${DOMAIN}`, fromName: 'Ada Lovelace', to: [`r${j}@example.org`], subject: `Message ${j}`, text: 'Hello from the bench', mailboxId, marketing: true });
      }
    });
  }
}

const countWith = async (database: Database, scope: Scope, status: string) => Number((await database.db.selectFrom('outbox_messages')
  .select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('status', '=', status).executeTakeFirstOrThrow()).n);

async function sends(ctx: Context): Promise<MailResults['s20_mail_sends']> {
  const messages = ctx.options.quick ? 1000 : 5000;
  ctx.log(`${ctx.kind}: scenario 20, ${messages} e-mails through the SMTP adapter, through the local driver, and by nodemailer alone`);
  const smtp = await startSmtp(SMTP_USER);
  const api = await ctx.start('bench/instrumented-server.ts', { ...ctx.env, WORKERS: 'off', OUTBOUND_ALLOW_PRIVATE: 'true' });
  try {
    const org = await createOrganization(ctx.database, { defaultCredits: 1000 }, 'Mail bench', { sandbox: false });
    const keys = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
    const at = Math.floor(Date.now() / 1000);
    await ctx.database.db.insertInto('sending_domains').values({
      org_id: org.org_id, mode: 'live', id: newId('dom'), domain: DOMAIN, description: null, status: 'verified', dkim_selector: SELECTOR,
      dkim_public_key: keys.publicKey, dkim_private_key: seal(ctx.env.SECRET_KEY, keys.privateKey), records: '[]', verified_at: at, last_checked_at: at, created_at: at, updated_at: at,
    }).execute();
    const connection = await call(`${api.url}/v1/connections`, org.live_token, {
      kind: 'email', provider: 'smtp', settings: { smtp: { host: '127.0.0.1', port: smtp.port } }, credentials: { username: SMTP_USER.user, password: SMTP_USER.password },
    });
    const live = await call(`${api.url}/v1/mailboxes`, org.live_token, { email: `ada@${DOMAIN}`, display_name: 'Ada Lovelace', connection_id: connection.id, daily_limit: 100_000 });
    const test = await call(`${api.url}/v1/mailboxes`, org.test_token, { email: `ada@${DOMAIN}`, display_name: 'Ada Lovelace', daily_limit: 100_000 });
    await api.stop();

    const scopes = { live: { orgId: org.org_id, mode: 'live' } as Scope, test: { orgId: org.org_id, mode: 'test' } as Scope };
    await queueBacklog(ctx.database, scopes.live, live.id, messages);
    await queueBacklog(ctx.database, scopes.test, test.id, messages);
    // A store in service has planner statistics; without them PostgreSQL reads a message by its id
    // through another index of the tenant's rows (3.6 ms against 0.4 for the attempt's update).
    if (ctx.kind === 'postgres') await sql`analyze outbox_messages, jobs, mailboxes, events`.execute(ctx.database.db);
    let first = 0;
    let last = 0;
    const seen = new Set<string>();
    const worker = await startWorkerProcess({ DATABASE_URL: ctx.storeUrl, SECRET_KEY: ctx.env.SECRET_KEY, LOG_LEVEL: 'info', ...WORKERS_ENV });
    let local: { perSecond: number; delivered: number };
    try {
      // Live first (its jobs are older); the local driver's sends follow on the same worker.
      await until(() => {
        if (smtp.received.length > 0 && first === 0) first = performance.now();
        if (smtp.received.length >= messages && last === 0) last = performance.now();
        return last > 0;
      }, messages * 50 + 60_000, 'the SMTP sends');
      for (const r of smtp.received) seen.add(r.messageId);
      let start = { at: 0, delivered: 0 };
      let delivered = 0;
      await until(async () => {
        delivered = await countWith(ctx.database, scopes.test, 'delivered');
        if (delivered > 0 && start.at === 0) start = { at: performance.now(), delivered };
        return delivered >= messages;
      }, messages * 20 + 60_000, 'the local driver\'s sends');
      local = { perSecond: Math.round((delivered - start.delivered) / ((performance.now() - start.at) / 1000)), delivered };
    } finally {
      await worker.stop();
    }
    const keyFile = join(ctx.workDir, 'dkim-bench.pem');
    writeFileSync(keyFile, keys.privateKey);
    const bare = await runOnServerCore<{ seconds: number }>('bench/baselines/nodemailer-send.ts', {
      port: smtp.port, ...SMTP_USER, count: messages, inFlight: Number(WORKERS_ENV.WORKER_CONCURRENCY), domain: DOMAIN, selector: SELECTOR, keyFile,
    });
    const signed = smtp.received.slice(0, messages).filter((r) => /^DKIM-Signature:/im.test(r.raw)).length;
    return {
      messages,
      smtp: { perSecond: Math.round((messages - 1) / ((last - first) / 1000)), received: messages, signed, duplicates: messages - seen.size },
      local,
      bare: { perSecond: Math.round(messages / bare.seconds) },
    };
  } finally {
    await ctx.stop(api);
    await smtp.close();
  }
}

/** A raw message as a mail server hands it over; a reply names the message it answers. */
function rawMessage(i: number, answers?: string): Buffer {
  const lines = [
    `From: Person ${i % 997} <person${i % 997}@customer${i % 89}.example>`, 'To: sales@acme.example', `Subject: ${answers ? 'Re: ' : ''}Pilot ${answers ? i - 1 : i}`,
    'Date: Tue, 01 Dec 2026 10:00:00 +0000', `Message-ID: <in.${i}.${randomBytes(4).toString('hex')}@customer.example>`,
    ...(answers ? [`In-Reply-To: ${answers}`, `References: ${answers}`] : []),
    'MIME-Version: 1.0', 'Content-Type: multipart/alternative; boundary="alt"', '',
    '--alt', 'Content-Type: text/plain; charset=utf-8', '', `Hello, message ${i}: Tuesday works for us.`,
    '--alt', 'Content-Type: text/html; charset=utf-8', '', `<p>Hello, message <b>${i}</b>: Tuesday works for us.</p>`, '--alt--', '',
  ];
  return Buffer.from(lines.join('\r\n'));
}

/** Standard Webhooks headers of `body`, as a provider signs a post to the inbound URL. */
function signature(secret: string, body: Buffer): Record<string, string> {
  const id = `msg_${randomBytes(8).toString('hex')}`;
  const at = Math.floor(Date.now() / 1000);
  const mac = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64')).update(`${id}.${at}.`).update(body).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(at), 'webhook-signature': `v1,${mac}` };
}

async function inbound(ctx: Context): Promise<MailResults['s21_inbound']> {
  const messages = ctx.options.quick ? 2000 : 10_000;
  ctx.log(`${ctx.kind}: scenario 21, ${messages} raw messages posted to an inbound URL, parsed and threaded`);
  const api = await ctx.start('bench/instrumented-server.ts', { ...ctx.env, WORKERS: 'off', ...RAISED_PUBLIC });
  const agent = new Agent({ connections: 16 });
  try {
    const org = await createOrganization(ctx.database, { defaultCredits: 1000 }, 'Inbound bench', { sandbox: false });
    const connection = await call(`${api.url}/v1/connections`, org.live_token, { kind: 'email', provider: 'local', name: 'Sales' });
    const link = await call<{ url: string; secret: string }>(`${api.url}/v1/connections/${connection.id}/inbound-url`, org.live_token);
    const path = new URL(link.url).pathname;
    // Message 2k + 1 answers message 2k, which was posted before it by the same sender.
    const bodies: Buffer[] = [];
    for (let i = 0; i < messages; i++) {
      const answered = i % 2 === 1 ? /^Message-ID: (.+)$/m.exec(bodies[i - 1].toString())![1].trim() : undefined;
      bodies.push(rawMessage(i, answered));
    }
    let next = 0;
    let refused = 0;
    const post = async (i: number) => {
      const res = await undiciFetch(`${api.url}${path}`, {
        method: 'POST', body: bodies[i], headers: { 'content-type': 'message/rfc822', ...signature(link.secret, bodies[i]) }, dispatcher: agent,
      });
      await res.arrayBuffer();
      if (res.status !== 200) refused++;
    };
    // Pairs in order: a reply is posted once the message it answers was.
    const postUpTo = (end: number) => Promise.all(Array.from({ length: 16 }, async () => {
      while (next < end) {
        const i = next;
        next += 2;
        await post(i);
        if (i + 1 < messages) await post(i + 1);
      }
    }));
    // A tenth first, untimed: then the store has planner statistics of the inbox, as one in service has.
    const warmup = Math.floor(messages / 20) * 2;
    await postUpTo(warmup);
    if (ctx.kind === 'postgres') await sql`analyze inbox_threads, inbox_messages, outbox_messages, contacts, events`.execute(ctx.database.db);
    const started = performance.now();
    await postUpTo(messages);
    const seconds = (performance.now() - started) / 1000;
    const { n } = await ctx.database.db.selectFrom('inbox_threads').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', org.org_id).where('mode', '=', 'live').executeTakeFirstOrThrow();
    return { messages, perSecond: Math.round((messages - warmup) / seconds), threads: Number(n), refused };
  } finally {
    await agent.close();
    await ctx.stop(api);
  }
}

/** Fills the organization's inbox with `count` threads as receiving would leave them, with the tenant's counter and their stored answers. */
async function seedThreads(database: Database, scope: Scope, count: number): Promise<void> {
  const perStatement = database.dialect === 'sqlite' ? 1000 : 2500;
  const start = Date.UTC(2026, 0, 1);
  for (let i = 0; i < count; i += 25_000) {
    const end = Math.min(count, i + 25_000);
    await database.db.transaction().execute(async (tx) => {
      for (let from = i; from < end; from += perStatement) {
        const rows = [];
        for (let k = from; k < Math.min(end, from + perStatement); k++) {
          const at = Math.floor((start + k * 1000) / 1000);
          rows.push({
            ...tenantOf(scope), id: newId('thr', start + k * 1000), channel: 'email', subject: `Pilot ${k}`, normalized_subject: `pilot ${k}`,
            status: ['open', 'open', 'closed', 'snoozed'][k % 4], snoozed_until: null, assignee: k % 3 === 0 ? 'ada@example.com' : null,
            tags: JSON.stringify(k % 5 === 0 ? ['pricing'] : []), from_address: `person${k % 997}@customer${k % 89}.example`, contact_id: null,
            sequence_id: null, mailbox_id: null, connection_id: null, last_message_at: at, message_count: 1 + (k % 3), doc: null, created_at: at, updated_at: at,
          });
        }
        await tx.insertInto('inbox_threads').values(rows).execute();
      }
      await bumpCounter(tx, database.dialect, scope, 'inbox_threads', end - i);
    });
  }
  // Their answers as the service stores them with its own writes (stored-json.ts).
  await writeMissingJson(database, scope, inbox);
}

async function inboxList(ctx: Context): Promise<MailResults['s22_inbox_list']> {
  const threads = ctx.options.quick ? 20_000 : 100_000;
  ctx.log(`${ctx.kind}: scenario 22, the inbox's first page with its total at ${threads.toLocaleString('en')} threads, in turn with GET one`);
  const org = await createOrganization(ctx.database, { defaultCredits: 1000 }, 'Inbox bench', { sandbox: false });
  await seedThreads(ctx.database, { orgId: org.org_id, mode: 'live' }, threads);
  const api = await ctx.start('bench/instrumented-server.ts', { ...ctx.env, WORKERS: 'off' });
  try {
    const [list, getOne] = await ctx.inTurn([
      { server: api, spec: { kind: 'fixed', path: '/v1/inbox?limit=50', headers: { authorization: `Bearer ${org.live_token}`, 'cache-control': 'no-cache' } } },
      { server: api, spec: ctx.getOneSpec },
    ]);
    return { threads, list, getOne };
  } finally {
    await ctx.stop(api);
  }
}

export async function mailScenarios(ctx: Context): Promise<MailResults> {
  return { s20_mail_sends: await sends(ctx), s21_inbound: await inbound(ctx), s22_inbox_list: await inboxList(ctx) };
}
