// Baseline (c): a bare Fastify route reading one contact of an organization by primary key with a prepared statement on
// the service's store; no auth, no rate limit, no envelope, no logging.
import Fastify from 'fastify';
import { port } from './sample.ts';
import { openBareStore } from './store.ts';

const store = openBareStore(process.env.DATABASE_URL!);
const org = process.env.BENCH_ORG_ID!;
const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/contacts/:id', async (req, reply) => {
  const row = await store.getContact(org, req.params.id);
  if (!row) return reply.code(404).send({ detail: 'Contact not found' });
  return row;
});
await app.listen({ port: port(), host: '127.0.0.1' });
