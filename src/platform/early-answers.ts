// Answers made before a route runs: an unknown route, a URL the router refuses (over-long path
// segment, bad percent-encoding in the path or the query), an HTTP version other than 1.x, a request
// without `Host` (or with two), an `Expect` the server cannot meet. They
// are answered in the error shape like any other, and on the API's paths the caller is charged as
// for any request, so the answer carries the rate-limit headers (of the key's organization, or of
// the client address when the key is missing or invalid) and a caller over its budget gets 429.
// The protocol error is answered rather than a 401: what is wrong with the request comes first.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { authDepsOf, authenticate, type AuthDeps } from './auth.ts';
import { AppError, badRequest } from './errors.ts';
import { EXPECTATION_DETAIL, expectationFailed } from './transport.ts';

const ROUTER_ERRORS: Record<string, () => AppError> = {
  FST_ERR_BAD_URL: () => badRequest('Malformed URL'),
  FST_ERR_MAX_PARAM_LENGTH: () => new AppError('uri_too_long', 'A path segment of the URL is too long (at most 100 characters)'),
};

/** The data API and key management; health, the OpenAPI document and the reference are outside. */
export const isApiPath = (url: string | undefined): boolean => url !== undefined && (url.startsWith('/v1/') || url.startsWith('/auth/v1/'));

// RFC 3986 §3.2.2–3.2.3: an IP literal or a registered name (an IPv4 address is one), and a port.
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::[0-9]*)?$/;

const refused = (detail: string) => new AppError('bad_request', detail, { headers: { connection: 'close' } });

/**
 * How often the request names Host and Authorization (Node keeps the first of each and drops the
 * others, which would leave the request meaning what its first line says and its second does not).
 */
function counts(rawHeaders: string[]): { host: number; authorization: number } {
  let host = 0;
  let authorization = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length === 4 && name.toLowerCase() === 'host') host++;
    else if (name.length === 13 && name.toLowerCase() === 'authorization') authorization++;
  }
  return { host, authorization };
}

/** What the platform refuses in any request before routing it, or undefined. */
export function refusalOf(request: FastifyRequest): AppError | undefined {
  const raw = request.raw;
  if (expectationFailed(raw)) return new AppError('expectation_failed', EXPECTATION_DETAIL, { headers: { connection: 'close' } });
  // Node's parser refuses HTTP/1.2 or 3.0 (a 400 from transport.ts) but lets HTTP/2.0 and 0.9 through
  // in HTTP/1 framing, which neither version has: refused the same way, not answered as 1.1.
  if (raw.httpVersionMajor !== 1) return refused('Unsupported HTTP version: send HTTP/1.1 or HTTP/1.0');
  // RFC 9112 §3.2: an HTTP/1.1 request without Host, with more than one, or with one that is not a
  // host and port, is a 400. Two credentials are one too many to choose from.
  const host = raw.headers.host;
  if (host === undefined && raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1) return refused('Host header is required');
  const { host: hosts, authorization } = counts(raw.rawHeaders);
  if (hosts > 1) return refused('Only one Host header is allowed');
  if (host !== undefined && !HOST.test(host)) return refused('Host header is not a valid host');
  if (authorization > 1) return refused('Only one Authorization header is allowed');
  // The query string's escapes must decode (`%zz`, or bytes that are not UTF-8), as the path's must:
  // read leniently, a filter would silently match the text as sent.
  const url = raw.url ?? '';
  const query = url.indexOf('?');
  if (query >= 0 && url.includes('%', query)) {
    try {
      decodeURIComponent(url.slice(query + 1));
    } catch {
      return badRequest('Malformed query string: a percent-escape is not valid UTF-8');
    }
  }
  return undefined;
}

/**
 * Charges the caller of an answer made before its route; calls `done` with the error to answer: a 429
 * when the caller is over its budget, else `answer` (undefined lets the request go on to its handler).
 */
export function chargeEarly(deps: AuthDeps, request: FastifyRequest, reply: FastifyReply, answer: AppError | undefined, done: (error?: Error) => void): void {
  if (!isApiPath(request.url)) return done(answer);
  const settle = (error: unknown) => done(error instanceof AppError && error.status === 429 ? error : answer);
  let pending;
  try {
    pending = authenticate(deps, request, reply);
  } catch (error) {
    return settle(error);
  }
  if (pending) pending.then(() => done(answer), settle);
  else done(answer);
}

/** Fastify's `frameworkErrors`: errors of the router, raised before any hook runs. */
export function routerErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  chargeEarly(authDepsOf(request.server.services), request, reply, (ROUTER_ERRORS[error.code] ?? (() => badRequest('Bad request')))(), (answer) => {
    const appError = answer as AppError;
    if (appError.headers) reply.headers(appError.headers);
    reply.code(appError.status).send(appError.body());
    // No hook runs for these requests: this is their request line.
    request.log.info({ method: request.method, route: 'unknown', status: appError.status, org: request.scope?.orgId }, 'request');
  });
}
