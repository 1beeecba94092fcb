// The work of an export: the records matching its filters (in keyset order) or its search (in the
// search's order) read a page at a time, in their API form, written as CSV chunks to the store. An
// export that is interrupted starts over (its partial file is dropped first): it writes nothing else,
// so running it twice is harmless. One whose job gives up ends `failed`, never `running` for good.
import type { Database } from '../../db/database.ts';
import type { Mode } from '../../db/schema.ts';
import { AppError } from '../../platform/errors.ts';
import { nowSeconds } from '../../platform/ids.ts';
import { DEFAULT_MAX_ATTEMPTS, defineJobKind, PermanentJobError } from '../../platform/jobs/kinds.ts';
import { resolveCustomFilters } from '../../platform/resource/custom-field-values.ts';
import { fieldDefinitions } from '../../platform/resource/custom-fields.ts';
import type { Resource, Row } from '../../platform/resource/define.ts';
import { compileSearch, searchCount, searchPage, type SearchRequest } from '../../platform/resource/search.ts';
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
  async run({ export_id }, { database, job, signal }) {
    const scope = { orgId: job.orgId, mode: job.mode as Mode };
    try {
      await runExport(database, scope, export_id);
    } catch (error) {
      // Filters or a search that no longer apply (a custom field they name was deleted) fail at
      // once, saying why; anything else after the last attempt, the cause kept on the job for operators.
      if (error instanceof AppError && (error.kind === 'bad_request' || error.kind === 'validation')) {
        await failExport(database, scope, export_id, `The export no longer applies: ${typeof error.detail === 'string' ? error.detail : error.detail.map((e) => `${e.loc[e.loc.length - 1]}: ${e.msg}`).join('; ')}`);
        throw new PermanentJobError(error.message);
      }
      if (!signal.aborted && job.attempt >= DEFAULT_MAX_ATTEMPTS) await failExport(database, scope, export_id, `The export stopped after ${DEFAULT_MAX_ATTEMPTS} failed attempts`);
      throw error;
    }
  },
});

/** The export's records a page at a time: `next` reads the page after `after` (undefined: the first). */
interface Pages {
  total(): Promise<number>;
  next(after: unknown): Promise<{ rows: Row[]; after: unknown }>;
}

async function pagesOf(r: Resource, database: Database, scope: Scope, filters: Record<string, unknown>, search: SearchRequest | null): Promise<Pages> {
  const { db, dialect } = database;
  if (search) {
    const compiled = await compileSearch(r, db, dialect, scope, search);
    return {
      total: () => searchCount(r, db, scope, compiled),
      async next(after) {
        const hits = await searchPage(r, db, scope, compiled, { after: after as unknown[] | undefined, offset: 0, take: PAGE });
        return { rows: hits.map((h) => h.row as Row), after: hits.length > 0 ? JSON.parse(hits[hits.length - 1].key) : after };
      },
    };
  }
  const query = await resolveCustomFilters(r, db, scope, filters);
  return {
    total: () => countRows(r, db, dialect, scope, query),
    async next(after) {
      const rows = (await keysetPage(r, filtered(r, db, dialect, scope, query).selectAll(), query, { after: after as string | undefined, offset: 0, take: PAGE }).execute()) as Row[];
      return { rows, after: rows.length > 0 ? rows[rows.length - 1].id : after };
    },
  };
}

/**
 * A value as a CSV cell: lists joined by `, ` (read back as a list by an import), objects as JSON;
 * `csvLine` then escapes text a spreadsheet would read as a formula, and keeps numbers as they are.
 */
function cell(value: unknown): unknown {
  if (Array.isArray(value)) return value.join(', ');
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return value;
}

export async function runExport(database: Database, scope: Scope, id: string): Promise<void> {
  const { db } = database;
  const start = await selectIn(db, 'exports', scope).selectAll().where('id', '=', id).executeTakeFirst() as ExportRow | undefined;
  if (!start || start.status === 'completed' || start.status === 'failed') return;
  const r = IMPORTABLE[start.object as ImportObject].resource;
  const { filters, search } = toExport(start);
  await deleteFile(db, scope, id);
  const now = nowSeconds();
  const pages = await pagesOf(r, database, scope, filters, search);
  const total = await pages.total();
  await updateIn(db, 'exports', scope).set({ status: 'running', started_at: now, updated_at: now, rows_total: total, rows_processed: 0 }).where('id', '=', id).execute();

  const custom = r.customFields ? (await fieldDefinitions(db, scope, r.plural)).map((d) => d.name) : [];
  const fields = writableFields(r);
  const writer = new ChunkWriter(db, scope, id);
  await writer.write(Buffer.from(csvLine(['id', ...fields, ...custom.map((n) => `custom_fields.${n}`), 'created_at', 'updated_at'])));
  let after: unknown;
  let processed = 0;
  for (;;) {
    const page = await pages.next(after);
    const rows = page.rows;
    if (rows.length === 0) break;
    const records = await present(r, db, scope, rows);
    const text = records.map((rec) => {
      const values = (rec.custom_fields ?? {}) as Record<string, unknown>;
      return csvLine([rec.id, ...fields.map((f) => cell(rec[f])), ...custom.map((n) => cell(values[n])), rec.created_at, rec.updated_at]);
    }).join('');
    await writer.write(Buffer.from(text));
    processed += rows.length;
    after = page.after;
    await updateIn(db, 'exports', scope).set({ rows_processed: processed, updated_at: nowSeconds() }).where('id', '=', id).execute();
    if (rows.length < PAGE) break;
  }
  await writer.end();
  await runWrite(database, scope, async (w) => {
    const done: ExportRow = { ...start, status: 'completed', rows_total: processed, rows_processed: processed, size_bytes: writer.bytes, started_at: now, finished_at: w.now, updated_at: w.now };
    await updateIn(w.tx, 'exports', scope).set({ status: 'completed', rows_total: processed, rows_processed: processed, size_bytes: writer.bytes, finished_at: w.now, updated_at: w.now }).where('id', '=', id).execute();
    w.emit('export.completed', toExport(done));
  });
}

/** Ends an export that cannot finish, saying why, and drops its partial file. */
async function failExport(database: Database, scope: Scope, id: string, error: string): Promise<void> {
  await runWrite(database, scope, async (w) => {
    const current = await selectIn(w.tx, 'exports', scope).selectAll().where('id', '=', id).executeTakeFirst() as ExportRow | undefined;
    if (!current || current.status === 'completed' || current.status === 'failed') return;
    const failed: ExportRow = { ...current, status: 'failed', error, finished_at: w.now, updated_at: w.now };
    await updateIn(w.tx, 'exports', scope).set({ status: 'failed', error, finished_at: w.now, updated_at: w.now }).where('id', '=', id).execute();
    await deleteFile(w.tx, scope, id);
    w.emit('export.failed', toExport(failed));
  });
}
