// The work of an import: its stored file read back chunk by chunk and parsed as a stream, its rows
// written in batches. Each batch is one write (one transaction) that also moves the import's
// progress (`rows_processed`, the offset in the file) and records one `import.progress` event, so an
// import whose worker died resumes after the last committed batch: no row is written twice. Each row
// goes through the API's own validation and create/assert code under a savepoint: a row that fails
// leaves nothing and is recorded as an error; the others go on.
import type { Database } from '../../db/database.ts';
import type { Mode } from '../../db/schema.ts';
import { AppError, type FieldError } from '../../platform/errors.ts';
import { DEFAULT_MAX_ATTEMPTS, defineJobKind } from '../../platform/jobs/kinds.ts';
import { assertRecord, findMatch } from '../../platform/resource/assert.ts';
import type { FieldDefinition } from '../../platform/resource/custom-fields.ts';
import type { Resource } from '../../platform/resource/define.ts';
import { createAhead, createRecord } from '../../platform/resource/store.ts';
import { selectIn, tenantOf, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { toValidationError, validatorCompiler } from '../../platform/validation.ts';
import { runWrite, type WriteContext } from '../../platform/write.ts';
import { addMembers } from '../lists/lists.store.ts';
import { csvRows, CsvUnreadable, type CsvRow, type Delimiter } from './csv.ts';
import { deleteFile, readFile } from './files.ts';
import type { WriteMode } from './imports.schemas.ts';
import { ERRORS_PER_ROW, isEnded, toImport, type ImportRow, type RowError } from './imports.store.ts';
import { IMPORTABLE, importDefinitions, rowInput, type ImportObject } from './objects.ts';

export const importJob = defineJobKind<{ import_id: string }>({
  name: 'imports.run',
  async run({ import_id }, { database, config, job, signal }) {
    const scope = { orgId: job.orgId, mode: job.mode as Mode };
    try {
      await runImport(database, scope, import_id, { batchRows: config.importBatchRows, signal });
    } catch (error) {
      // The job's last attempt failed: the import ends `failed` rather than staying `running` for
      // good. The cause stays with the job (`last_error`, for operators), not in the tenant's answer.
      if (!signal.aborted && job.attempt >= DEFAULT_MAX_ATTEMPTS) await failImport(database, scope, import_id);
      throw error;
    }
  },
});

type Validator = ((value: unknown) => boolean) & { errors?: never[] };
const validators = new Map<string, Validator>();

/** The API's validator of a create (create, upsert) or an update body of `r`. */
function validatorOf(r: Resource, mode: WriteMode): Validator {
  const key = `${r.plural} ${mode === 'update' ? 'update' : 'create'}`;
  let v = validators.get(key);
  if (!v) {
    const schema = mode === 'update' ? r.schemas.update : r.schemas.create;
    v = validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: `/${r.plural}` }) as Validator;
    validators.set(key, v);
  }
  return v;
}

/** An error of a row: the field it names (a mapping target), or the file's column at fault (a cell that is not UTF-8). */
type Problem = { field: string | null; column?: string | null; message: string };
type Outcome = { action: 'created' | 'updated' | 'skipped'; id?: string } | { errors: Problem[] };

/** The field errors of a refused write, each with the field it names (as a mapping target). */
function errorsOf(error: AppError): Problem[] {
  if (typeof error.detail === 'string') return [{ field: null, message: error.detail }];
  return error.detail.map((e: FieldError) => {
    const [, name, sub] = e.loc;
    const field = name === 'custom_fields' && sub ? `custom_fields.${sub}` : name ?? null;
    return { field, message: e.msg };
  });
}

/** The errors of a row the API's validation refuses, as a refused request would name them. */
function refused(r: Resource, mode: WriteMode, input: Record<string, unknown>): Outcome | undefined {
  const validate = validatorOf(r, mode);
  return validate(input) ? undefined : { errors: errorsOf(toValidationError(validate.errors ?? [], 'body', r.routes?.messages ?? {})) };
}

