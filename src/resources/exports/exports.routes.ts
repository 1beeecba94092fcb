// `/v1/exports`: write the records matching a list's filters or a search to a CSV in the background,
// follow the export, and download its file (streamed from the store).
import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Database } from '../../db/database.ts';
import { lacksScope } from '../../platform/auth.ts';
import { AppError, conflict, validationError } from '../../platform/errors.ts';
import { paginate } from '../../platform/pagination.ts';
import { CsvResponse, Data, errorResponses, IdParams, ListOf, Nullable, PageQuery, StringEnum, Timestamp } from '../../platform/schemas.ts';
import { resolveCustomFilters } from '../../platform/resource/custom-field-values.ts';
import { compileSearch, type SearchRequest } from '../../platform/resource/search.ts';
import { searchBody } from '../../platform/resource/search-schemas.ts';
import type { Scope } from '../../platform/scope.ts';
import { grants } from '../../platform/scopes.ts';
import { toValidationError, validatorCompiler } from '../../platform/validation.ts';
import { mutate } from '../../platform/write.ts';
import { readFile } from '../imports/files.ts';
import { IMPORT_OBJECTS, IMPORTABLE, type ImportObject } from '../imports/objects.ts';
import * as store from './exports.store.ts';

const tags = ['Exports'];
const params = IdParams('exp', 'export');
const count = (description: string) => Type.Integer({ minimum: 0, description, examples: [120] });

const ObjectSchema = StringEnum(IMPORT_OBJECTS, { description: 'What to export', examples: ['contacts'] });

const ExportCreateSchema = Type.Object({
  object: ObjectSchema,
  filters: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unsafe<unknown>({ description: 'A filter value' }), {
    description: 'The query parameters of the object\'s list route (`GET /v1/contacts?title=VP` is `{"title": "VP"}`), custom-field filters included; paging parameters are not filters',
    examples: [{ list_id: 'lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' }],
  })),
  search: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unsafe<unknown>({ description: 'A part of the search' }), {
    description: 'Instead of `filters`: a search, as the body of `POST /v1/search/<object>` without `limit` and `cursor` (`filters`, `filter_groups`, `q`, `sort`); the file lists the matches in the search\'s order',
    examples: [{ q: 'ada', filters: [{ field: 'title', operator: 'contains', value: 'engineer' }], sort: [{ field: 'last_name', direction: 'asc' }] }],
  })),
}, { additionalProperties: false, description: 'An export' });

const ExportSchema = Type.Object({
  id: Type.String({ description: 'Identifier of the export', examples: ['exp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  object: ObjectSchema,
  filters: Type.Record(Type.String(), Type.Unknown(), { description: 'The filters, as given (empty for an export by search)' }),
  search: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: 'The search, as given; null for an export by filters' })),
  status: StringEnum(store.EXPORT_STATUSES, { description: '`queued`, `running`, `completed` (the file can be downloaded) or `failed`', examples: ['completed'] }),
  rows_total: Nullable(count('Records matching the filters, once counted')),
  rows_processed: count('Records written so far'),
  size_bytes: count('Size of the file written so far'),
  error: Nullable(Type.String({ description: 'Why a `failed` export stopped; null otherwise', examples: ['The export job failed'] })),
  download_url: Nullable(Type.String({ description: 'Where to download the CSV, once `completed`', examples: ['/v1/exports/exp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B/file'] })),
  started_at: Nullable(Timestamp('When the export started, unix seconds')),
  finished_at: Nullable(Timestamp('When the export finished, unix seconds')),
  created_at: Timestamp('When the export was created, unix seconds'),
  updated_at: Timestamp('When the export last changed, unix seconds'),
}, { description: 'A CSV export' });

const PAGING = ['page', 'limit', 'cursor'];
type Validator = ((v: unknown) => boolean) & { errors?: never[] };
const filterValidators = new Map<ImportObject, Validator>();
const searchValidators = new Map<ImportObject, Validator>();
const pagingRefused = (found: string[], at: string) => validationError(found.map((p) => ({ loc: ['body', at, p], msg: 'Paging parameters are not filters', type: 'extra_forbidden' })));

/**
 * Whether a JSON filter value is what the list route's query parameter of schema type `type` takes:
 * its type, or text as the query string would give it; never null. The route's validator converts
 * query text to numbers and booleans, and would turn `true` into 1 or `5` into "5" just as well.
 */
function fitsQueryType(type: unknown, value: unknown): boolean {
  if (value === null) return false;
  if (type === 'string') return typeof value === 'string';
  if (type === 'integer' || type === 'number') return typeof value === 'number' || typeof value === 'string';
  if (type === 'boolean') return typeof value === 'boolean' || typeof value === 'string';
  return true;
}

