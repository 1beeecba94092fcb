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

/** The column under which a page's statement reads the exact total of its filters beside its rows. */
export const TOTAL_COLUMN = '__total';

/** The version as an expression a statement can select beside its rows. */
export const versionColumn = (scope: Scope) =>
  sql<number>`(select value from counters where org_id = ${scope.orgId} and mode = ${scope.mode} and name = 'events')`.as(VERSION_COLUMN);

/**
 * The version an answer is computed at. A kept answer reads it first: it is the answer's key. A page
 * walked by cursor, or asked for the first time, is not kept, and needs the version only to find the
 * total counted since the last write: its own statement may read it beside the rows (`from`), which
 * on PostgreSQL saves a round trip; one statement reads both at one snapshot, and a total counted
 * afterwards is never older than the version it is filed under. The same statement may read the
 * total too (`TOTAL_COLUMN`), when none is kept for its filters: then at that very version.
 */
export class Version {
  #value: Promise<number> | undefined;
  #total: Promise<number | undefined> | undefined;
  readonly #read: () => Promise<number>;

  constructor(read: () => Promise<number>, known?: number) {
    this.#read = read;
    if (known !== undefined) this.#value = Promise.resolve(known);
  }

  get(): Promise<number> {
    return (this.#value ??= this.#read());
  }

  /**
   * Takes the version from a page read with `versionColumn` (read apart when the page is empty), and
   * the total when the page read that too; returns the rows. A version known already stays, and the
   * page's total is not taken then: it may be of another version.
   */
  from<R extends Record<string, unknown>>(rows: Promise<R[]>): Promise<R[]> {
    if (this.#value !== undefined) return rows;
    this.#value = rows.then((page) => (page.length > 0 ? Number(page[0][VERSION_COLUMN] ?? 0) : this.#read()));
    this.#total = rows.then((page) => (page.length > 0 && page[0][TOTAL_COLUMN] !== undefined ? Number(page[0][TOTAL_COLUMN]) : undefined), () => undefined);
    return rows;
  }

  /** The exact total a page read beside its rows at this version (`from`), if it did. */
  total(): Promise<number | undefined> {
    return this.#total ?? Promise.resolve(undefined);
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

  /** An entry is kept for `key`, at any version. */
  has(key: string): boolean {
    return this.#entries.has(key);
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
/** Slots of the doorkeeper: answers computed once recently, by a hash of their key. */
const SEEN_SLOTS = 16_384;

/** FNV-1a over the key's UTF-16 code units: a slot and a check for the doorkeeper, never a key. */
function hashOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * A page is kept the second time its key is computed, not the first: a URL asked once (every
 * uncached filter, a search typed letter by letter) would only push out pages asked again, and a
 * kept page outlives the young generation, whose collections then copy it (a list of 50 contacts,
 * about 25 KB a request). Nor is the version read first for a key asked the first time: the page's
 * own statement reads it. A key seen before and gone from this table costs one more computation.
 */
class Doorkeeper {
  readonly #slots = new Uint32Array(SEEN_SLOTS);

  /** True when `key` was computed recently; notes it otherwise. */
  seenBefore(key: string): boolean {
    const hash = hashOf(key) || 1;
    const slot = hash % SEEN_SLOTS;
    if (this.#slots[slot] === hash) return true;
    this.#slots[slot] = hash;
    return false;
  }
}

/** Computes an answer at `version`; `along`, when given, is that version, to read beside the page's rows. */
type Compute = (version: Version, along: Version | undefined) => Promise<unknown>;

export class ListCache {
  readonly #pages = new VersionedLru<string | Buffer>(MAX_PAGES, MAX_PAGE_BYTES);
  readonly #totals = new VersionedLru<number>(MAX_TOTALS, MAX_TOTALS * 200);
  readonly #seen = new Doorkeeper();

  /**
   * Answers a list request with the serialized page computed for the same tenant, URL and version,
   * or computes it (`compute` gets the version, for `total`), serializes it with the route's schema
   * and keeps it. A request whose parameters are in its body (a search) gives them as `key`, and
   * whether it walks a cursor. Resolves with the reply, which the route's handler returns: Fastify
   * then waits for the answer's onSend hooks (storing an Idempotency-Key's answer, for a search)
   * instead of answering a second time with the handler's empty result. `compute` gets `along` on
   * PostgreSQL for a page that will not be kept, reached by a cursor or asked for the first time: the
   * version is not read yet, and its page statement should read it beside the rows (`versionColumn`,
   * `Version.from`), where a statement is a round trip.
   */
  async answer(request: FastifyRequest, reply: FastifyReply, compute: Compute, body?: { key: string; walking: boolean }): Promise<FastifyReply> {
    const { database } = request.server.services;
    const scope = request.scope;
    const read = () => tenantVersion(database.db, database.dialect, scope);
    // Pages reached by a cursor are walked once, cheaply (keyset): only numbered pages, the first
    // above all, are worth keeping. Their totals are kept either way. A client asking for the page
    // afresh (`Cache-Control: no-cache`) gets it computed and not kept; a kept page is never stale,
    // so this changes only what the answer costs (a benchmark of the computation asks this way).
    const walking = body ? body.walking : (request.query as { cursor?: string } | undefined)?.cursor !== undefined;
    if (walking || /\bno-cache\b/i.test(request.headers['cache-control'] ?? '')) {
      const version = new Version(read);
      return sendAnswer(reply, await compute(version, database.dialect === 'postgres' ? version : undefined));
    }
    const key = `${scope.orgId}|${scope.mode}|${request.url}${body ? `|${body.key}` : ''}`;
    // Neither kept nor computed recently: no version to look it up under, and not kept (Doorkeeper).
    if (!this.#pages.has(key) && !this.#seen.seenBefore(key)) {
      const version = new Version(read);
      return sendAnswer(reply, await compute(version, database.dialect === 'postgres' ? version : undefined));
    }
    const version = await read();
    let page = this.#pages.get(key, version);
    if (page === undefined) {
      const body = await compute(new Version(read, version), undefined);
      page = body instanceof Serialized ? body.bytes : reply.serialize(body) as string;
      this.#pages.set(key, version, page, key.length + page.length);
    }
    return reply.type(JSON_TYPE).send(page);
  }

  /**
   * The exact total for `key` (the tenant's endpoint and filters) at `version`, counted once per
   * version, or taken from the page that read it beside its rows at that version.
   */
  async total(scope: Scope, key: string, at: Version, count: () => Promise<number>): Promise<number> {
    const full = `${scope.orgId}|${scope.mode}|${key}`;
    const version = await at.get();
    let total = this.#totals.get(full, version);
    if (total === undefined) {
      total = (await at.total()) ?? await count();
      this.#totals.set(full, version, total, full.length + 50);
    }
    return total;
  }

  /** A total is kept for `key`, at some version: a page need not read one beside its rows. */
  hasTotal(scope: Scope, key: string): boolean {
    return this.#totals.has(`${scope.orgId}|${scope.mode}|${key}`);
  }
}

/**
 * The cache's interface, keeping nothing: for lists whose answers read the clock (an open task
 * becomes overdue with no write), which the data's version alone cannot date.
 */
export const UNCACHED: Pick<ListCache, 'answer' | 'total' | 'hasTotal'> = {
  async answer(_request, reply, compute) {
    return sendAnswer(reply, await compute(new Version(async () => 0, 0), undefined));
  },
  total: (_scope, _key, _version, count) => count(),
  hasTotal: () => true,
};

/** The cache the lists of a resource go through. */
export const listCacheFor = (lists: ListCache, readsClock: boolean | undefined) => (readsClock ? UNCACHED : lists);
