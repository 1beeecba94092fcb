// `cli import`: an import run by an operator from a file on disk, in this process, with its progress
// on stderr: a bar with rows/s and the time left on a terminal, one plain line per batch otherwise.
import { createReadStream } from 'node:fs';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { notFound } from '../../platform/errors.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { runWrite } from '../../platform/write.ts';
import { runImport } from './imports.jobs.ts';
import type { WriteMode } from './imports.schemas.ts';
import { createImport, findImport, isEnded, newImportId, toImport } from './imports.store.ts';
import { planImport, receiveFile } from './imports.upload.ts';
import type { ImportObject } from './objects.ts';

export interface CliImport {
  file: string;
  object: ImportObject;
  mode: WriteMode;
  listId?: string;
  mapping?: Record<string, string | null>;
}

const BAR = 30;

/** Draws the progress of an import on `out`. */
export function progressPrinter(out: NodeJS.WriteStream, total: number) {
  const started = Date.now();
  return (done: number) => {
    const seconds = Math.max((Date.now() - started) / 1000, 0.001);
    const rate = Math.round(done / seconds);
    const left = rate > 0 ? Math.ceil((total - done) / rate) : 0;
    const share = total > 0 ? done / total : 1;
    if (out.isTTY) {
      const filled = Math.round(share * BAR);
      out.write(`\r[${'#'.repeat(filled)}${'.'.repeat(BAR - filled)}] ${Math.floor(share * 100)}% ${done}/${total} rows  ${rate} rows/s  ETA ${left}s `);
      if (done >= total) out.write('\n');
    } else {
      out.write(`${done}/${total} rows (${Math.floor(share * 100)}%), ${rate} rows/s, ETA ${left}s\n`);
    }
  };
}

async function listIn(database: Database, scope: Scope, listId: string): Promise<boolean> {
  return (await selectIn(database.db, 'lists', scope).select('id').where('id', '=', listId).executeTakeFirst()) !== undefined;
}

/**
 * An operator who names a list of the organization's other mode (a sandbox list without `--mode test`)
 * is told so, rather than only `List not found`. Only the same organization's lists are looked at.
 */
async function checkListMode(database: Database, scope: Scope, listId: string): Promise<void> {
  if (await listIn(database, scope, listId)) return;
  const other = scope.mode === 'live' ? 'test' : 'live';
  if (!(await listIn(database, { orgId: scope.orgId, mode: other }, listId))) return;
  throw notFound(scope.mode === 'live'
    ? 'List not found in live mode (is it a test-mode list? add --mode test)'
    : 'List not found in test mode (is it a live-mode list? leave out --mode test)');
}

/** Stores the file, creates the import (with its job, as the API does) and runs it here to its end. */
export async function importFromCli(database: Database, config: Config, scope: Scope, given: CliImport) {
  if (given.listId) await checkListMode(database, scope, given.listId);
  const id = newImportId();
  const received = await receiveFile(database.db, scope, id, createReadStream(given.file), config.importMaxBytes);
  const plan = await planImport(database.db, scope, id, received, { object: given.object, mode: given.mode, list_id: given.listId, mapping: given.mapping }, { source: 'upload', filename: given.file });
  await runWrite(database, scope, (w) => createImport(w, plan));
  const show = progressPrinter(process.stderr, plan.rowsTotal);
  // A worker of a running server may take the import's job meanwhile: each batch checks the offset it
  // starts from, so the two never write a row twice, and this run stops when the other moves on.
  let shown = 0;
  const onBatch = (p: { rows_processed: number }) => {
    shown = p.rows_processed;
    show(shown);
  };
  await runImport(database, scope, id, { batchRows: config.importBatchRows, onBatch });
  // Taken over by a worker: follow its progress to the end.
  for (;;) {
    const current = toImport(await findImport(database.db, scope, id));
    if (current.rows_processed !== shown) onBatch(current);
    if (isEnded(current.status)) return current;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
