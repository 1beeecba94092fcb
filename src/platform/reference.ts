// The interactive API reference at /docs (Scalar), reading /v1/openapi.json in the browser. The
// plugin carries its 4 MB page script as a string and a document parser besides: about 25 MB held
// for as long as the process runs. It is therefore loaded on the first visit, into an application
// of its own that these routes forward to, and a process nobody reads the reference from never
// pays for it.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

const PREFIX = '/docs';
let reference: Promise<FastifyInstance> | undefined;

const TITLE = 'Revenue Data Service API';

/**
 * The reference works offline and sends nothing to the vendor: its page script is served from here,
 * and every feature that would reach the vendor's hosts is turned off.
 */
export const REFERENCE_CONFIGURATION = {
  url: '/v1/openapi.json',
  title: TITLE,
  pageTitle: TITLE,
  // The Inter and JetBrains Mono faces come from fonts.scalar.com: the system's fonts are used instead.
  withDefaultFonts: false,
  // "Open API Client" links to client.scalar.com (each operation's "Test Request" runs here).
  hideClientButton: true,
  // "Ask AI" (the vendor's agent), shown by default on localhost.
  agent: { disabled: true },
  // "Generate MCP", shown by default on localhost.
  mcp: { disabled: true },
  // The toolbar with "Share" and "Deploy" (uploads to the vendor's registry), shown by default on localhost.
  showDeveloperTools: 'never',
  telemetry: false,
} as const;

async function loadReference(): Promise<FastifyInstance> {
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  const inner = Fastify({ logger: false });
  await inner.register(scalar, { routePrefix: PREFIX, configuration: REFERENCE_CONFIGURATION });
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
