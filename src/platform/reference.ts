// The interactive API reference at /docs (Scalar), reading /v1/openapi.json in the browser. The
// plugin carries its 4 MB page script as a string and a document parser besides: about 25 MB held
// for as long as the process runs. It is therefore loaded on the first visit, into an application
// of its own that these routes forward to, and a process nobody reads the reference from never
// pays for it.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

const PREFIX = '/docs';
let reference: Promise<FastifyInstance> | undefined;

async function loadReference(): Promise<FastifyInstance> {
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  const inner = Fastify({ logger: false });
  await inner.register(scalar, { routePrefix: PREFIX, configuration: { url: '/v1/openapi.json', title: 'Revenue Data Service API' } });
  await inner.ready();
  return inner;
}

/** The headers of the reference's answer that describe it (its length is set again on sending). */
const KEPT = ['content-type', 'location', 'cache-control'];

async function forward(request: FastifyRequest, reply: FastifyReply) {
  reference ??= loadReference().catch((err: unknown) => {
    reference = undefined;
    throw err;
  });
  const answer = await (await reference).inject({ method: 'GET', url: request.url });
  for (const name of KEPT) if (answer.headers[name] !== undefined) reply.header(name, answer.headers[name]);
  reply.code(answer.statusCode);
  return answer.rawPayload.length > 0 ? reply.send(answer.rawPayload) : reply.send();
}

export async function referenceRoutes(app: FastifyInstance): Promise<void> {
  for (const url of [PREFIX, `${PREFIX}/`, `${PREFIX}/js/scalar.js`]) {
    app.get(url, { config: { public: true }, schema: { hide: true }, logLevel: 'warn' }, forward);
  }
}
