// Baseline (e): bare Fastify routes running the page-plus-count SQL of the service's uncached list
// reads on its store with prepared statements; no auth, no rate limit, no envelope, no logging. The
// limit of an uncached filtered read on this stack. `/contacts`: contacts of one organization
// created in a window, newest first, 50 per page, with the exact total (scenario 2u). `/titled`:
// contacts whose title contains a text, created before a time, the page as the service reads it
// (51 rows: one more tells it whether a next page exists) with the exact total (scenario 4u).
import Fastify from 'fastify';
import { port } from './sample.ts';
import { openBareStore } from './store.ts';

const store = openBareStore(process.env.DATABASE_URL!);
const org = process.env.BENCH_ORG_ID!;
const size = Number(process.env.BENCH_ORG_CONTACTS);
const app = Fastify({ logger: false });
app.get<{ Querystring: { created_after: string; created_before: string } }>('/contacts', async (req) => {
  const after = Number(req.query.created_after);
  const before = Number(req.query.created_before);
  const [data, total] = await Promise.all([store.createdPage(org, after, before, 50), store.createdCount(org, after, before)]);
  return { data, total };
});
app.get<{ Querystring: { title: string; created_before: string } }>('/titled', async (req) =>
  store.titledPage(org, size, req.query.title, Number(req.query.created_before), 51));
await app.listen({ port: port(), host: '127.0.0.1' });