/** The filters checked as the list route checks its query string, custom fields included (422 naming the filter). */
async function checkFilters(database: Database, scope: Scope, object: ImportObject, filters: Record<string, unknown>): Promise<Record<string, unknown>> {
  const paging = PAGING.filter((p) => p in filters);
  if (paging.length > 0) throw pagingRefused(paging, 'filters');
  const parameters = (IMPORTABLE[object].resource.schemas.query as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const mistyped = Object.entries(filters).filter(([name, value]) => !fitsQueryType(parameters[name]?.type, value));
  if (mistyped.length > 0) {
    throw validationError(mistyped.map(([name]) => {
      const type = typeof parameters[name]?.type === 'string' ? parameters[name].type as string : 'string';
      return { loc: ['body', 'filters', name], msg: `Input should be a valid ${type}`, type: `${type}_type` };
    }));
  }
  let validate = filterValidators.get(object);
  if (!validate) {
    const r = IMPORTABLE[object].resource;
    validate = validatorCompiler({ schema: r.schemas.query, httpPart: 'querystring', method: 'GET', url: `/${r.plural}` }) as Validator;
    filterValidators.set(object, validate);
  }
  const checked = { ...filters };
  const underFilters = (error: AppError) => {
    if (Array.isArray(error.detail)) for (const e of error.detail) e.loc = ['body', 'filters', ...e.loc.slice(1)];
    return error;
  };
  if (!validate(checked)) throw underFilters(toValidationError(validate.errors ?? [], 'body'));
  for (const p of PAGING) delete checked[p]; // the validator's paging defaults: the export reads every page
  try {
    await resolveCustomFilters(IMPORTABLE[object].resource, database.db, scope, checked);
  } catch (error) {
    throw error instanceof AppError ? underFilters(error) : error;
  }
  return checked;
}

/**
 * The search checked as `POST /v1/search/<object>` checks its body (422 at its place under
 * `search`, 400 naming an unknown field or an operator that does not fit), paging refused.
 */
async function checkSearch(database: Database, scope: Scope, object: ImportObject, search: Record<string, unknown>): Promise<SearchRequest> {
  const paging = PAGING.filter((p) => p in search);
  if (paging.length > 0) throw pagingRefused(paging, 'search');
  const r = IMPORTABLE[object].resource;
  let validate = searchValidators.get(object);
  if (!validate) {
    // Wrapped as the body's `search`, so every error's place starts with it.
    const schema = Type.Object({ search: searchBody(r) });
    validate = validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: `/search/${r.plural}` }) as Validator;
    searchValidators.set(object, validate);
  }
  const checked = { ...search };
  if (!validate({ search: checked })) throw toValidationError(validate.errors ?? [], 'body');
  delete checked.limit; // the validator's paging default: the export reads every page
  try {
    await compileSearch(r, database.db, database.dialect, scope, checked);
  } catch (error) {
    if (error instanceof AppError && Array.isArray(error.detail)) for (const e of error.detail) e.loc = ['body', 'search', ...e.loc.slice(1)];
    throw error;
  }
  return checked;
}

export async function exportRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.services.database.db;
  const bothGiven = () => validationError([{ loc: ['body', 'search'], msg: 'Give filters or search, not both', type: 'value_error' }]);

  app.post('/exports', {
    schema: {
      tags, summary: 'Start an export', description: 'Writes the contacts or companies matching `filters` (the list route\'s query parameters), or a `search` (as `POST /v1/search/<object>` takes it, in its order), to a CSV in the background: one column per field, `custom_fields.<name>` per custom field, so the file imports back as it is. Answers 201 with the export, `queued`; `GET /v1/exports/{id}` follows it. The key needs `exports:write` and the object\'s read scope.',
      body: ExportCreateSchema, response: { 201: Data(ExportSchema, 'The export, queued'), ...errorResponses() },
    },
  }, async (req, reply) => {
    const needed = `${req.body.object}:read`;
    if (req.apiKey && !grants(req.apiKey.scopes, needed)) throw lacksScope(needed);
    const { object, filters, search } = req.body as { object: ImportObject; filters?: Record<string, unknown>; search?: Record<string, unknown> };
    if (filters && search) throw bothGiven();
    const selection = search
      ? { filters: {}, search: await checkSearch(app.services.database, req.scope, object, search) }
      : { filters: await checkFilters(app.services.database, req.scope, object, filters ?? {}), search: null };
    return mutate(req, reply, 201, (w) => store.createExport(w, object, selection));
  });

  app.get('/exports', {
    schema: { tags, summary: 'List exports', description: 'Lists exports, newest first.', querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }), response: { 200: ListOf(ExportSchema, 'A page of exports'), ...errorResponses() } },
  }, (req) => paginate(req, req.query, {
    fetch: (page) => store.listExports(db(), req.scope, page),
    count: () => store.countExports(db(), req.scope),
    keyOf: (row) => row.id,
    map: (rows) => rows.map(store.toExport),
  }));

  app.get('/exports/:id', {
    schema: { tags, summary: 'Get an export', description: 'The export\'s status, progress and, once completed, `download_url`; 404 `Export not found`.', params, response: { 200: Data(ExportSchema, 'The export'), ...errorResponses(404) } },
  }, async (req) => ({ data: store.toExport(await store.findExport(db(), req.scope, req.params.id)) }));

  app.get('/exports/:id/file', {
    schema: { tags, summary: 'Download an export', description: 'The CSV of a completed export, streamed (`text/csv`); 409 while it is not completed.', params, response: { 200: CsvResponse('The CSV'), ...errorResponses(404, 409) } },
  }, async (req, reply) => {
    const found = await store.findExport(db(), req.scope, req.params.id);
    if (found.status !== 'completed') throw conflict(`Export is ${found.status}; download it once completed`);
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${found.object}-${found.id}.csv"`)
      .send(Readable.from(readFile(db(), req.scope, found.id)) as never);
  });
}
