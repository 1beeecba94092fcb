// Answers of list endpoints and exact totals of filtered lists, kept per tenant and reused while the
// tenant's data has not changed. The version of a tenant's data is its event sequence (the 'events'
// counter): every write records its events and moves that counter in its own transaction, so a
// cached answer is served only while no write has committed since it was computed. The version is
// read from the store on every request (one indexed point read), so writes by other processes
// invalidate as surely as local ones. It is read before the answer is computed: an answer is never
// older than the version it is filed under.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Dialect } from '../db/database.ts';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import type { Scope } from './scope.ts';

const VERSION = statement<{ value: number }>("select value from counters where org_id = ? and mode = ? and name = 'events'");

/** The version of a tenant's data: its event sequence. */
export async function tenantVersion(db: Kysely<DB>, dialect: Dialect, scope: Scope): Promise<number> {
  const row = await VERSION.first(db, dialect, [scope.orgId, scope.mode]);
  return row ? Number(row.value) : 0;
}

interface Entry<T> {
  version: number;
  value: T;
  size: number;
}

/** Least recently used entries go first once either bound is reached. */
class VersionedLru<T> {
  readonly #entries = new Map<string, Entry<T>>();
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxEntries: number, maxBytes: number) {
    this.#maxEntries = maxEntries;
    this.#maxBytes = maxBytes;
  }

  get(key: string, version: number): T | undefined {
    const entry = this.#entries.get(key);
    if (!entry || entry.version !== version) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, version: number, value: T, size: number): void {
    this.#drop(key);
    if (size > this.#maxBytes / 4) return;
    this.#entries.set(key, { version, value, size });
    this.#bytes += size;
    while (this.#entries.size > this.#maxEntries || this.#bytes > this.#maxBytes) this.#drop(this.#entries.keys().next().value as string);
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#bytes -= entry.size;
    this.#entries.delete(key);
  }
}

const MAX_PAGES = 2000;
const MAX_PAGE_BYTES = 16 * 1024 * 1024;
const MAX_TOTALS = 10_000;

export class ListCache {
  readonly #pages = new VersionedLru<string>(MAX_PAGES, MAX_PAGE_BYTES);
  readonly #totals = new VersionedLru<number>(MAX_TOTALS, MAX_TOTALS * 200);

  /**
   * Answers a list request with the serialized page computed for the same tenant, URL and version,
   * or computes it (`compute` gets the version, for `total`), serializes it with the route's schema
   * and keeps it. A request whose parameters are in its body (a search) gives them as `key`, and
   * whether it walks a cursor. Resolves with the reply, which the route's handler returns: Fastify
   * then waits for the answer's onSend hooks (storing an Idempotency-Key's answer, for a search)
   * instead of answering a second time with the handler's empty result.
   */
  async answer(request: FastifyRequest, reply: FastifyReply, compute: (version: number) => Promise<unknown>, body?: { key: string; walking: boolean }): Promise<FastifyReply> {
    const { database } = request.server.services;
    const scope = request.scope;
    const version = await tenantVersion(database.db, database.dialect, scope);
    // Pages reached by a cursor are walked once, cheaply (keyset): only numbered pages, the first
    // above all, are worth keeping. Their totals are kept either way.
    if (body ? body.walking : (request.query as { cursor?: string } | undefined)?.cursor !== undefined) {
      return reply.send(await compute(version));
    }
    const key = `${scope.orgId}|${scope.mode}|${request.url}${body ? `|${body.key}` : ''}`;
    let page = this.#pages.get(key, version);
    if (page === undefined) {
      page = reply.serialize(await compute(version)) as string;
      this.#pages.set(key, version, page, key.length + page.length);
    }
    return reply.type('application/json; charset=utf-8').send(page);
  }

  /** The exact total for `key` (the tenant's endpoint and filters) at `version`, counted once per version. */
  async total(scope: Scope, key: string, version: number, count: () => Promise<number>): Promise<number> {
    const full = `${scope.orgId}|${scope.mode}|${key}`;
    let total = this.#totals.get(full, version);
    if (total === undefined) {
      total = await count();
      this.#totals.set(full, version, total, full.length + 50);
    }
    return total;
  }
}

/**
 * The cache's interface, keeping nothing: for lists whose answers read the clock (an open task
 * becomes overdue with no write), which the data's version alone cannot date.
 */
export const UNCACHED: Pick<ListCache, 'answer' | 'total'> = {
  async answer(_request, reply, compute) {
    return reply.send(await compute(0));
  },
  total: (_scope, _key, _version, count) => count(),
};

/** The cache the lists of a resource go through. */
export const listCacheFor = (lists: ListCache, readsClock: boolean | undefined) => (readsClock ? UNCACHED : lists);
