// Cross-origin use of a public route from browsers, per route. Most public routes want none: a
// page and the forms it posts live on this origin, and without CORS headers a browser lets no other
// site read their answers. A route called from customers' sites (a browser write key's ingestion)
// names the origins allowed, read from the record the request names (a stream's list): a request
// from another origin is 403, and with `requireOrigin` so is a request without an `Origin` header,
// which no browser omits on a cross-origin call (without the check a publishable key would act as
// a secret one from any server).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';

export interface CorsPolicy {
  /** The origins allowed for this request (`https://shop.example.com`), or `*` for any. */
  origins(request: FastifyRequest): readonly string[] | '*' | Promise<readonly string[] | '*'>;
  /** Refuse a request without an `Origin` header (browser write keys). */
  requireOrigin?: boolean;
  /** Request headers a browser may send beyond the CORS-safelisted ones; `content-type` always. */
  headers?: string[];
  /** How long a browser may reuse a preflight's answer, seconds (default 600). */
  maxAge?: number;
}

const forbidden = (detail: string) => new AppError('forbidden', detail);

async function allowed(policy: CorsPolicy, request: FastifyRequest, origin: string): Promise<boolean> {
  const origins = await policy.origins(request);
  return origins === '*' || origins.includes(origin);
}

/** Checks the request's origin against the route's policy and lets the browser read the answer. */
export async function applyCors(policy: CorsPolicy, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const origin = request.headers.origin;
  reply.header('vary', 'Origin');
  if (origin === undefined) {
    if (policy.requireOrigin) throw forbidden('This route is called from a browser: the Origin header is required');
    return;
  }
  if (!(await allowed(policy, request, origin))) throw forbidden(`Origin ${origin} is not allowed to call this route`);
  reply.header('access-control-allow-origin', origin);
}

/** The answer to a browser's preflight (`OPTIONS`) of a route with a policy: 204, or 403 for an origin not allowed. */
export async function answerPreflight(policy: CorsPolicy, method: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await applyCors({ ...policy, requireOrigin: true }, request, reply);
  reply.headers({
    'access-control-allow-methods': method,
    'access-control-allow-headers': ['content-type', ...(policy.headers ?? [])].join(', '),
    'access-control-max-age': String(policy.maxAge ?? 600),
  });
  await reply.code(204).send();
}
