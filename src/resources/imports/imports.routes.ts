// `/v1/imports`: start an import (a multipart upload or a URL), follow it, read its errors (JSON
// pages or one CSV), cancel it. The upload is parsed by @fastify/multipart, registered here only, so
// every other route still takes JSON alone.
import { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { lacksScope } from '../../platform/auth.ts';
import { AppError, badRequest, validationError } from '../../platform/errors.ts';
import { paginate } from '../../platform/pagination.ts';
import { CsvResponse, Data, errorResponses, IdParams, ListOf } from '../../platform/schemas.ts';
import { grants } from '../../platform/scopes.ts';
import { toValidationError, validatorCompiler } from '../../platform/validation.ts';
import { mutate } from '../../platform/write.ts';
import { csvLine } from './csv.ts';
import { deleteFile } from './files.ts';
import * as s from './imports.schemas.ts';
import * as store from './imports.store.ts';
import { planImport, receiveFile, receiveUrl, tooLarge, type ImportRequest, type Received } from './imports.upload.ts';

const tags = ['Imports'];
const params = IdParams('imp', 'import');
const validateOptions = validatorCompiler({ schema: s.ImportOptionsSchema, httpPart: 'body', method: 'POST', url: '/imports' }) as ((v: unknown) => boolean) & { errors?: never[] };

/** The fields of a multipart upload as the options of an import (`mapping` is JSON text there). */
function optionsOf(fields: Record<string, string>): ImportRequest {
  const given: Record<string, unknown> = { ...fields };
  if (fields.mapping !== undefined) {
    try {
      given.mapping = JSON.parse(fields.mapping) as unknown;
    } catch {
      throw validationError([{ loc: ['body', 'mapping'], msg: 'mapping must be a JSON object: {"Column": "field"}', type: 'json_invalid' }]);
    }
  }
  if (!validateOptions(given)) throw toValidationError(validateOptions.errors ?? [], 'body');
  return given as unknown as ImportRequest;
}

/** What a failure of the multipart parser means to the client; busboy's own errors carry no code. */
function uploadError(error: unknown, max: number): unknown {
  if (error instanceof AppError) return error;
  const code = (error as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(max);
  if (code === 'FST_FILES_LIMIT_REACHED') return badRequest('An import takes one file');
  if (code === 'FST_PARTS_LIMIT_REACHED' || code === 'FST_FIELDS_LIMIT_REACHED') return badRequest('Too many fields: an import takes object, mode, list_id, mapping and file');
  return badRequest(`The multipart body is malformed: ${(error as Error).message}`);
}

/**
 * `source` (the parts, or a file part's bytes) with the parser's errors as 4xx answers. Only what
 * the parser throws passes here: the store's errors (while a file is written) keep their meaning.
 */
async function* parsed<T>(source: () => AsyncIterable<T>, max: number): AsyncGenerator<T> {
  try {
    yield* source();
  } catch (error) {
    throw uploadError(error, max);
  }
}

/** Reads a multipart upload: one file part (`file`) and the option fields, in any order. */
async function receiveUpload(req: FastifyRequest, fileId: string): Promise<{ received: Received; fields: Record<string, string>; filename: string }> {
  const { database, config } = req.server.services;
  const max = config.importMaxBytes;
  // A declared size past the limit is refused before a byte is read.
  if (Number(req.headers['content-length'] ?? 0) > max + 64 * 1024) throw tooLarge(max);
  const fields: Record<string, string> = {};
  let file: { received: Received; filename: string } | undefined;
  try {
    for await (const part of parsed(() => req.parts({ limits: { fileSize: max + 1, files: 1, fields: 10, fieldSize: 256 * 1024 } }), max)) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw badRequest(`The file goes in the part named file, not ${part.fieldname}`);
        file = { received: await receiveFile(database.db, req.scope, fileId, parsed(() => part.file, max), max), filename: part.filename };
      } else {
        fields[part.fieldname] = String(part.value);
      }
    }
  } catch (error) {
    if (file) await deleteFile(database.db, req.scope, fileId);
    throw error;
  }
  if (!file) throw badRequest('No file: send the CSV in a multipart part named file');
  return { ...file, fields };
}

