// Records kept with their answer as JSON text (`storedJson`, a `doc` column): a page of them joins
// the stored texts, where it would otherwise turn every row into an object and serialize it again.
// Reading a page of 50 deals that way costs a fifth of reading and serializing their rows, and the
// service answers such pages at about twice the rate (docs/performance.md).
//
// The kernel writes a record's text with every create and update through it (store.ts), in the
// same transaction and from the record the write answers. A write that changes records any other way
// (a stage's deals moved or retyped, a stage's probability changed, a custom field removed, a
// referenced record deleted) clears their text instead (`doc = null`, CLEARED) in the same
// statement or transaction; the job below writes it again. A page presents a record without its text
// the ordinary way, so a cleared text costs speed for a while, never a wrong answer.
import { SerializerSelector, type Serializer } from '@fastify/fast-json-stringify-compiler';
import { sql, type Kysely } from 'kysely';
import type { Database, Dialect } from '../../db/database.ts';
import { shaped } from '../../db/prepared.ts';
import type { DB } from '../../db/schema.ts';
import { defineJobKind } from '../jobs/kinds.ts';
import { versionColumn, type Version } from '../list-cache.ts';
import type { PageRequest } from '../pagination.ts';
import type { Scope } from '../scope.ts';
import { runWrite, type QueuedInsert, type WriteContext } from '../write.ts';
import type { ApiRecord, Resource, Row } from './define.ts';
import { filtered, keysetPage, pageShape, present, rowsOf, selectRow } from './store.ts';
import { selectIn, updateIn, type TenantTable } from './tenancy.ts';

/** The column set to null by a write that changes records without presenting them. */
export const CLEARED = { doc: null } as const;

/** A row of a page read for its stored text. */
export interface StoredRow {
  id: string;
  doc: string | null;
}

const serializers = new WeakMap<Resource, Serializer>();

const NON_ASCII = /[\u0080-\uffff]/g;
const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * The record as the resource's routes answer it (serialized with its record schema), with every
 * character beyond ASCII written as its JSON escape (`–` as `\u2013`): the same values to any JSON
 * reader, and a text the runtime reads from the store and writes to the socket as plain bytes,
 * where one character beyond Latin-1 made it a two-byte string to decode and encode again (a page of
 * 50 deals read in 35 µs instead of 53).
 */
export function recordJson(r: Resource, record: ApiRecord): string {
  let serialize = serializers.get(r);
  if (!serialize) {
    serialize = SerializerSelector()(undefined, {})({ schema: r.schemas.record, method: 'GET', url: `/${r.plural}/:id`, httpStatus: '200' });
    serializers.set(r, serialize);
  }
  return serialize(record).replace(NON_ASCII, escaped);
}

const table = (r: Resource) => r.table as TenantTable;

/**
 * Stores a record's text with the write: on its queued insert (`queued`, a new record), else by an
 * update queued with the other statements of the write's end.
 */
export function storeJson(r: Resource, w: WriteContext, record: ApiRecord, queued?: QueuedInsert): void {
  const doc = recordJson(r, record);
  if (queued) return w.setQueued(queued, 'doc', doc);
  w.later(shaped(w.tx, w.dialect, `${r.table} doc`, [doc, w.scope.orgId, w.scope.mode, record.id], () =>
    updateIn(w.tx, table(r), w.scope).set({ doc } as never).where(sql.ref('id'), '=', record.id)));
}

/** One page of the query's records in keyset order, read as their ids and stored texts. */
export function storedPage(r: Resource, db: Kysely<DB>, dialect: Dialect, scope: Scope, query: Record<string, unknown>, page: PageRequest, version?: Version): Promise<StoredRow[]> {
  const build = () => {
    let q = filtered(r, db, dialect, scope, query).select([sql.ref('id').as('id'), sql.ref('doc').as('doc')]);
    if (version) q = q.select(versionColumn(scope) as never);
    return keysetPage(r, q as never, query, page);
  };
  const rows = rowsOf(db, dialect, 'docs', pageShape(r, dialect, scope, query, page, version !== undefined), build) as unknown as Promise<StoredRow[]>;
  return version ? version.from(rows as never) as unknown as Promise<StoredRow[]> : rows;
}

/**
 * The texts of a page's records in its order; those without one presented from their rows (a
 * record deleted since the page was read is left out).
 */
export async function storedJsonOf(r: Resource, db: Kysely<DB>, scope: Scope, rows: StoredRow[]): Promise<string[]> {
  const missing = rows.filter((row) => row.doc === null).map((row) => row.id);
  if (missing.length === 0) return rows.map((row) => row.doc!);
  const full = (await selectRow(r, selectIn(db, table(r), scope), true).where(sql.ref('id'), 'in', missing).execute()) as Row[];
  const records = await present(r, db, scope, full);
  const made = new Map(records.map((record) => [record.id, recordJson(r, record)]));
  return rows.flatMap((row) => row.doc ?? made.get(row.id) ?? []);
}

/** Texts written per transaction by the job below. */
const BATCH = 500;

/** Writes the texts of one tenant's records of `r` that have none, a batch per write; how many. */
export async function writeMissingJson(database: Database, scope: Scope, r: Resource): Promise<number> {
  let written = 0;
  for (;;) {
    // In a write of the tenant: no other write changes these records meanwhile.
    const n = await runWrite(database, scope, async (w) => {
      const rows = (await selectRow(r, selectIn(w.tx, table(r), w.scope), true).where(sql.ref('doc'), 'is', null).orderBy(sql.ref('id')).limit(BATCH).execute()) as Row[];
      const records = await present(r, w.tx, w.scope, rows);
      for (const record of records) storeJson(r, w, record);
      return rows.length;
    });
    written += n;
    if (n < BATCH) return written;
  }
}

/** Writes the cleared texts of every tenant's records, for each resource that keeps them. */
export const writeStoredJson = (resources: Resource[]) => defineJobKind<Record<string, never>>({
  name: 'maintenance.write_stored_json',
  async run(_payload, { database, log }) {
    let written = 0;
    for (const r of resources.filter((x) => x.storedJson)) {
      // The one read across tenants (a partial index holds the records without a text).
      const tenants = await (database.db.selectFrom(table(r)) as unknown as ReturnType<typeof selectIn>)
        .select([sql.ref('org_id').as('orgId'), sql.ref('mode').as('mode')]).distinct().where(sql.ref('doc'), 'is', null).execute() as unknown as Scope[];
      for (const scope of tenants) written += await writeMissingJson(database, scope, r);
    }
    if (written > 0) log.info({ written }, 'stored record texts written');
  },
});
