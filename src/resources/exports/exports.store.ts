// The records of exports: create (with its job), read, list.
import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { SearchRequest } from '../../platform/resource/search.ts';
import { selectIn, tenantOf } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import type { ImportObject } from '../imports/objects.ts';
import { exportJob } from './exports.jobs.ts';

export type ExportRow = Selectable<DB['exports']>;
export const EXPORT_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const parsed = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v) as Record<string, unknown> | null;

/** What an export writes: the records matching the list route's filters, or those of a search. */
export type Selection = { filters: Record<string, unknown>; search: SearchRequest | null };

export function toExport(row: ExportRow) {
  return {
    id: row.id, object: row.object as ImportObject,
    filters: parsed(row.filters) ?? {}, search: parsed(row.search),
    status: row.status as ExportStatus, rows_total: numOrNull(row.rows_total), rows_processed: Number(row.rows_processed),
    size_bytes: Number(row.size_bytes), error: row.error,
    download_url: row.status === 'completed' ? `/v1/exports/${row.id}/file` : null,
    started_at: numOrNull(row.started_at), finished_at: numOrNull(row.finished_at),
    created_at: Number(row.created_at), updated_at: Number(row.updated_at),
  };
}

export async function createExport(w: WriteContext, object: ImportObject, { filters, search }: Selection) {
  const row: ExportRow = {
    ...tenantOf(w.scope), id: newId('exp'), object, filters: JSON.stringify(filters), search: search && JSON.stringify(search), status: 'queued', rows_total: null, rows_processed: 0,
    size_bytes: 0, error: null, started_at: null, finished_at: null, created_at: w.now, updated_at: w.now,
  };
  await w.tx.insertInto('exports').values(row).execute();
  w.enqueue(exportJob, { export_id: row.id });
  return toExport(row);
}

export async function findExport(db: Kysely<DB>, scope: Scope, id: string): Promise<ExportRow> {
  const row = await selectIn(db, 'exports', scope).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Export not found');
  return row as ExportRow;
}

export async function listExports(db: Kysely<DB>, scope: Scope, page: PageRequest) {
  let q = selectIn(db, 'exports', scope).selectAll();
  if (page.after !== undefined) q = q.where('id', '<', String(page.after));
  return (await q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute()) as ExportRow[];
}

export async function countExports(db: Kysely<DB>, scope: Scope) {
  return Number((await selectIn(db, 'exports', scope).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
}
