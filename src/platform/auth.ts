// Authentication of every non-public route (spec section 5): the key (401 if unknown, revoked or
// expired), the rate limit of the key's own organization (section 8), the key's scopes (403 naming
// the missing one), then the organization the request acts in (targeting.ts: X-Org-Id). Key lookups
// are cached for two seconds, so a hot key costs no query, and a key revoked anywhere is refused by
// every process within that time (at once by the process that revoked it). This runs before every
// data request, so its common path (cached key, in-process limiter, no X-Org-Id) is synchronous.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../db/database.ts';
import type { Mode } from '../db/schema.ts';
import { findKeyByHash, parseScopes, touchApiKey } from './credentials.ts';
import { AppError, forbidden, unauthorized } from './errors.ts';
import { nowSeconds } from './ids.ts';
import type { RateLimitDecision, RateLimiter, RateLimits } from './rate-limit/rate-limiter.ts';
import type { Scope } from './scope.ts';
import { grants, requiredScope } from './scopes.ts';
import { targetOf, TARGET_MESSAGES, type LinkCache } from './targeting.ts';
import type { Services } from './services.ts';
import { hashToken, looksLikeJwt } from './tokens.ts';

export interface AuthedKey {
  id: string;
  /** The key's own organization: its rate limit, and the actor recorded on what it does. */
  orgId: string;
  mode: Mode;
  /** An agency key may act for the agency's linked clients (X-Org-Id). */
  isAgency: boolean;
  /** Whether the key's organization is an agency (it may manage clients). */
  orgIsAgency: boolean;
  scopes: readonly string[];
  expiresAt: number | null;
  lastUsedAt: number | null;
}

const CACHE_TTL_MS = 2000;
const CACHE_MAX = 10_000;
const TOUCH_INTERVAL_S = 60;

export const MESSAGES = {
  missing: 'missing Authorization header',
  jwt: 'JWT token provided instead of API key',
  invalid: 'API key not associated with an organization',
  expired: 'API key has expired',
  orgMismatch: TARGET_MESSAGES.orgMismatch,
  testOnly: 'This route simulates what a provider or a person does next, so it takes a test key (svc_test_…): in live mode that comes from the outside world',
};

/** 403 `permission_denied` naming the scope in `detail` and, for programs, in `scope`. */
export const lacksScope = (scope: string) => forbidden(`API key lacks scope ${scope}`, { scope });

/**
 * Keys by presented token, for two seconds. Keyed by the token itself, so a cached request costs
 * no hashing either; the token is already in the process's memory for the request.
 */
export class KeyCache {
  readonly #entries = new Map<string, { key: AuthedKey | null; expires: number }>();

  get(token: string): AuthedKey | null | undefined {
    const entry = this.#entries.get(token);
    if (!entry) return undefined;
    if (entry.expires < Date.now()) {
      this.#entries.delete(token);
      return undefined;
    }
    return entry.key;
  }

