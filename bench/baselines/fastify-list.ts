// Baseline (e): bare Fastify routes running the page-plus-count SQL of the service's uncached list
// reads on its store with prepared statements; no auth, no rate limit, no envelope, no logging. The
// limit of an uncached filtered read on this stack. `/contacts`: contacts of one organization
// created in a window, newest first, 50 per page, with the exact total (scenario 2u). `/titled`:
// contacts whose title contains a text, created before a time, the page as the service reads it
// (51 rows: one more tells it whether a next page exists) with the exact total (scenario 4u).
// Baseline (h), `/peer`: contacts whose title contains a word, created from a time, the page and its
// count issued at once as a data API over the store issues them (scenario 19; see peerList).
// Baseline (f), `/deals`: the deals of a pipeline's stage below a given id, 51 rows newest first, the
// page a cursor reaches (scenario 15). The service takes that list's total from the count it made for
// the same filters since the last write, so the bare route reads the page only.
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
app.get<{ Querystring: { title: string; created_after: string } }>('/peer', async (req) => store.peerList(org, req.query.title, Number(req.query.created_after), 51));
app.get<{ Querystring: { pipeline_id: string; stage_id: string; before: string } }>('/deals', async (req) => {
  const rows = await store.dealsPage(org, req.query.pipeline_id, req.query.stage_id, req.query.before, 51);
  return { data: rows.slice(0, 50), has_next: rows.length > 50 };
});
await app.listen({ port: port(), host: '127.0.0.1' });
