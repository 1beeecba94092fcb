// The public surface: routes reached without an API key (a quote's page and answers; next unsubscribe
// links, tracking, forms, booking pages, provider callbacks). One call registers such a route with
// everything it needs: no credential, the per-address budget and the per-token one (limits.ts), its
// CORS policy (cors.ts; none by default) and its preflight, a small body limit, the provider's
// signature checked over the raw body (signatures.ts), and errors in the API's shape (error-handler.ts
// answers every error thrown here). Link tokens are looked up by their hash (link-tokens.ts).
//
//   const routes = publicRoutes(fastify);
//   routes.post('/v1/public/quotes/:token/accept', { token: 'token', schema: { … } }, handler);
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  ContextConfigDefault, FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RawReplyDefaultExpression, RawRequestDefaultExpression,
  RawServerDefault, RouteGenericInterface, RouteHandlerMethod, RouteOptions,
} from 'fastify';
import { AppError } from '../errors.ts';
import { installJsonBodies } from '../json-body.ts';
import type { RateLimits } from '../rate-limit/rate-limiter.ts';
import { answerPreflight, applyCors, type CorsPolicy } from './cors.ts';
import { chargePublic } from './limits.ts';
import { verifySignature, type SignatureScheme } from './signatures.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Refusals a public route documents though it takes no key: 403 (CORS), 401 (a signature). */
    refuses?: number[];
  }
}

/** The body limit of public routes: their bodies are a form's fields or a provider's callback. */
export const PUBLIC_BODY_LIMIT = 64 * 1024;

export interface PublicRouteOptions<S extends FastifySchema> {
  /** The route's schema, as any route's (the document marks it keyless: config.public). */
  schema: S;
  /** The path parameter carrying a link's token: the route is limited per token beside per address. */
  token?: string;
  /** The budget of one token, when not TOKEN_SHARE times an address's (limits.ts). */
  tokenLimits?: RateLimits;
  /** Which sites' pages may call the route from a browser; none by default. */
  cors?: CorsPolicy;
  /** Largest body accepted, bytes (PUBLIC_BODY_LIMIT by default); larger is 413. */
  bodyLimit?: number;
  /** A provider callback: the provider's signature, checked before the handler runs (401 when it fails). */
  signature?: SignatureCheck;
}

export interface SignatureCheck {
  scheme: SignatureScheme;
  /** The secrets the signature may be made with (the current one, and the previous while a rotation overlaps). */
  secrets(request: FastifyRequest): readonly string[] | Promise<readonly string[]>;
}

type Handler<S extends FastifySchema> = RouteHandlerMethod<
  RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, RouteGenericInterface, ContextConfigDefault, S, TypeBoxTypeProvider
>;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

const formOf = (body: Buffer): Record<string, string | string[]> => {
  const form: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    const held = form[name];
    form[name] = held === undefined ? value : [held, value].flat();
  }
  return form;
};

/** Parsers that keep the raw bytes a signature is made over: JSON (as everywhere) and form bodies (Twilio's). */
function keepRawBodies(scoped: FastifyInstance): void {
  installJsonBodies(scoped, { keepRaw: true });
  scoped.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    done(null, formOf(body));
  });
}

const verifying = (check: SignatureCheck) => async (request: FastifyRequest): Promise<void> => {
  const form = request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') ? request.body as Record<string, string | string[]> : undefined;
  const signed = { url: `${request.protocol}://${request.host}${request.url}`, headers: request.headers, rawBody: request.rawBody ?? Buffer.alloc(0), form };
  // The real time, not the service's clock: the provider signed by its own (clock.ts).
  const verdict = verifySignature(check.scheme, await check.secrets(request), signed, Math.floor(Date.now() / 1000));
  if (!verdict.ok) throw new AppError('unauthorized', verdict.reason);
};

/** The registrar of `fastify`'s public routes: `get`, `post`, … each one call per route. */
export function publicRoutes(fastify: FastifyInstance) {
  function register<S extends FastifySchema>(method: Method, url: string, options: PublicRouteOptions<S>, handler: Handler<S>): void {
    const { token, tokenLimits, cors } = options;
    const charge = (request: FastifyRequest, reply: FastifyReply) => {
      const value = token === undefined ? undefined : (request.params as Record<string, string | undefined>)[token];
      return chargePublic(request, reply, value === undefined ? undefined : { value, limits: tokenLimits });
    };
    const route: RouteOptions = {
      method, url, handler: handler as RouteOptions['handler'],
      schema: options.schema,
      config: { public: true, refuses: [...(cors ? [403] : []), ...(options.signature ? [401] : [])] },
      bodyLimit: options.bodyLimit ?? PUBLIC_BODY_LIMIT,
      onRequest: async (request, reply) => {
        await charge(request, reply);
        if (cors) await applyCors(cors, request, reply);
      },
      ...(options.signature ? { preHandler: verifying(options.signature) } : {}),
    };
    if (options.signature) {
      fastify.register(async (scoped) => {
        keepRawBodies(scoped);
        scoped.route(route);
      });
    } else {
      fastify.route(route);
    }
    if (!cors) return;
    // The browser's preflight: charged like the request it announces, never documented.
    const { params, querystring } = options.schema as { params?: unknown; querystring?: unknown };
    fastify.route({
      method: 'OPTIONS', url, config: { public: true },
      schema: { hide: true, ...(params ? { params } : {}), ...(querystring ? { querystring } : {}) } as FastifySchema,
      onRequest: charge,
      handler: (request, reply) => answerPreflight(cors, method, request, reply),
    });
  }
  const on = (method: Method) => <S extends FastifySchema>(url: string, options: PublicRouteOptions<S>, handler: Handler<S>) => register(method, url, options, handler);
  return { get: on('GET'), post: on('POST'), put: on('PUT'), patch: on('PATCH'), delete: on('DELETE') };
}
