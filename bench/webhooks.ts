// Scenarios 9 and 10: webhook deliveries to a local receiver in this process.
// 9: the time from a create's acknowledgement to the arrival of its event at the receiver, under a
//    steady 200 creates per second, with the service's in-process workers (`npm start`).
// 10: sustained deliveries per second to one fast receiver by worker processes (2 on PostgreSQL,
//    1 on SQLite) draining a backlog, and GET one measured alone and during the deliveries on an
//    API-only process (WORKERS=off) of the same run.
import { createServer, type Server as HttpServer } from 'node:http';
import { sql } from 'kysely';
import type { Database } from '../src/db/database.ts';
import type { LoadSpec } from './load.ts';
import type { BenchOptions } from './options.ts';
import { startWorkerProcess, type Server } from './processes.ts';
import type { Figure } from './scenarios.ts';
import { createSeededOrg } from './seed.ts';

export interface WebhookResults {
  s9_delivery_latency: { createsPerSecond: number; events: number; p50: number; p99: number; max: number };
  s10_delivery_throughput: {
    workers: number; concurrency: number; deliveries: number; perSecond: number; getAlone: Figure; getDuring: Figure; slowdown: number;
    /** Deliveries per second while GET one ran at full load beside them (the workers take what the API leaves). */
    perSecondDuringReads: number;
  };
}

interface Context {
  kind: 'sqlite' | 'postgres';
  storeUrl: string;
  database: Database;
  options: BenchOptions;
  log: (message: string) => void;
  start: (script: string, env: Record<string, string>) => Promise<Server>;
  stop: (server: Server) => Promise<void>;
  load: (server: Server, spec: Partial<LoadSpec> & Pick<LoadSpec, 'kind' | 'path'>) => Promise<Figure>;
  env: Record<string, string>;
  getOneSpec: Pick<LoadSpec, 'kind' | 'path'> & Partial<LoadSpec>;
}

// One fast endpoint of one tenant takes every delivery here, so it may use every slot
// (WORKER_CONCURRENCY_PER_KEY, WORKER_CONCURRENCY_PER_ORG).
const WORKERS_ENV = { WORKER_CONCURRENCY: '64', WORKER_CONCURRENCY_PER_KEY: '64', WORKER_CONCURRENCY_PER_ORG: '64' };

/** A receiver answering 204 at once; `onEvent` sees each event's object id as it arrives. */
async function receiver(onEvent: (objectId: string) => void): Promise<{ url: string; server: HttpServer }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(204).end();
      onEvent((JSON.parse(Buffer.concat(chunks).toString()) as { data: { object: { id: string } } }).data.object.id);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, server };
}

async function post(url: string, token: string, body: unknown): Promise<{ status: number; data: { id: string } }> {
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, data: ((await res.json()) as { data: { id: string } }).data };
}

async function until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what} not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const round2 = (x: number) => Math.round(x * 100) / 100;

