// The budgets of keyless routes, apart from the API's per-organization one: each client address has
// PUBLIC_RATE_LIMIT_PER_SECOND / _PER_MINUTE across every public route, and each link token (by its
// hash, whoever calls) a budget of its own, so that many addresses cannot hammer one record. The
// answer carries the address's budget in the spec's X-RateLimit-* headers, success and 429 alike.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { setLimitHeaders } from '../auth.ts';
import { AppError } from '../errors.ts';
import type { RateLimitDecision, RateLimits } from '../rate-limit/rate-limiter.ts';
import { hashSecret } from '../tokens.ts';

/** A link is opened by a few people at once (a buying committee), each from an address of their own. */
export const TOKEN_SHARE = 4;

export const addressLimits = (request: FastifyRequest): RateLimits => {
  const c = request.server.services.config;
  return { perSecond: c.publicRateLimitPerSecond, perMinute: c.publicRateLimitPerMinute };
};

/** The budget of one token unless the route names its own: TOKEN_SHARE times an address's. */
export const tokenLimits = (request: FastifyRequest): RateLimits => {
  const limits = addressLimits(request);
  return { perSecond: limits.perSecond * TOKEN_SHARE, perMinute: limits.perMinute * TOKEN_SHARE };
};

const refusal = (limits: RateLimits, decision: RateLimitDecision, per: string) =>
  new AppError('rate_limited', `Rate limit exceeded: at most ${limits.perSecond} requests per second and ${limits.perMinute} per minute per ${per}; retry after ${decision.retryAfter} s`, {
    headers: { 'retry-after': String(decision.retryAfter) },
  });

/**
 * Charges the client address, then (given) the token; 429 past either budget. A request refused for
 * its address is not charged to the token, so one address over its budget uses up no link's.
 */
export async function chargePublic(request: FastifyRequest, reply: FastifyReply, token?: { value: string; limits?: RateLimits }): Promise<void> {
  const limiter = request.server.services.publicLimiter;
  const limits = addressLimits(request);
  const decision = await limiter.hit(`public:${request.ip}`, limits);
  setLimitHeaders(reply, limits, decision);
  if (!decision.allowed) throw refusal(limits, decision, 'client address');
  if (token === undefined) return;
  const perToken = token.limits ?? tokenLimits(request);
  // Keyed by the token's hash: the limiter's store never holds a token.
  const charged = await limiter.hit(`public-token:${hashSecret(token.value)}`, perToken);
  if (!charged.allowed) {
    setLimitHeaders(reply, perToken, charged);
    throw refusal(perToken, charged, 'link');
  }
}
