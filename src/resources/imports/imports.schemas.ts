import { Type } from 'typebox';
import { Nullable, PageQuery, Str, StringEnum, Timestamp } from '../../platform/schemas.ts';
import { IMPORT_OBJECTS } from './objects.ts';

export const IMPORT_STATUSES = ['queued', 'running', 'completed', 'completed_with_errors', 'failed', 'cancelled'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];
export const WRITE_MODES = ['create', 'upsert', 'update'] as const;
export type WriteMode = (typeof WRITE_MODES)[number];

const count = (description: string) => Type.Integer({ minimum: 0, description, examples: [120] });

const MappingSchema = Type.Record(Type.String({ maxLength: 200 }), Nullable(Str({ maxLength: 100, description: 'A field of the object, or `custom_fields.<name>`' })), {
  description: 'Column header → target field (`work_email`, `custom_fields.plan`); null leaves a column out. Omitted: guessed from the headers',
  examples: [{ Email: 'work_email', 'Job Title': 'title', Plan: 'custom_fields.plan' }],
});

/** The options of an import: the members of a JSON body, or the fields of a multipart upload. */
export const ImportOptions = {
  object: StringEnum(IMPORT_OBJECTS, { description: 'What each row creates or updates', examples: ['contacts'] }),
  mode: Type.Optional(StringEnum(WRITE_MODES, { description: '`create` (default): every row makes a record. `upsert`: a row updates the record its natural key matches (contacts: `work_email`, then `linkedin_url`; companies: `domain`), or makes one. `update`: a row updates the record it matches; rows matching none are skipped', examples: ['upsert'] })),
  list_id: Type.Optional(Str({ maxLength: 64, description: 'A list to put every imported record on (contacts: their list; companies: a list of type companies). Contacts need it unless a column is mapped to `list_id`', examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  mapping: Type.Optional(MappingSchema),
};

export const ImportOptionsSchema = Type.Object(ImportOptions, { additionalProperties: false });

export const ImportUrlBody = Type.Object({
  ...ImportOptions,
  url: Str({ maxLength: 2000, description: 'An http(s) URL of the CSV, fetched by the service (never a private or loopback address)', examples: ['https://example.com/people.csv'] }),
}, { additionalProperties: false, description: 'An import of the CSV at a URL' });

/**
 * An upload, as `multipart/form-data`: parsed by the route itself (no Fastify validation), so this
 * schema documents it; the options are then checked against ImportOptionsSchema.
 */
export const ImportUploadBody = Type.Object({
  file: Type.String({ contentMediaType: 'text/csv', description: 'The CSV file: one part named `file`, up to 100 MiB (`IMPORT_MAX_BYTES`)' }),
  ...ImportOptions,
  mapping: Type.Optional(Str({ maxLength: 256 * 1024, description: 'The column mapping as JSON text: `{"<column header>": "<field>"}`; omitted, it is guessed from the headers', examples: ['{"Email": "work_email", "Plan": "custom_fields.plan"}'] })),
}, { title: 'ImportUpload', additionalProperties: false, description: 'An import of an uploaded CSV' });

export const ImportSchema = Type.Object({
  id: Type.String({ description: 'Identifier of the import', examples: ['imp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  object: ImportOptions.object,
  mode: StringEnum(WRITE_MODES, { description: 'How rows are written', examples: ['create'] }),
  list_id: Nullable(Type.String({ description: 'The list imported records are put on', examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  mapping: Type.Record(Type.String(), Type.String(), { description: 'Column header → field, as given or as guessed from the headers; columns not named are left out', examples: [{ Email: 'work_email' }] }),
  status: StringEnum(IMPORT_STATUSES, { description: '`queued`, `running`, then `completed` (every row written or skipped), `completed_with_errors` (some rows failed: see the errors), `failed` (the file could not be read) or `cancelled`', examples: ['running'] }),
  source: StringEnum(['upload', 'url'] as const, { description: 'Where the file came from', examples: ['upload'] }),
  filename: Nullable(Type.String({ description: 'The uploaded file\'s name, or the URL', examples: ['people.csv'] })),
  size_bytes: count('Size of the file'),
  rows_total: count('Data rows in the file (the header excluded)'),
  rows_processed: count('Rows handled so far: created + updated + skipped + failed'),
  created: count('Records created'),
  updated: count('Records updated'),
  skipped: count('Rows that changed nothing: an upsert or update finding the record already up to date, or an update matching no record'),
  failed: count('Rows refused (malformed or invalid): see `GET /v1/imports/{id}/errors`'),
  error: Nullable(Type.String({ description: 'Why a `failed` import stopped; null otherwise', examples: ['The file could not be read: Connection failed'] })),
  started_at: Nullable(Timestamp('When the first row was written, unix seconds')),
  finished_at: Nullable(Timestamp('When the import ended, unix seconds')),
  created_at: Timestamp('When the import was created, unix seconds'),
  updated_at: Timestamp('When the import last changed, unix seconds'),
}, { description: 'A CSV import' });

export const ImportQuerySchema = Type.Object({
  ...PageQuery,
  status: Type.Optional(StringEnum(IMPORT_STATUSES, { description: 'Only imports in this status', examples: ['running'] })),
}, { additionalProperties: false });

export const ImportErrorSchema = Type.Object({
  row: Type.Integer({ description: 'The row of the file, as a spreadsheet numbers it (the header is row 1)', examples: [7] }),
  column: Nullable(Type.String({ description: 'The column header, when the error concerns one cell', examples: ['Email'] })),
  message: Type.String({ description: 'What is wrong', examples: ['value is not a valid email address'] }),
}, { description: 'An error of one row (a row may have several)' });

export const ErrorsQuerySchema = Type.Object({ ...PageQuery }, { additionalProperties: false });