export async function benchWebhooks(ctx: Context): Promise<WebhookResults> {
  const { options, log } = ctx;

  log(`${ctx.kind}: scenario 9, event-to-delivery latency at 200 creates/s`);
  const acked = new Map<string, number>();
  const arrived = new Map<string, number>();
  const latencyReceiver = await receiver((id) => arrived.set(id, performance.now()));
  const service = await ctx.start('bench/instrumented-server.ts', { ...ctx.env, OUTBOUND_ALLOW_PRIVATE: 'true', ...WORKERS_ENV });
  const org = await createSeededOrg(ctx.database, 'Webhook latency org');
  const hook = await post(`${service.url}/v1/webhooks`, org.token, { url: latencyReceiver.url, event_types: ['contact.created'] });
  if (hook.status !== 201) throw new Error(`webhook endpoint: ${hook.status}`);
  const rate = 200;
  const events = rate * (options.quick ? 3 : 10);
  const started = performance.now();
  const creates: Array<Promise<void>> = [];
  for (let i = 0; i < events; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    creates.push(post(`${service.url}/v1/contacts`, org.token, { list_id: org.listIds[0], name: `Webhook ${i}` }).then((r) => {
      if (r.status !== 201) throw new Error(`create: ${r.status}`);
      acked.set(r.data.id, performance.now());
    }));
  }
  await Promise.all(creates);
  await until(() => arrived.size >= events, 60_000, 'latency deliveries');
  // A delivery can arrive before its create's answer is read: that counts as 0.
  const latencies = [...acked].map(([id, at]) => Math.max(0, arrived.get(id)! - at));
  await ctx.stop(service);
  latencyReceiver.server.close();

  log(`${ctx.kind}: scenario 10, delivery throughput and GET one during deliveries`);
  let delivered = 0;
  let first = 0;
  let last = 0;
  const fastReceiver = await receiver(() => {
    delivered++;
    last = performance.now();
    if (delivered === 1) first = last;
  });
  const api = await ctx.start('bench/instrumented-server.ts', { ...ctx.env, WORKERS: 'off', OUTBOUND_ALLOW_PRIVATE: 'true' });
  const backlogOrg = await createSeededOrg(ctx.database, 'Webhook throughput org');
  await post(`${api.url}/v1/webhooks`, backlogOrg.token, { url: fastReceiver.url, event_types: ['contact.created'] });
  const backlog = options.quick ? 6000 : 30_000;
  let next = 0;
  await Promise.all(Array.from({ length: 50 }, async () => {
    while (next < backlog) {
      const i = next++;
      const r = await post(`${api.url}/v1/contacts`, backlogOrg.token, { list_id: backlogOrg.listIds[0], name: `Backlog ${i}` });
      if (r.status !== 201) throw new Error(`backlog create: ${r.status}`);
    }
  }));
  // A store in service has planner statistics for the backlog's tenant (autovacuum gathers them
  // once a tenth of a table changed); without them PostgreSQL reads a claim's events by a scan of
  // the new tenant (see "Deliveries behind a backlog", bench/results/2026-11-24-2785670.md).
  if (ctx.kind === 'postgres') await sql`analyze events, jobs`.execute(ctx.database.db);
  const getAlone = await ctx.load(api, ctx.getOneSpec);
  const workerCount = ctx.kind === 'postgres' ? 2 : 1;
  const workers = await Promise.all(Array.from({ length: workerCount }, () =>
    startWorkerProcess({ DATABASE_URL: ctx.storeUrl, LOG_LEVEL: 'info', OUTBOUND_ALLOW_PRIVATE: 'true', ...WORKERS_ENV })));
  let getDuring: Figure;
  let stillDelivering: boolean;
  let perSecondDuringReads: number;
  try {
    await until(() => delivered > 0, 30_000, 'first throughput delivery');
    const before = { delivered, at: performance.now() };
    getDuring = await ctx.load(api, ctx.getOneSpec);
    perSecondDuringReads = Math.round((delivered - before.delivered) / ((performance.now() - before.at) / 1000));
    stillDelivering = delivered < backlog;
    await until(() => delivered >= backlog, 300_000, 'throughput deliveries');
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    fastReceiver.server.close();
  }
  await ctx.stop(api);
  if (!stillDelivering) log(`${ctx.kind}: the backlog was delivered before GET one during deliveries ended; its figure is partly idle`);

  return {
    s9_delivery_latency: { createsPerSecond: rate, events, p50: round2(percentile(latencies, 50)), p99: round2(percentile(latencies, 99)), max: round2(Math.max(...latencies)) },
    s10_delivery_throughput: {
      workers: workerCount, concurrency: Number(WORKERS_ENV.WORKER_CONCURRENCY), deliveries: delivered,
      perSecond: Math.round((delivered - 1) / ((last - first) / 1000)),
      getAlone, getDuring, slowdown: round2(1 - getDuring.rps / getAlone.rps), perSecondDuringReads,
    },
  };
}
