// The records of imports: create (with its job, in the write's transaction), read, list, cancel, and
// the errors of their rows.
import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { conflict, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { selectIn, tenantOf, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { deleteFile } from './files.ts';
import type { ImportStatus, WriteMode } from './imports.schemas.ts';
import { importJob } from './imports.jobs.ts';
import type { ImportObject } from './objects.ts';
import type { Delimiter } from './csv.ts';

export type ImportRow = Selectable<DB['imports']>;

export const NOT_FOUND = 'Import not found';
const ENDED: readonly string[] = ['completed', 'completed_with_errors', 'failed', 'cancelled'];
export const isEnded = (status: string) => ENDED.includes(status);

const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) as unknown : v);
const num = (v: unknown) => Number(v);
const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export function toImport(row: ImportRow) {
  return {
    id: row.id, object: row.object as ImportObject, mode: row.write_mode as WriteMode, list_id: row.list_id,
    mapping: json(row.mapping) as Record<string, string>, status: row.status as ImportStatus,
    source: row.source as 'upload' | 'url', filename: row.filename, size_bytes: num(row.size_bytes),
    rows_total: num(row.rows_total), rows_processed: num(row.rows_processed),
    created: num(row.rows_created), updated: num(row.rows_updated), skipped: num(row.rows_skipped), failed: num(row.rows_failed),
    error: row.error, started_at: numOrNull(row.started_at), finished_at: numOrNull(row.finished_at),
    created_at: num(row.created_at), updated_at: num(row.updated_at),
  };
}

export interface NewImport {
  id: string;
  object: ImportObject;
  mode: WriteMode;
  listId: string | null;
  mapping: Record<string, string>;
  source: 'upload' | 'url';
  filename: string | null;
  sizeBytes: number;
  delimiter: Delimiter;
  rowsTotal: number;
}

export const newImportId = () => newId('imp');

/** Records the import of a stored file and enqueues its job, in the write's transaction. */
export async function createImport(w: WriteContext, given: NewImport) {
  const row: ImportRow = {
    ...tenantOf(w.scope), id: given.id, object: given.object, write_mode: given.mode, list_id: given.listId,
    mapping: JSON.stringify(given.mapping), source: given.source, filename: given.filename, size_bytes: given.sizeBytes,
    delimiter: given.delimiter, status: 'queued', rows_total: given.rowsTotal, rows_processed: 0,
    rows_created: 0, rows_updated: 0, rows_skipped: 0, rows_failed: 0, error: null, started_at: null, finished_at: null,
    created_at: w.now, updated_at: w.now,
  };
  await w.tx.insertInto('imports').values(row).execute();
  w.enqueue(importJob, { import_id: given.id });
  return toImport(row);
}

export async function findImport(db: Kysely<DB>, scope: Scope, id: string): Promise<ImportRow> {
  const row = await selectIn(db, 'imports', scope).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(NOT_FOUND);
  return row as ImportRow;
}

export async function listImports(db: Kysely<DB>, scope: Scope, query: { status?: string }, page: PageRequest) {
  let q = selectIn(db, 'imports', scope).selectAll();
  if (query.status) q = q.where('status', '=', query.status);
  if (page.after !== undefined) q = q.where('id', '<', String(page.after));
  return (await q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute()) as ImportRow[];
}

export async function countImports(db: Kysely<DB>, scope: Scope, query: { status?: string }) {
  let q = selectIn(db, 'imports', scope).select((eb) => eb.fn.countAll<number>().as('n'));
  if (query.status) q = q.where('status', '=', query.status);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** Stops a queued or running import: the batch in flight rolls back, the rows written stay. */
export async function cancelImport(w: WriteContext, id: string) {
  const row = await findImport(w.tx, w.scope, id);
  if (isEnded(row.status)) throw conflict(`Import is already ${row.status}`);
  const after = { ...row, status: 'cancelled', finished_at: w.now, updated_at: w.now };
  await updateIn(w.tx, 'imports', w.scope).set({ status: 'cancelled', finished_at: w.now, updated_at: w.now }).where('id', '=', id).execute();
  await deleteFile(w.tx, w.scope, id);
  const record = toImport(after);
  w.emit('import.cancelled', record);
  return record;
}

export interface RowError {
  row: number;
  column: string | null;
  message: string;
}

/** A page's position in the errors: the last (row, n) read, as one number (a row has at most ERRORS_PER_ROW errors). */
export const ERRORS_PER_ROW = 20;
export const errorKey = (r: { row: unknown; n: unknown }) => Number(r.row) * ERRORS_PER_ROW + Number(r.n);

/** Errors of an import in row order; `after` is the errorKey of the last error of the previous page. */
export async function listErrors(db: Kysely<DB>, scope: Scope, importId: string, page: { after?: string | number; offset: number; take: number }) {
  let q = selectIn(db, 'import_errors', scope).select(['row', 'n', 'column_name', 'message']).where('import_id', '=', importId);
  if (page.after !== undefined) {
    const key = Number(page.after);
    const row = Math.floor(key / ERRORS_PER_ROW);
    q = q.where((eb) => eb.or([eb('row', '>', row), eb.and([eb('row', '=', row), eb('n', '>', key % ERRORS_PER_ROW)])]));
  }
  return q.orderBy('row').orderBy('n').limit(page.take).offset(page.offset).execute();
}

export async function countErrors(db: Kysely<DB>, scope: Scope, importId: string) {
  const r = await selectIn(db, 'import_errors', scope).select((eb) => eb.fn.countAll<number>().as('n')).where('import_id', '=', importId).executeTakeFirstOrThrow();
  return Number(r.n);
}

export const toError = (r: { row: unknown; column_name: string | null; message: string }): RowError => ({ row: Number(r.row), column: r.column_name, message: r.message });
