// Which organization a request acts in. Without `X-Org-Id`, or with the key's own organization, it
// is the key's own. An agency key may name a client organization linked to its agency in the key's
// mode; any other key naming another organization is refused as before. Links are cached for two
// seconds, like keys, so an unlinked or revoked client is refused by every process within that time
// (at once by the process that made the change).
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { AuthedKey } from './auth.ts';
import { isLinked } from './credentials.ts';
import { badRequest, forbidden } from './errors.ts';

const CACHE_TTL_MS = 2000;
const CACHE_MAX = 10_000;
const ORG_ID = /^org_[0-9A-Za-z]{1,60}$/;
/** Routes that always act on the key's own organization: key management, grants, agency clients. */
const OWN_ORGANIZATION_ONLY = ['/auth/v1/', '/v1/agency/'];

export const TARGET_MESSAGES = {
  malformed: 'X-Org-Id must be an organization id (org_…)',
  // The specification names no message for this refusal: it says what would work instead.
  orgMismatch: 'X-Org-Id does not match the organization of the API key (acting for another organization needs an agency key)',
  notLinked: 'Organization not linked to this agency key',
  ownOnly: 'This endpoint acts on the API key\'s own organization only; X-Org-Id may not name a client here',
};

/** Whether an agency may act for a client in a mode, by `<agency>|<mode>|<client>`, for two seconds. */
export class LinkCache {
  readonly #entries = new Map<string, { linked: boolean; expires: number }>();

  get(key: string): boolean | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expires < Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.linked;
  }

  set(key: string, linked: boolean): void {
    if (this.#entries.size >= CACHE_MAX) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { linked, expires: Date.now() + CACHE_TTL_MS });
  }

  /** Drops what is cached about a client at once (after an unlink or a revoked grant in this process). */
  forget(clientOrgId: string): void {
    for (const key of this.#entries.keys()) if (key.endsWith(`|${clientOrgId}`)) this.#entries.delete(key);
  }
}

/**
 * The organization the request acts in; a promise only when a link must be read from the store.
 * Throws 400 for a malformed header and 403 for an organization the key may not act in.
 */
export function targetOf(db: Kysely<DB>, links: LinkCache, request: FastifyRequest, key: AuthedKey): string | Promise<string> {
  const header = request.headers['x-org-id'];
  if (header === undefined || header === key.orgId) return key.orgId;
  if (typeof header !== 'string' || !ORG_ID.test(header)) throw badRequest(TARGET_MESSAGES.malformed);
  if (!key.isAgency) throw forbidden(TARGET_MESSAGES.orgMismatch);
  const cacheKey = `${key.orgId}|${key.mode}|${header}`;
  const decided = (linked: boolean) => {
    if (!linked) throw forbidden(TARGET_MESSAGES.notLinked);
    const url = request.routeOptions.url ?? '';
    if (OWN_ORGANIZATION_ONLY.some((prefix) => url.startsWith(prefix))) throw forbidden(TARGET_MESSAGES.ownOnly);
    return header;
  };
  const cached = links.get(cacheKey);
  if (cached !== undefined) return decided(cached);
  return isLinked(db, key.orgId, key.mode, header).then((linked) => {
    links.set(cacheKey, linked);
    return decided(linked);
  });
}
