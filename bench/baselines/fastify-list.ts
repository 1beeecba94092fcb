// Baseline (e): a bare Fastify route running the page-plus-count SQL of a filtered list (contacts of
// one organization created in a window, newest first, 50 per page, with the exact total) on the
// service's store with prepared statements; no auth, no rate limit, no envelope, no logging. The
// limit of an uncached filtered read on this stack.
import Fastify from 'fastify';
import { port } from './sample.ts';
import { openBareStore } from './store.ts';

const store = openBareStore(process.env.DATABASE_URL!);
const org = process.env.BENCH_ORG_ID!;
const app = Fastify({ logger: false });
app.get<{ Querystring: { created_after: string; created_before: string } }>('/contacts', async (req) => {
  const after = Number(req.query.created_after);
  const before = Number(req.query.created_before);
  const [data, total] = await Promise.all([store.createdPage(org, after, before, 50), store.createdCount(org, after, before)]);
  return { data, total };
});
await app.listen({ port: port(), host: '127.0.0.1' });