/** Writes one valid row as the API would: all of it, or nothing and its errors (`w.attempt`). */
async function writeRow(r: Resource, w: WriteContext, mode: WriteMode, input: Record<string, unknown>): Promise<Outcome> {
  // Creates leave their rows queued, to be inserted together: no later row reads them (`flush`).
  const done = await w.attempt(async (): Promise<Outcome> => {
    if (mode === 'create') return { action: 'created', id: (await createRecord(r, w, input)).id };
    // An update writes only rows that match a record; one matching none is skipped.
    const found = mode === 'update' ? await findMatch(r, w, input, undefined) : true;
    if (found === undefined) return { action: 'skipped' };
    const { action, record } = await assertRecord(r, w, input, undefined);
    return { action: action === 'noop' ? 'skipped' : action, id: record.id };
  }, { flush: mode !== 'create' });
  return 'error' in done ? { errors: errorsOf(done.error) } : done.value;
}

export interface RunOptions {
  batchRows: number;
  /** Aborted at shutdown: the import stops after the batch in flight, to be resumed by the next run. */
  signal?: AbortSignal;
  /** Called after each committed batch with the import as it stands (the CLI's progress bar). */
  onBatch?: (progress: ReturnType<typeof toImport>) => void;
}

const readImport = (db: Database['db'], scope: Scope, id: string) => selectIn(db, 'imports', scope).selectAll().where('id', '=', id).executeTakeFirst() as Promise<ImportRow | undefined>;

/**
 * Runs (or resumes) an import to its end. Returns without writing when the import has ended, was
 * cancelled, or another worker moved it on meanwhile (each batch checks the offset it started from).
 */
