// Answers of list endpoints and exact totals of filtered lists, kept per tenant and reused while the
// tenant's data has not changed. The version of a tenant's data is its event sequence (the 'events'
// counter): every write records its events and moves that counter in its own transaction, so a
// cached answer is served only while no write has committed since it was computed. The version is
// read from the store on every request (one indexed point read, or a column of a walked page's own
// statement: `Version`), so writes by other processes invalidate as surely as local ones. It is read
// before the answer is computed, or with it: an answer is never older than the version it is filed under.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
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

/** The column under which a page's statement reads the version beside its rows (`Version.from`). */
export const VERSION_COLUMN = '__version';

/** The version as an expression a statement can select beside its rows. */
export const versionColumn = (scope: Scope) =>
  sql<number>`(select value from counters where org_id = ${scope.orgId} and mode = ${scope.mode} and name = 'events')`.as(VERSION_COLUMN);

/**
 * The version an answer is computed at. A kept answer reads it first: it is the answer's key. A page
 * walked by cursor is never kept, and needs the version only to find the total counted since the
 * last write: its own statement may read it beside the rows (`from`), which on PostgreSQL saves a
 * round trip; one statement reads both at one snapshot, and a total counted afterwards is never
 * older than the version it is filed under.
 */
export class Version {
  #value: Promise<number> | undefined;
  readonly #read: () => Promise<number>;

  constructor(read: () => Promise<number>, known?: number) {
    this.#read = read;
    if (known !== undefined) this.#value = Promise.resolve(known);
  }

  get(): Promise<number> {
    return (this.#value ??= this.#read());
  }

  /** Takes the version from a page read with `versionColumn` (read apart when the page is empty); returns the rows. */
  from<R extends Record<string, unknown>>(rows: Promise<R[]>): Promise<R[]> {
    this.#value ??= rows.then((page) => (page.length > 0 ? Number(page[0][VERSION_COLUMN] ?? 0) : this.#read()));
    return rows;
  }
}

/** An answer already serialized to bytes (a page of stored texts, stored-json.ts): sent as it is. */
export class Serialized {
  readonly bytes: Buffer;
  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';
const sendAnswer = (reply: FastifyReply, body: unknown) =>
  (body instanceof Serialized ? reply.type(JSON_TYPE).send(body.bytes) : reply.send(body));

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

/** Computes an answer at `version`; `along`, when given, is that version, to read beside the page's rows. */
type Compute = (version: Version, along: Version | undefined) => Promise<unknown>;

export class ListCache {
  readonly #pages = new VersionedLru<string | Buffer>(MAX_PAGES, MAX_PAGE_BYTES);
  readonly #totals = new VersionedLru<number>(MAX_TOTALS, MAX_TOTALS * 200);

  /**
   * Answers a list request with the serialized page computed for the same tenant, URL and version,
   * or computes it (`compute` gets the version, for `total`), serializes it with the route's schema
   * and keeps it. A request whose parameters are in its body (a search) gives them as `key`, and
   * whether it walks a cursor. Resolves with the reply, which the route's handler returns: Fastify
   * then waits for the answer's onSend hooks (storing an Idempotency-Key's answer, for a search)
   * instead of answering a second time with the handler's empty result. `compute` gets `along` for
   * a page reached by a cursor on PostgreSQL: the version is not read yet, and its page statement
   * should read it beside the rows (`versionColumn`, `Version.from`), where a statement is a round trip.
   */
  async answer(request: FastifyRequest, reply: FastifyReply, compute: Compute, body?: { key: string; walking: boolean }): Promise<FastifyReply> {
    const { database } = request.server.services;
    const scope = request.scope;
    const read = () => tenantVersion(database.db, database.dialect, scope);
    // Pages reached by a cursor are walked once, cheaply (keyset): only numbered pages, the first
    // above all, are worth keeping. Their totals are kept either way.
    if (body ? body.walking : (request.query as { cursor?: string } | undefined)?.cursor !== undefined) {
      const version = new Version(read);
      return sendAnswer(reply, await compute(version, database.dialect === 'postgres' ? version : undefined));
    }
    const version = await read();
    const key = `${scope.orgId}|${scope.mode}|${request.url}${body ? `|${body.key}` : ''}`;
    let page = this.#pages.get(key, version);
    if (page === undefined) {
      const body = await compute(new Version(read, version), undefined);
      page = body instanceof Serialized ? body.bytes : reply.serialize(body) as string;
      this.#pages.set(key, version, page, key.length + page.length);
    }
    return reply.type(JSON_TYPE).send(page);
  }

  /** The exact total for `key` (the tenant's endpoint and filters) at `version`, counted once per version. */
  async total(scope: Scope, key: string, at: Version, count: () => Promise<number>): Promise<number> {
    const full = `${scope.orgId}|${scope.mode}|${key}`;
    const version = await at.get();
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
    return sendAnswer(reply, await compute(new Version(async () => 0, 0), undefined));
  },
  total: (_scope, _key, _version, count) => count(),
};

/** The cache the lists of a resource go through. */
export const listCacheFor = (lists: ListCache, readsClock: boolean | undefined) => (readsClock ? UNCACHED : lists);
