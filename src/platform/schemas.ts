// Shared TypeBox building blocks. Every string has a length bound and refuses NUL (PostgreSQL cannot
// store it) and lone UTF-16 surrogates (no store can: they would be stored as U+FFFD, unlike the value
// acknowledged), so hostile input is a 422 at the edge, never a database error or a silent change.
import { Type, type TSchema } from 'typebox';
import { ERROR_TYPES } from './errors.ts';

// Validated with the `u` flag: a surrogate pair is one code point, a lone surrogate is refused.
export const NO_NUL = '^[^\\u0000\\ud800-\\udfff]*$';

interface StrOptions {
  description: string;
  examples?: unknown[];
  maxLength?: number;
  minLength?: number;
  format?: string;
}

export const Str = (o: StrOptions) => Type.String({ maxLength: 1000, pattern: NO_NUL, ...o });

export const Email = (description: string, example = 'ada@example.com') =>
  Type.String({ format: 'email', maxLength: 254, description, examples: [example] });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A string enumeration rendered as a plain JSON Schema `enum`. */
export const StringEnum = <const T extends readonly string[]>(values: T, o: { description: string; examples?: unknown[] }) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...o });

export const Timestamp = (description: string) => Type.Integer({ description, examples: [1767225600] });

export const Tags = Type.Array(Str({ description: 'A tag', maxLength: 100, minLength: 1, examples: ['vip'] }), {
  maxItems: 50,
  description: 'Free-form labels',
  examples: [['vip', 'q4']],
});

export const IdParams = (prefix: string, what: string) =>
  Type.Object({ id: Str({ description: `Identifier of the ${what}`, maxLength: 64, examples: [`${prefix}_01JD8X4M6R2T9Q3V5W7Y8Z0A1B`] }) });

export const FieldErrorSchema = Type.Object({
  loc: Type.Array(Type.String(), { description: 'Where the error is: body, query or path, then the field', examples: [['body', 'work_email']] }),
  msg: Type.String({ description: 'What is wrong', examples: ['value is not a valid email address'] }),
  type: Type.String({ description: 'Machine-readable error type', examples: ['value_error.email'] }),
});

// Every member an error body may have: a route's error answers are serialized by this schema, which
// drops any member it does not name. The OpenAPI document shows the `Error` component instead
// (openapi-document.ts), with the types each status may carry.
export const ErrorBody = Type.Object(
  {
    // Optional here only so that a body without it is never a serializer's 500; every body has it.
    type: Type.Optional(StringEnum(ERROR_TYPES, { description: 'What kind of error this is: stable, for programs to branch on (docs/api.md lists them)', examples: ['not_found'] })),
    detail: Type.Union([Type.String(), Type.Array(FieldErrorSchema)], {
      description: 'A human-readable message, or for validation errors (422) the list of field errors',
      examples: ['Contact not found'],
    }),
    param: Type.Optional(Type.String({ description: 'The one field of the request at fault, when there is one', examples: ['work_email'] })),
    scope: Type.Optional(Type.String({ description: 'On a 403 for a missing scope: the scope the key lacks', examples: ['contacts:write'] })),
    missing: Type.Optional(Type.Array(Type.String(), { description: 'On the 409 of a deal entering a stage without the evidence it requires: the missing evidence keys', examples: [['budget_confirmed']] })),
    checks: Type.Optional(Type.Array(Type.Object({
      name: Type.String({ description: 'What the check is about', examples: ['domains'] }),
      status: Type.String({ description: 'Always `fail` here', examples: ['fail'] }),
      detail: Type.String({ description: 'What the check found', examples: ['mail.example.com is not verified: DMARC (No TXT record at _dmarc.mail.example.com)'] }),
    }), { description: 'On the 409 of a campaign launch refused by its preflight: the failing checks' })),
  },
  { description: 'Error' },
);

/** What each error status means, wherever the API answers it (route responses and the OpenAPI document). */
export const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: a required field is missing, a value is not one of those allowed, the body is not valid JSON, the cursor is malformed or foreign, or a header (Idempotency-Key, X-Org-Id, Host) is malformed',
  401: 'Missing, invalid, expired or revoked API key, or a JWT instead of an API key',
  402: 'Not enough credits for the operation',
  403: 'The key lacks the scope this operation needs (`API key lacks scope <scope>`), or may not act for the organization X-Org-Id names',
  404: 'Not found, or not visible to this key',
  408: 'The request (headers and body) was not received in time',
  409: 'Conflict with the current state (`conflict`), or a request with the same Idempotency-Key is still being processed (`idempotency_conflict`: retry later)',
  413: 'Request body larger than the route\'s limit: 1 MiB (64 KiB on public routes)',
  414: 'A path segment of the URL is longer than 100 characters',
  415: 'Content-Type is not application/json',
  417: 'An `Expect` header other than `100-continue`',
  422: 'The body, query or path fails validation (`validation_error`: `detail` lists the field errors), or the Idempotency-Key was already used with a different request (`idempotency_conflict`)',
  429: 'Rate limit exceeded; retry after `Retry-After` seconds',
  431: 'The request line and headers exceed 64 KiB',
  500: 'A fault of the service (`internal_error`); the body carries nothing of it. Retry with backoff',
  503: 'The store is unavailable (`service_unavailable`): retry with backoff after `Retry-After` seconds; or a provider setting is missing (`provider_not_configured`: `detail` names it)',
};