export async function runImport(database: Database, scope: Scope, id: string, options: RunOptions): Promise<void> {
  const start = await readImport(database.db, scope, id);
  if (!start || isEnded(start.status)) return;
  const object = IMPORTABLE[start.object as ImportObject];
  const r = object.resource;
  const mode = start.write_mode as WriteMode;
  const mapping = (typeof start.mapping === 'string' ? JSON.parse(start.mapping) : start.mapping) as Record<string, string>;
  let offset = Number(start.rows_processed);
  const rows = csvRows(readFile(database.db, scope, id), start.delimiter as Delimiter);

  const first = await rows.next();
  const header = first.done || !('record' in first.value) ? undefined : first.value.record;
  if (!header) return finish(database, scope, id, offset, first.done ? 'The file is empty' : `The header row is malformed: ${(first.value as { error: string }).error}`);
  const columns = header.flatMap((h, index) => (mapping[h] ? [{ index, target: mapping[h], header: h }] : []));
  const headerOf = new Map(columns.map((c) => [c.target, c.header]));

  /** Writes one batch and moves the offset; false when the import is no longer this run's to write (cancelled, or moved on by another worker). */
  const writeBatch = (batch: CsvRow[]) => runWrite(database, scope, async (w) => {
    const current = await readImport(w.tx, scope, id);
    if (!current || isEnded(current.status) || Number(current.rows_processed) !== offset) return false;
    const defs = new Map<string, FieldDefinition>((await importDefinitions(w.tx, scope, start.object as ImportObject)).map((d) => [d.name, d]));
    const counts = { created: 0, updated: 0, skipped: 0, failed: 0 };
    const errors: Array<RowError & { n: number }> = [];
    const listed: string[] = [];
    const inputs = batch.map((row) => {
      if ('error' in row) return { outcome: { errors: [{ field: null, column: row.column === undefined ? null : header[row.column] ?? null, message: row.error }] } as Outcome };
      const input = rowInput(r, columns, row.record, defs);
      if (current.list_id && object.list === 'field' && input.list_id === undefined) input.list_id = current.list_id;
      return { input, outcome: refused(r, mode, input) };
    });
    // What the valid rows would read to be created (the group's `readAhead`), in one statement for the batch.
    const ahead = mode === 'update' ? undefined : r.hooks?.readAhead;
    if (ahead) await w.readAheadAll(ahead, inputs.flatMap(({ input, outcome }) => (input && !outcome ? [createAhead(r, input)!.key()] : [])));
    for (const [i, row] of batch.entries()) {
      const { input, outcome: refusal } = inputs[i];
      const outcome = refusal ?? await writeRow(r, w, mode, input!);
      if ('errors' in outcome) {
        counts.failed++;
        outcome.errors.slice(0, ERRORS_PER_ROW).forEach((e, n) => errors.push({ row: row.row, n, column: e.column !== undefined ? e.column : e.field ? headerOf.get(e.field) ?? e.field : null, message: e.message.slice(0, 1000) }));
      } else {
        counts[outcome.action]++;
        if (outcome.id && current.list_id && object.list === 'members') listed.push(outcome.id);
      }
    }
    if (listed.length > 0) await addMembers(w, current.list_id!, listed);
    for (let i = 0; i < errors.length; i += 100) {
      await w.tx.insertInto('import_errors').values(errors.slice(i, i + 100).map((e) => ({ ...tenantOf(scope), import_id: id, row: e.row, n: e.n, column_name: e.column, message: e.message }))).execute();
    }
    const after: ImportRow = {
      ...current, status: 'running', started_at: current.started_at ?? w.now, updated_at: w.now,
      rows_processed: offset + batch.length, rows_created: Number(current.rows_created) + counts.created, rows_updated: Number(current.rows_updated) + counts.updated,
      rows_skipped: Number(current.rows_skipped) + counts.skipped, rows_failed: Number(current.rows_failed) + counts.failed,
    };
    const { status, started_at, updated_at, rows_processed, rows_created, rows_updated, rows_skipped, rows_failed } = after;
    await updateIn(w.tx, 'imports', scope).set({ status, started_at, updated_at, rows_processed, rows_created, rows_updated, rows_skipped, rows_failed }).where('id', '=', id).execute();
    const record = toImport(after);
    w.emit('import.progress', record);
    return record;
  });

  let batch: CsvRow[] = [];
  const flush = async () => {
    if (batch.length === 0) return true;
    const written = await writeBatch(batch);
    offset += batch.length;
    batch = [];
    if (written) options.onBatch?.(written);
    return written !== false;
  };
  try {
    for await (const row of rows) {
      if (row.row - 1 <= offset) continue; // written by an earlier run (data rows start at row 2)
      batch.push(row);
      if (batch.length >= options.batchRows) {
        if (!(await flush())) return;
        if (options.signal?.aborted) throw new Error('The import was interrupted; it resumes from its last batch');
      }
    }
  } catch (error) {
    // A file the reader gives up on (an upload refuses it first): the rows before stay, the import fails saying why.
    if (!(error instanceof CsvUnreadable)) throw error;
    if (!(await flush())) return;
    return finish(database, scope, id, offset, `The file is not readable as CSV: ${error.message}`);
  }
  if (!(await flush())) return;
  await finish(database, scope, id, offset);
}

/** Ends an import whose job gave up, where it stands. */
async function failImport(database: Database, scope: Scope, id: string): Promise<void> {
  const current = await readImport(database.db, scope, id);
  if (!current || isEnded(current.status)) return;
  const offset = Number(current.rows_processed);
  await finish(database, scope, id, offset, `The import stopped after ${DEFAULT_MAX_ATTEMPTS} failed attempts; the first ${offset} rows were processed`);
}

/** Ends the import (completed, with errors, or failed with `error`) and deletes its file. */
async function finish(database: Database, scope: Scope, id: string, offset: number, error?: string): Promise<void> {
  await runWrite(database, scope, async (w) => {
    const current = await readImport(w.tx, scope, id);
    if (!current || isEnded(current.status) || Number(current.rows_processed) !== offset) return;
    const status = error ? 'failed' : Number(current.rows_failed) > 0 ? 'completed_with_errors' : 'completed';
    const after: ImportRow = { ...current, status, error: error ?? null, started_at: current.started_at ?? w.now, finished_at: w.now, updated_at: w.now };
    await updateIn(w.tx, 'imports', scope).set({ status, error: after.error, started_at: after.started_at, finished_at: w.now, updated_at: w.now }).where('id', '=', id).execute();
    await deleteFile(w.tx, scope, id);
    w.emit(error ? 'import.failed' : 'import.completed', toImport(after));
  });
}
