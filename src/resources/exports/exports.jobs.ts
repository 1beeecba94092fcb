// The work of an export: the records matching its filters read a page at a time in keyset order, in
// their API form, written as CSV chunks to the store. An export that is interrupted starts over
// (its partial file is dropped first): it writes nothing else, so running it twice is harmless.
import type { Database } from '../../db/database.ts';
import type { Mode } from '../../db/schema.ts';
import { defineJobKind } from '../../platform/jobs/kinds.ts';
import { resolveCustomFilters } from '../../platform/resource/custom-field-values.ts';
import { fieldDefinitions } from '../../platform/resource/custom-fields.ts';
import type { Row } from '../../platform/resource/define.ts';
import { countRows, filtered, keysetPage, present } from '../../platform/resource/store.ts';
import { selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { runWrite } from '../../platform/write.ts';
import { csvLine } from '../imports/csv.ts';
import { ChunkWriter, deleteFile } from '../imports/files.ts';
import { IMPORTABLE, writableFields, type ImportObject } from '../imports/objects.ts';
import { toExport, type ExportRow } from './exports.store.ts';

const PAGE = 500;

export const exportJob = defineJobKind<{ export_id: string }>({
  name: 'exports.run',
  async run({ export_id }, { database, job }) {
    await runExport(database, { orgId: job.orgId, mode: job.mode as Mode }, export_id);
  },
});

/** A value as a CSV cell: lists joined by `, ` (read back as a list by an import), objects as JSON. */
function cell(value: unknown): unknown {
  if (Array.isArray(value)) return value.join(', ');
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return value;
}

export async function runExport(database: Database, scope: Scope, id: string): Promise<void> {
  const { db, dialect } = database;
  const start = await selectIn(db, 'exports', scope).selectAll().where('id', '=', id).executeTakeFirst() as ExportRow | undefined;
  if (!start || start.status === 'completed' || start.status === 'failed') return;
  const r = IMPORTABLE[start.object as ImportObject].resource;
  const filters = (typeof start.filters === 'string' ? JSON.parse(start.filters) : start.filters) as Record<string, unknown>;
  await deleteFile(db, scope, id);
  const now = Math.floor(Date.now() / 1000);
  const query = await resolveCustomFilters(r, db, scope, filters);
  const total = await countRows(r, db, dialect, scope, query);
  await updateIn(db, 'exports', scope).set({ status: 'running', started_at: now, updated_at: now, rows_total: total, rows_processed: 0 }).where('id', '=', id).execute();

  const custom = r.customFields ? (await fieldDefinitions(db, scope, r.plural)).map((d) => d.name) : [];
  const fields = writableFields(r);
  const writer = new ChunkWriter(db, scope, id);
  await writer.write(Buffer.from(csvLine(['id', ...fields, ...custom.map((n) => `custom_fields.${n}`), 'created_at', 'updated_at'])));
  let after: string | undefined;
  let processed = 0;
  for (;;) {
    const rows = (await keysetPage(r, filtered(r, db, dialect, scope, query).selectAll(), query, { after, offset: 0, take: PAGE }).execute()) as Row[];
    if (rows.length === 0) break;
    const records = await present(r, db, scope, rows);
    const text = records.map((rec) => {
      const values = (rec.custom_fields ?? {}) as Record<string, unknown>;
      return csvLine([rec.id, ...fields.map((f) => cell(rec[f])), ...custom.map((n) => cell(values[n])), rec.created_at, rec.updated_at]);
    }).join('');
    await writer.write(Buffer.from(text));
    processed += rows.length;
    after = rows[rows.length - 1].id;
    await updateIn(db, 'exports', scope).set({ rows_processed: processed, updated_at: Math.floor(Date.now() / 1000) }).where('id', '=', id).execute();
    if (rows.length < PAGE) break;
  }
  await writer.end();
  await runWrite(database, scope, async (w) => {
    const done: ExportRow = { ...start, status: 'completed', rows_total: processed, rows_processed: processed, size_bytes: writer.bytes, started_at: now, finished_at: w.now, updated_at: w.now };
    await updateIn(w.tx, 'exports', scope).set({ status: 'completed', rows_total: processed, rows_processed: processed, size_bytes: writer.bytes, finished_at: w.now, updated_at: w.now }).where('id', '=', id).execute();
    w.emit('export.completed', toExport(done));
  });
}