/** Error responses documented on every authenticated route, plus any route-specific ones. */
export function errorResponses(...extra: number[]): Record<number, TSchema> {
  const codes = new Set([400, 401, 403, 422, 429, 503, ...extra]);
  const out: Record<number, TSchema> = {};
  for (const code of [...codes].sort()) out[code] = Type.Object(ErrorBody.properties, { description: ERROR_DESCRIPTIONS[code] });
  return out;
}

/** `createContact` → `CreateContact`, `deal pipeline` → `DealPipeline`: names of shapes in the OpenAPI document. */
export const pascal = (s: string) => s.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('');

/** The title of a shape wrapping `schema`, which names it in the OpenAPI document: `Contact` → `ContactResponse`. */
const titled = (schema: TSchema, suffix: string) => {
  const { title } = schema as { title?: unknown };
  return typeof title === 'string' ? { title: `${title}${suffix}` } : {};
};

/** A `text/csv` answer (a download), documented as such rather than as JSON. */
export const CsvResponse = (description: string) => ({ description, content: { 'text/csv': { schema: Type.String({ description }) } } });

export const Data = <T extends TSchema>(schema: T, description: string) =>
  Type.Object({ data: schema }, { ...titled(schema, 'Response'), description });

export const PaginationSchema = Type.Object({
  page: Type.Integer({ description: 'Current page number, 1-indexed', examples: [1] }),
  limit: Type.Integer({ description: 'Items per page', examples: [50] }),
  total: Type.Integer({ description: 'Total items across all pages', examples: [1234] }),
  has_next: Type.Boolean({ description: 'True if more pages exist', examples: [true] }),
  next_cursor: Nullable(Type.String({ description: 'Opaque cursor for the next page; null on the last page', examples: ['eyJ2IjoiY29uXzAxIn0.c2ln'] })),
}, { title: 'Pagination', description: 'Where this page is among all of them' });

export const ListOf = <T extends TSchema>(item: T, description: string) =>
  Type.Object(
    {
      object: Type.Literal('list', { description: 'Always `list`' }),
      data: Type.Array(item),
      next_cursor: Nullable(Type.String({ description: 'Same as pagination.next_cursor' })),
      pagination: PaginationSchema,
    },
    { ...titled(item, 'List'), description },
  );

export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, 1-indexed; ignored when `cursor` is given', examples: [1] })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Items per page, 1 to 200', examples: [50] })),
  // No length bound here: a cursor that is not one issued, whatever its length, is 400 `bad_request`
  // from the paging helper (pagination.ts), never a 422.
  cursor: Type.Optional(Type.String({ description: 'Opaque `next_cursor` from a previous page; takes precedence over `page`. Anything else is 400 with `"type": "bad_request"`.', examples: ['eyJrIjoibHN0XzAxIiwicCI6Mn0.c2lnbmF0dXJl'] })),
};

export const DeletedSchema = (prefix: string, what: string) =>
  Type.Object({
    id: Type.String({ description: `Identifier of the deleted ${what}`, examples: [`${prefix}_01JD8X4M6R2T9Q3V5W7Y8Z0A1B`] }),
    deleted: Type.Literal(true, { description: 'Always true' }),
  }, { title: `Deleted${pascal(what)}`, description: `The ${what} was deleted` });

/** Who made a change: the API key and its organization (an agency's, when it acted for a client). */
export const ActorSchema = Nullable(Type.Object({
  api_key_id: Type.String({ description: 'The key that made the change', examples: ['key_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  org_id: Type.String({ description: 'The organization of that key: an agency\'s when it acted for this organization', examples: ['org_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
}, { title: 'Actor', description: 'Who made the change; null for changes no API key made (administration, sandbox data)' }));

/** The API form of the actor columns. */
export const actorOf = (row: { actor_key_id: string | null; actor_org_id: string | null }) =>
  row.actor_key_id && row.actor_org_id ? { api_key_id: row.actor_key_id, org_id: row.actor_org_id } : null;
