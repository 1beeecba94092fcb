// One error type with a closed set of kinds, each mapped to its status and to the stable `type` of
// its body. Handlers throw; the central error handler (error-handler.ts) turns every error into the
// spec's `{"detail": …}` body, with `type` (what a program branches on, documented in docs/api.md),
// and `param` when one field of the request is at fault.

export type ErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'payment_required'
  | 'forbidden'
  | 'not_found'
  | 'request_timeout'
  | 'conflict'
  | 'idempotency_in_flight'
  | 'idempotency_key_reused'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'expectation_failed'
  | 'validation'
  | 'header_fields_too_large'
  | 'rate_limited'
  | 'unavailable'
  | 'provider_not_configured'
  | 'internal';

/** The `type` of an error body: a closed set, stable across releases (new types may be added). */
export const ERROR_TYPES = [
  'bad_request',
  'authentication_failed',
  'insufficient_credits',
  'permission_denied',
  'not_found',
  'request_timeout',
  'conflict',
  'idempotency_conflict',
  'payload_too_large',
  'uri_too_long',
  'unsupported_media_type',
  'expectation_failed',
  'validation_error',
  'header_fields_too_large',
  'rate_limited',
  'service_unavailable',
  'provider_not_configured',
  'internal_error',
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

/** The one mapping of kinds to statuses and types. */
const KINDS: Record<ErrorKind, { status: number; type: ErrorType }> = {
  bad_request: { status: 400, type: 'bad_request' },
  unauthorized: { status: 401, type: 'authentication_failed' },
  payment_required: { status: 402, type: 'insufficient_credits' },
  forbidden: { status: 403, type: 'permission_denied' },
  not_found: { status: 404, type: 'not_found' },
  request_timeout: { status: 408, type: 'request_timeout' },
  conflict: { status: 409, type: 'conflict' },
  // A request with the same Idempotency-Key still running (retry later) …
  idempotency_in_flight: { status: 409, type: 'idempotency_conflict' },
  // … or the key already used with a different request (use a new key).
  idempotency_key_reused: { status: 422, type: 'idempotency_conflict' },
  payload_too_large: { status: 413, type: 'payload_too_large' },
  uri_too_long: { status: 414, type: 'uri_too_long' },
  unsupported_media_type: { status: 415, type: 'unsupported_media_type' },
  expectation_failed: { status: 417, type: 'expectation_failed' },
  validation: { status: 422, type: 'validation_error' },
  header_fields_too_large: { status: 431, type: 'header_fields_too_large' },
  rate_limited: { status: 429, type: 'rate_limited' },
  unavailable: { status: 503, type: 'service_unavailable' },
  // A provider setting is missing: `detail` names it. Retrying does not help until it is set.
  provider_not_configured: { status: 503, type: 'provider_not_configured' },
  internal: { status: 500, type: 'internal_error' },
};

/** The types an answer of `status` may carry (for the OpenAPI document), in the order of ERROR_TYPES. */
export function typesOfStatus(status: number): ErrorType[] {
  const types = new Set(Object.values(KINDS).filter((k) => k.status === status).map((k) => k.type));
  return ERROR_TYPES.filter((type) => types.has(type));
}

/**
 * The kind of an answer made with only a status (Node's parser, Fastify's own errors): the first kind
 * of that status, else `bad_request` for a 4xx and `internal` for anything else.
 */
export function kindOfStatus(status: number): ErrorKind {
  const found = (Object.keys(KINDS) as ErrorKind[]).find((kind) => KINDS[kind].status === status);
  return found ?? (status >= 400 && status < 500 ? 'bad_request' : 'internal');
}

export interface FieldError {
  loc: string[];
  msg: string;
  type: string;
}

export interface ErrorOptions {
  /** The one field of the request at fault (`email`, `filters.0.value`), when there is one. */
  param?: string;
  /** Further members of the body, e.g. the missing `scope` of a 403. */
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** The field of a 422 at fault when all its errors are about one field: its `loc` after body/query/path. */
function paramOf(errors: FieldError[]): string | undefined {
  const fields = new Set(errors.map((e) => e.loc.slice(1).join('.')));
  const [only] = fields;
  return fields.size === 1 && only !== '' ? only : undefined;
}

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;
  readonly type: ErrorType;
  readonly detail: string | FieldError[];
  readonly param: string | undefined;
  /** Further top-level members of the body. */
  readonly extra: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(kind: ErrorKind, detail: string | FieldError[], options: ErrorOptions = {}) {
    // An AppError is an answer, not a fault: its stack is never shown or logged, and capturing one
    // would be most of the cost of a refused request (a 429 under load, a 404 probe).
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(typeof detail === 'string' ? detail : 'Validation failed');
    Error.stackTraceLimit = stackTraceLimit;
    this.kind = kind;
    this.status = KINDS[kind].status;
    this.type = KINDS[kind].type;
    this.detail = detail;
    this.param = options.param;
    this.extra = options.extra;
    this.headers = options.headers;
  }

  /** The body: `type` and `detail` always, `param` when one field is at fault, then any extra members. */
  body(): Record<string, unknown> {
    // Field errors are read when answering: a route may have moved their `loc` under its own member.
    const param = this.param ?? (Array.isArray(this.detail) ? paramOf(this.detail) : undefined);
    return { type: this.type, detail: this.detail, ...(param !== undefined ? { param } : {}), ...this.extra };
  }
}

export const badRequest = (detail: string, param?: string) => new AppError('bad_request', detail, { param });
export const notFound = (detail: string) => new AppError('not_found', detail);
export const conflict = (detail: string) => new AppError('conflict', detail);
export const forbidden = (detail: string, extra?: Record<string, unknown>) => new AppError('forbidden', detail, { extra });
export const unauthorized = (detail: string) => new AppError('unauthorized', detail);
export const validationError = (errors: FieldError[]) => new AppError('validation', errors);
/** A cursor that is malformed, foreign or tampered with: 400 `bad_request` about the `cursor` parameter. */
export const cursorError = (detail: string) => new AppError('bad_request', detail, { param: 'cursor' });
/** A cursor that is not one the service issued in form: given twice, too long, not its characters. */
export const malformedCursor = () => cursorError('Malformed cursor: pass back a next_cursor exactly as returned');
/** The body of an answer made outside the error handler, with only a status and a message. */
export const errorBody = (status: number, detail: string) => new AppError(kindOfStatus(status), detail).body();
