// Baseline (d): a bare Fastify route inserting one contact row per request (one statement, one
// commit) on the service's store; no validation, no events, no counters, no idempotency.
import Fastify from 'fastify';
import { newId, nowSeconds } from '../../src/platform/ids.ts';
import { port } from './sample.ts';
import { openBareStore } from './store.ts';

const store = openBareStore(process.env.DATABASE_URL!);
const orgId = process.env.BENCH_ORG_ID!;
const app = Fastify({ logger: false });
app.post<{ Body: Record<string, unknown> }>('/contacts', async (req, reply) => {
  const now = nowSeconds();
  const email = String(req.body.work_email);
  const row = { ...req.body, id: newId('con'), org_id: orgId, mode: 'live', email_domain: email.slice(email.lastIndexOf('@') + 1), tags: JSON.stringify(req.body.tags ?? []), created_at: now, updated_at: now };
  await store.insertContact(row);
  return reply.code(201).send(row);
});
await app.listen({ port: port(), host: '127.0.0.1' });