  set(token: string, key: AuthedKey | null): void {
    if (this.#entries.size >= CACHE_MAX) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(token, { key, expires: Date.now() + CACHE_TTL_MS });
  }

  /** Drops a key at once (after a revocation in this process). */
  forget(keyId: string): void {
    for (const [token, entry] of this.#entries) if (entry.key?.id === keyId) this.#entries.delete(token);
  }
}

export interface AuthDeps {
  database: Database;
  keys: KeyCache;
  links: LinkCache;
  limiter: RateLimiter;
  limits: RateLimits;
}

/** What authentication needs, taken from the app's services. */
export const authDepsOf = ({ database, keys, links, limiter, config }: Services): AuthDeps => ({
  database, keys, links, limiter, limits: { perSecond: config.rateLimitPerSecond, perMinute: config.rateLimitPerMinute },
});

/** A cached key answers synchronously; only a miss queries the store. */
function lookup(deps: AuthDeps, token: string): AuthedKey | null | Promise<AuthedKey | null> {
  const cached = deps.keys.get(token);
  if (cached !== undefined) return cached;
  return findKeyByHash(deps.database.db, hashToken(token)).then((row) => {
    const key: AuthedKey | null = row
      ? {
        id: row.id, orgId: row.org_id, mode: row.mode, isAgency: Boolean(row.is_agency), orgIsAgency: Boolean(row.org_is_agency),
        scopes: parseScopes(row.scopes), expiresAt: row.expires_at === null ? null : Number(row.expires_at), lastUsedAt: row.last_used_at,
      }
      : null;
    deps.keys.set(token, key);
    return key;
  });
}

/** Best-effort, at most once a minute per key, after the response: never on the critical path. */
function touch(deps: AuthDeps, key: AuthedKey, request: FastifyRequest): void {
  const now = nowSeconds();
  if (key.lastUsedAt !== null && now - key.lastUsedAt < TOUCH_INTERVAL_S) return;
  key.lastUsedAt = now;
  setImmediate(() => {
    touchApiKey(deps.database.db, key.id, now).catch((error: Error) => request.log.warn({ err: { message: error.message } }, 'last_used_at not stamped'));
  });
}

export function setLimitHeaders(reply: FastifyReply, limits: RateLimits, decision: RateLimitDecision): void {
  reply.header('x-ratelimit-limit-second', limits.perSecond);
  reply.header('x-ratelimit-limit-minute', limits.perMinute);
  reply.header('x-ratelimit-remaining', decision.remaining);
  reply.header('x-ratelimit-reset', decision.reset);
}

const rateLimited = (limits: RateLimits, decision: RateLimitDecision) =>
  new AppError('rate_limited', `Rate limit exceeded: at most ${limits.perSecond} requests per second and ${limits.perMinute} per minute per organization; retry after ${decision.retryAfter} s`, {
    headers: { 'retry-after': String(decision.retryAfter) },
  });

/** Charges `bucket`; false when the request is over the limit (the limiter decides in-process when it can). */
function limit(deps: AuthDeps, reply: FastifyReply, bucket: string): RateLimitDecision | Promise<RateLimitDecision> {
  const decided = (decision: RateLimitDecision) => {
    setLimitHeaders(reply, deps.limits, decision);
    return decision;
  };
  return deps.limiter.hitSync ? decided(deps.limiter.hitSync(bucket)) : deps.limiter.hit(bucket).then(decided);
}

function identify(deps: AuthDeps, request: FastifyRequest): AuthedKey | null | Promise<AuthedKey | null> {
  const header = request.headers.authorization;
  if (header === undefined || header === '') throw unauthorized(MESSAGES.missing);
  const match = /^Bearer +([^\s]+) *$/i.exec(header);
  if (!match || match[1].length > 512) throw unauthorized(MESSAGES.invalid);
  const token = match[1];
  if (looksLikeJwt(token)) throw unauthorized(MESSAGES.jwt);
  return lookup(deps, token);
}

/** A failed authentication is charged to the client address, so guessing keys is limited too. */
async function refuse(deps: AuthDeps, request: FastifyRequest, reply: FastifyReply, error: unknown): Promise<never> {
  const decision = await limit(deps, reply, `ip:${request.ip}`);
  if (!decision.allowed) throw rateLimited(deps.limits, decision);
  throw error;
}

function admit(deps: AuthDeps, request: FastifyRequest, reply: FastifyReply, key: AuthedKey | null): void | Promise<void> {
  if (!key) return refuse(deps, request, reply, unauthorized(MESSAGES.invalid));
  if (key.expiresAt !== null && key.expiresAt <= nowSeconds()) return refuse(deps, request, reply, unauthorized(MESSAGES.expired));
  // Charged to the key's own organization, whichever organization the request acts in.
  const decision = limit(deps, reply, `org:${key.orgId}`);
  if (decision instanceof Promise) return decision.then((d) => accept(deps, request, key, d));
  return accept(deps, request, key, decision);
}

function accept(deps: AuthDeps, request: FastifyRequest, key: AuthedKey, decision: RateLimitDecision): void | Promise<void> {
  if (!decision.allowed) throw rateLimited(deps.limits, decision);
  const scope = requiredScope(request.method, request.routeOptions.url ?? '');
  if (scope !== null && !grants(key.scopes, scope)) throw lacksScope(scope);
  const target = targetOf(deps.database.db, deps.links, request, key);
  if (target instanceof Promise) return target.then((orgId) => enter(deps, request, key, orgId));
  enter(deps, request, key, target);
}

function enter(deps: AuthDeps, request: FastifyRequest, key: AuthedKey, orgId: string): void {
  // After the organization is settled, so that a refused X-Org-Id is answered as on any route.
  if (request.routeOptions.config.testOnly === true && key.mode !== 'test') throw forbidden(MESSAGES.testOnly);
  request.apiKey = key;
  request.scope = { orgId, mode: key.mode } satisfies Scope;
  touch(deps, key, request);
}

/**
 * Whether the request's credential would still be admitted now, for a request that lasts (a live
 * event stream asks before each delivery): the key neither revoked nor expired, the route's scope
 * still granted, and the organization it acts in still its own or a linked client. Revocations in
 * this process are seen at once, those in others within the key cache's two seconds. Charges no
 * rate limit: the request was charged when it arrived.
 */
export async function stillAdmitted(deps: AuthDeps, request: FastifyRequest): Promise<boolean> {
  try {
    const key = await identify(deps, request);
    if (!key || key.mode !== request.scope.mode || (key.expiresAt !== null && key.expiresAt <= nowSeconds())) return false;
    const scope = requiredScope(request.method, request.routeOptions.url ?? '');
    if (scope !== null && !grants(key.scopes, scope)) return false;
    return (await targetOf(deps.database.db, deps.links, request, key)) === request.scope.orgId;
  } catch {
    return false;
  }
}

/**
 * Authenticates the request and charges its organization's rate limit; every response carries the
 * rate-limit headers. With the key cached and an in-process limiter this runs synchronously (no
 * promise, no query): it returns a promise only when it has to wait, and throws or rejects with
 * the error to answer.
 */
export function authenticate(deps: AuthDeps, request: FastifyRequest, reply: FastifyReply): void | Promise<void> {
  let key: AuthedKey | null | Promise<AuthedKey | null>;
  try {
    key = identify(deps, request);
  } catch (error) {
    return refuse(deps, request, reply, error);
  }
  if (key instanceof Promise) return key.then((k) => admit(deps, request, reply, k));
  return admit(deps, request, reply, key);
}
