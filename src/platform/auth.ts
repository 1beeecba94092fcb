// Authentication of every non-public route (spec section 5) followed by the rate limit (section 8).
// Key lookups are cached for two seconds, so a hot key costs no query, and a key revoked anywhere
// is refused by every process within that time (at once by the process that revoked it).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../db/database.ts';
import type { Mode } from '../db/schema.ts';
import { findKeyByHash, touchApiKey } from '../resources/api-keys/api-keys.store.ts';
import { AppError, forbidden, unauthorized } from './errors.ts';
import type { RateLimitDecision, RateLimiter, RateLimits } from './rate-limit/rate-limiter.ts';
import type { Scope } from './scope.ts';
import { hashToken, looksLikeJwt } from './tokens.ts';

export interface AuthedKey {
  id: string;
  orgId: string;
  mode: Mode;
  isAgency: boolean;
  lastUsedAt: number | null;
}

const CACHE_TTL_MS = 2000;
const CACHE_MAX = 10_000;
const TOUCH_INTERVAL_S = 60;

export const MESSAGES = {
  missing: 'missing Authorization header',
  jwt: 'JWT token provided instead of API key',
  invalid: 'API key not associated with an organization',
  orgMismatch: 'X-Org-Id does not match the organization of the API key',
};

export class KeyCache {
  readonly #entries = new Map<string, { key: AuthedKey | null; expires: number }>();

  get(hash: string): AuthedKey | null | undefined {
    const entry = this.#entries.get(hash);
    if (!entry) return undefined;
    if (entry.expires < Date.now()) {
      this.#entries.delete(hash);
      return undefined;
    }
    return entry.key;
  }

  set(hash: string, key: AuthedKey | null): void {
    if (this.#entries.size >= CACHE_MAX) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(hash, { key, expires: Date.now() + CACHE_TTL_MS });
  }

  /** Drops a key at once (after a revocation in this process). */
  forget(keyId: string): void {
    for (const [hash, entry] of this.#entries) if (entry.key?.id === keyId) this.#entries.delete(hash);
  }
}

export interface AuthDeps {
  database: Database;
  keys: KeyCache;
  limiter: RateLimiter;
  limits: RateLimits;
}

async function lookup(deps: AuthDeps, token: string): Promise<AuthedKey | null> {
  const hash = hashToken(token);
  const cached = deps.keys.get(hash);
  if (cached !== undefined) return cached;
  const row = await findKeyByHash(deps.database.db, hash);
  const key = row ? { id: row.id, orgId: row.org_id, mode: row.mode, isAgency: Boolean(row.is_agency), lastUsedAt: row.last_used_at } : null;
  deps.keys.set(hash, key);
  return key;
}

/** Best-effort, at most once a minute per key, after the response: never on the critical path. */
function touch(deps: AuthDeps, key: AuthedKey, request: FastifyRequest): void {
  const now = Math.floor(Date.now() / 1000);
  if (key.lastUsedAt !== null && now - key.lastUsedAt < TOUCH_INTERVAL_S) return;
  key.lastUsedAt = now;
  setImmediate(() => {
    touchApiKey(deps.database.db, key.id, now).catch((error: Error) => request.log.warn({ err: { message: error.message } }, 'last_used_at not stamped'));
  });
}

function setLimitHeaders(reply: FastifyReply, limits: RateLimits, decision: RateLimitDecision): void {
  reply.header('x-ratelimit-limit-second', limits.perSecond);
  reply.header('x-ratelimit-limit-minute', limits.perMinute);
  reply.header('x-ratelimit-remaining', decision.remaining);
  reply.header('x-ratelimit-reset', decision.reset);
}

async function limit(deps: AuthDeps, reply: FastifyReply, bucket: string): Promise<void> {
  const decision = await deps.limiter.hit(bucket);
  setLimitHeaders(reply, deps.limits, decision);
  if (!decision.allowed) {
    throw new AppError('rate_limited', `Rate limit exceeded: at most ${deps.limits.perSecond} requests per second and ${deps.limits.perMinute} per minute per organization; retry after ${decision.retryAfter} s`, {
      headers: { 'retry-after': String(decision.retryAfter) },
    });
  }
}

async function identify(deps: AuthDeps, request: FastifyRequest): Promise<AuthedKey> {
  const header = request.headers.authorization;
  if (header === undefined || header === '') throw unauthorized(MESSAGES.missing);
  const match = /^Bearer +([^\s]+) *$/i.exec(header);
  if (!match || match[1].length > 512) throw unauthorized(MESSAGES.invalid);
  const token = match[1];
  if (looksLikeJwt(token)) throw unauthorized(MESSAGES.jwt);
  const key = await lookup(deps, token);
  if (!key) throw unauthorized(MESSAGES.invalid);
  return key;
}

/**
 * Authenticates the request and charges its organization's rate limit. Requests that fail
 * authentication are charged to the client address instead, so guessing keys is limited too and
 * every response carries the rate-limit headers.
 */
export async function authenticate(deps: AuthDeps, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  let key: AuthedKey;
  try {
    key = await identify(deps, request);
  } catch (error) {
    await limit(deps, reply, `ip:${request.ip}`);
    throw error;
  }
  await limit(deps, reply, `org:${key.orgId}`);
  const orgHeader = request.headers['x-org-id'];
  if (orgHeader !== undefined && orgHeader !== key.orgId) throw forbidden(MESSAGES.orgMismatch);
  request.apiKey = key;
  request.scope = { orgId: key.orgId, mode: key.mode } satisfies Scope;
  touch(deps, key, request);
}