export async function importRoutes(fastify: FastifyInstance): Promise<void> {
  await fastify.register(multipart);
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.services.database.db;

  app.post('/imports', {
    config: { parsedBodies: { 'multipart/form-data': { schema: s.ImportUploadBody } } },
    schema: {
      tags, summary: 'Start an import',
      description: 'Imports a CSV of contacts or companies, either uploaded as `multipart/form-data` (a part named `file`, up to 100 MiB, and the fields `object`, `mode`, `list_id`, `mapping` as JSON text) or fetched from `url` in a JSON body. The file is stored, its rows counted and its columns mapped (as given, or guessed from the headers and shown back), then written in the background in batches through the same validation as the API. Delimiters `,` `;` and tab are detected; a BOM is dropped. Answers 201 with the import, `queued`. A file over the limit is 413; the key needs `imports:write` and the object\'s own write scope.',
      body: { content: { 'application/json': { schema: s.ImportUrlBody } } } as never,
      response: { 201: Data(s.ImportSchema, 'The import, queued'), ...errorResponses(404, 409, 413, 415) },
    },
  }, async (req, reply) => {
    const fileId = store.newImportId();
    let options: ImportRequest;
    let received: Received;
    let source: { source: 'upload' | 'url'; filename: string | null };
    if (req.isMultipart()) {
      const upload = await receiveUpload(req, fileId);
      received = upload.received;
      source = { source: 'upload', filename: upload.filename || null };
      try {
        options = optionsOf(upload.fields);
      } catch (error) {
        await deleteFile(db(), req.scope, fileId);
        throw error;
      }
    } else {
      const body = req.body as unknown as ImportRequest & { url: string };
      if (!body || typeof body !== 'object') throw badRequest('Send a multipart upload with a file, or a JSON body with url');
      const { url, ...rest } = body;
      options = rest;
      received = await receiveUrl(req, fileId, url);
      source = { source: 'url', filename: url };
    }
    try {
      // An import writes the object's records: the key needs that scope too.
      const needed = `${options.object}:write`;
      if (req.apiKey && !grants(req.apiKey.scopes, needed)) throw lacksScope(needed);
      const plan = await planImport(db(), req.scope, fileId, received, options, source);
      await mutate(req, reply, 201, (w) => store.createImport(w, plan));
    } catch (error) {
      await deleteFile(db(), req.scope, fileId);
      throw error;
    }
  });

  app.get('/imports', {
    schema: {
      tags, summary: 'List imports', description: 'Lists imports, newest first; filter by `status`.',
      querystring: s.ImportQuerySchema, response: { 200: ListOf(s.ImportSchema, 'A page of imports'), ...errorResponses() },
    },
  }, (req) => paginate(req, req.query, {
    fetch: (page) => store.listImports(db(), req.scope, req.query, page),
    count: () => store.countImports(db(), req.scope, req.query),
    keyOf: (row) => row.id,
    map: (rows) => rows.map(store.toImport),
  }));

  app.get('/imports/:id', {
    schema: { tags, summary: 'Get an import', description: 'The import\'s status, counts, timing and mapping; 404 `Import not found`.', params, response: { 200: Data(s.ImportSchema, 'The import'), ...errorResponses(404) } },
  }, async (req) => ({ data: store.toImport(await store.findImport(db(), req.scope, req.params.id)) }));

  app.get('/imports/:id/errors', {
    schema: {
      tags, summary: 'List the errors of an import', description: 'The rows that failed, in row order (row 1 is the header), with the column and the message; a row may have several. The same as one CSV file: `GET /v1/imports/{id}/errors.csv`.',
      params, querystring: s.ErrorsQuerySchema, response: { 200: ListOf(s.ImportErrorSchema, 'A page of errors'), ...errorResponses(404) },
    },
  }, async (req) => {
    const found = await store.findImport(db(), req.scope, req.params.id);
    return paginate(req, req.query, {
      fetch: (page) => store.listErrors(db(), req.scope, found.id, page),
      count: () => store.countErrors(db(), req.scope, found.id),
      keyOf: store.errorKey,
      map: (rows) => rows.map(store.toError),
    });
  });

  app.get('/imports/:id/errors.csv', {
    schema: {
      tags, summary: 'Download the errors of an import as CSV', description: 'Every error of the import as `text/csv` (`row,column,message`), streamed in row order.',
      params, response: { 200: CsvResponse('The errors, as CSV'), ...errorResponses(404) },
    },
  }, async (req, reply) => {
    const found = await store.findImport(db(), req.scope, req.params.id);
    const scope = req.scope;
    async function* lines() {
      yield csvLine(['row', 'column', 'message']);
      let after: number | undefined;
      for (;;) {
        const rows = await store.listErrors(db(), scope, found.id, { after, offset: 0, take: 1000 });
        for (const r of rows) yield csvLine([Number(r.row), r.column_name, r.message]);
        if (rows.length < 1000) return;
        after = store.errorKey(rows[rows.length - 1]);
      }
    }
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${found.id}-errors.csv"`).send(Readable.from(lines()) as never);
  });

  app.post('/imports/:id/cancel', {
    schema: { tags, summary: 'Cancel an import', description: 'Stops a queued or running import: the batch being written is rolled back, the rows written before stay. An import that has ended is 409.', params, response: { 201: Data(s.ImportSchema, 'The cancelled import'), ...errorResponses(404, 409) } },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.cancelImport(w, req.params.id)));
}
