// Baseline (b): a bare Fastify route answering the same JSON as (a), no hooks, no logging.
import Fastify from 'fastify';
import { port, SAMPLE_REPLY } from './sample.ts';

const app = Fastify({ logger: false });
const reply = JSON.parse(SAMPLE_REPLY) as object;
app.get('/*', async () => reply);
await app.listen({ port: port(), host: '127.0.0.1' });
