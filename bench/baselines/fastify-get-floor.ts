// Baseline (g): baseline (c) plus only what the specification and the design ask of every
// authenticated answer, each done the cheapest way: the Bearer token looked up in a map, the two
// rate-limit windows as fixed counters, their four headers, the contact's `suppressed` in its
// statement, the `{"data": …}` envelope of the record's API fields, and one JSON log line with the
// request's id. No hooks, no response schema, no scopes or idempotency: a lower bound of the
// service's GET one on this stack.
import Fastify from 'fastify';
import pino from 'pino';
import { port } from './sample.ts';
import { openBareStore } from './store.ts';

const store = openBareStore(process.env.DATABASE_URL!);
const org = process.env.BENCH_ORG_ID!;
const keys = new Map([[process.env.BENCH_TOKEN!, { id: 'key_bench', orgId: org }]]);
const perSecond = Number(process.env.RATE_LIMIT_PER_SECOND ?? 50);
const perMinute = Number(process.env.RATE_LIMIT_PER_MINUTE ?? 1000);
const windows = new Map<string, { second: number; secondCount: number; minute: number; minuteCount: number }>();
const log = pino({}, pino.destination({ dest: 1, sync: false, minLength: 12 * 1024 }));
const HIDDEN = new Set(['org_id', 'mode', 'email_domain']);

const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/v1/contacts/:id', async (req, reply) => {
  const header = req.headers.authorization;
  const key = header?.startsWith('Bearer ') ? keys.get(header.slice(7)) : undefined;
  if (!key) return reply.code(401).send({ detail: 'Invalid API key' });
  const now = Date.now();
  const second = Math.floor(now / 1000);
  const minute = Math.floor(now / 60_000);
  let w = windows.get(key.id);
  if (!w) windows.set(key.id, (w = { second, secondCount: 0, minute, minuteCount: 0 }));
  if (w.second !== second) {
    w.second = second;
    w.secondCount = 0;
  }
  if (w.minute !== minute) {
    w.minute = minute;
    w.minuteCount = 0;
  }
  if (w.secondCount >= perSecond || w.minuteCount >= perMinute) return reply.code(429).send({ detail: 'Rate limit exceeded' });
  w.secondCount++;
  w.minuteCount++;
  reply.headers({
    'x-ratelimit-limit-second': perSecond,
    'x-ratelimit-limit-minute': perMinute,
    'x-ratelimit-remaining': perMinute - w.minuteCount,
    'x-ratelimit-reset': (minute + 1) * 60,
  });
  const row = await store.getContactSuppressed(key.orgId, req.params.id);
  let answer: object;
  if (!row) {
    reply.code(404);
    answer = { detail: 'Contact not found' };
  } else {
    const data: Record<string, unknown> = {};
    for (const name in row) if (!HIDDEN.has(name)) data[name] = row[name];
    // JSON text and numbers on SQLite; parsed JSON and bigint text from PostgreSQL's driver.
    data.created_at = Number(row.created_at);
    data.updated_at = Number(row.updated_at);
    data.tags = typeof row.tags === 'string' ? JSON.parse(row.tags) : row.tags;
    data.custom_fields = typeof row.custom_fields === 'string' ? JSON.parse(row.custom_fields) : row.custom_fields;
    data.suppressed = Boolean(row.suppressed);
    answer = { data };
  }
  log.info({ reqId: req.id, method: 'GET', route: '/v1/contacts/:id', status: reply.statusCode, org: key.orgId }, 'request');
  return answer;
});
await app.listen({ port: port(), host: '127.0.0.1' });
