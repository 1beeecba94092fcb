// Receiving an import's file: an upload's part or a URL's answer, streamed into the store chunk by
// chunk while its rows are counted and its header read, so nothing holds the whole file. Then the
// options are checked against what the file holds (its columns, the mapping, the list).
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { AppError, badRequest, notFound } from '../../platform/errors.ts';
import { OutboundError, type OutboundAnswer } from '../../platform/outbound.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { CsvCounter, type CsvSummary } from './csv.ts';
import { ChunkWriter, deleteFile } from './files.ts';
import type { WriteMode } from './imports.schemas.ts';
import type { NewImport } from './imports.store.ts';
import { checkMapping, guessMapping, IMPORTABLE, importDefinitions, type ImportObject } from './objects.ts';

const MIB = 1024 * 1024;

export const tooLarge = (max: number) => new AppError('payload_too_large', `The file exceeds the ${max >= MIB ? `${Math.round(max / MIB)} MiB` : `${max} bytes`} limit of an import`);

export interface Received {
  bytes: number;
  summary: CsvSummary;
}

/** Stores `source` as the file `fileId`; refuses it (413), leaving nothing, past `maxBytes`. */
export async function receiveFile(db: Kysely<DB>, scope: Scope, fileId: string, source: AsyncIterable<Buffer>, maxBytes: number): Promise<Received> {
  const writer = new ChunkWriter(db, scope, fileId);
  const counter = new CsvCounter();
  try {
    for await (const piece of source) {
      if (writer.bytes + piece.length > maxBytes) throw tooLarge(maxBytes);
      counter.write(piece);
      await writer.write(piece);
    }
    await writer.end();
    const summary = await counter.end().catch((error: Error) => {
      throw badRequest(`The file is not readable as CSV: ${error.message}`);
    });
    return { bytes: writer.bytes, summary };
  } catch (error) {
    await deleteFile(db, scope, fileId);
    throw error;
  }
}

/**
 * Media types a CSV is served as (spreadsheet exports, raw file hosts, object stores); an answer with
 * none is read too. Anything else (an HTML login page, a JSON error, an image) is refused unread.
 */
const CSV_TYPES = new Set([
  'text/csv', 'text/plain', 'text/tab-separated-values', 'text/comma-separated-values', 'text/x-csv', 'application/csv', 'application/x-csv',
  'application/vnd.ms-excel', 'application/octet-stream', 'binary/octet-stream',
]);

/** Refuses an answer that is not a CSV the import can take: not 200, not a CSV type, or declared too large. */
function refuseAnswer(answer: OutboundAnswer, maxBytes: number): void {
  if (answer.status !== 200) {
    const redirect = answer.status >= 300 && answer.status < 400 ? ' (redirects are not followed)' : '';
    throw badRequest(`url: answered ${answer.status}, not 200${redirect}`, 'url');
  }
  if (answer.contentType !== undefined && !CSV_TYPES.has(answer.contentType)) {
    throw badRequest(`url: answered ${answer.contentType}, not a CSV (text/csv, text/plain or application/octet-stream)`, 'url');
  }
  if (answer.contentLength !== undefined && answer.contentLength > maxBytes) throw tooLarge(maxBytes);
}

/**
 * Fetches the CSV at `url` through the outbound guard and stores it (400 naming what went wrong,
 * 413 past the limit). Whatever happens, the rest of the answer is discarded and its connection let go.
 */
export async function receiveUrl(req: FastifyRequest, fileId: string, url: string): Promise<Received> {
  const { outbound, database, config } = req.server.services;
  let answer: OutboundAnswer;
  try {
    await outbound.check(url);
    answer = await outbound.get(url, { timeoutMs: config.importUrlTimeoutMs });
  } catch (error) {
    if (error instanceof OutboundError) throw badRequest(`url: ${error.message}`, 'url');
    throw error;
  }
  try {
    refuseAnswer(answer, config.importMaxBytes);
    return await receiveFile(database.db, req.scope, fileId, answer.body, config.importMaxBytes);
  } catch (error) {
    // A download that broke off or ran out of time; the store's own errors keep their meaning.
    if (error instanceof OutboundError) throw badRequest(`url: ${error.message}`, 'url');
    throw error;
  } finally {
    answer.discard();
  }
}

export interface ImportRequest {
  object: ImportObject;
  mode?: WriteMode;
  list_id?: string;
  mapping?: Record<string, string | null>;
}

const LIST_TYPES: Record<ImportObject, readonly string[]> = { contacts: ['contacts', 'leads'], companies: ['companies'] };

/**
 * The import a received file and its options make, or the 4xx saying why not: the file needs a header, the mapping must name its columns and fields, the list
 * must exist and hold the object, and contacts need a list.
 */
export async function planImport(db: Kysely<DB>, scope: Scope, fileId: string, received: Received, options: ImportRequest, source: { source: 'upload' | 'url'; filename: string | null }): Promise<NewImport> {
  const { object } = options;
  const { header, headerError, rows, delimiter } = received.summary;
  if (!header) throw badRequest(headerError ? `The header row is malformed: ${headerError}` : 'The file is empty: its first row must name the columns');
  const defs = await importDefinitions(db, scope, object);
  let mapping: Record<string, string>;
  if (options.mapping) {
    checkMapping(object, header, options.mapping, defs);
    mapping = Object.fromEntries(Object.entries(options.mapping).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));
  } else {
    mapping = guessMapping(object, header, defs);
  }
  if (Object.keys(mapping).length === 0) throw badRequest(`No column of the file maps to a field of ${object}; give a mapping`);
  const listId = options.list_id ?? null;
  if (listId) {
    const list = await selectIn(db, 'lists', scope).select(['type']).where('id', '=', listId).executeTakeFirst();
    if (!list) throw notFound('List not found');
    if (!LIST_TYPES[object].includes(list.type)) throw badRequest(`A list of type ${list.type} cannot hold ${object}; use a list of type ${LIST_TYPES[object].join(' or ')}`);
  }
  const mode = options.mode ?? 'create';
  if (IMPORTABLE[object].list === 'field' && mode !== 'update' && !listId && !Object.values(mapping).includes('list_id')) {
    throw badRequest(`list_id is required when importing ${object} (or map a column to list_id)`, 'list_id');
  }
  return { id: fileId, object, mode, listId, mapping, source: source.source, filename: source.filename, sizeBytes: received.bytes, delimiter, rowsTotal: rows };
}
