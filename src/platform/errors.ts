// One error type with a closed set of kinds, each mapped to its status. Handlers throw; the central
// error handler (error-handler.ts) turns every error into the spec's `{"detail": …}` body.

export type ErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'payment_required'
  | 'forbidden'
  | 'not_found'
  | 'request_timeout'
  | 'conflict'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'expectation_failed'
  | 'validation'
  | 'header_fields_too_large'
  | 'rate_limited'
  | 'unavailable'
  | 'internal';

const STATUS: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  expectation_failed: 417,
  validation: 422,
  header_fields_too_large: 431,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

export interface FieldError {
  loc: string[];
  msg: string;
  type: string;
}

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;
  readonly detail: string | FieldError[];
  /** Extra top-level members of the body, e.g. `type` for cursor errors. */
  readonly extra: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(kind: ErrorKind, detail: string | FieldError[], options: { extra?: Record<string, unknown>; headers?: Record<string, string> } = {}) {
    // An AppError is an answer, not a fault: its stack is never shown or logged, and capturing one
    // would be most of the cost of a refused request (a 429 under load, a 404 probe).
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(typeof detail === 'string' ? detail : 'Validation failed');
    Error.stackTraceLimit = stackTraceLimit;
    this.kind = kind;
    this.status = STATUS[kind];
    this.detail = detail;
    this.extra = options.extra;
    this.headers = options.headers;
  }

  body(): Record<string, unknown> {
    return { ...this.extra, detail: this.detail };
  }
}

export const badRequest = (detail: string) => new AppError('bad_request', detail);
export const notFound = (detail: string) => new AppError('not_found', detail);
export const conflict = (detail: string) => new AppError('conflict', detail);
export const forbidden = (detail: string) => new AppError('forbidden', detail);
export const unauthorized = (detail: string) => new AppError('unauthorized', detail);
export const validationError = (errors: FieldError[]) => new AppError('validation', errors);
export const cursorError = (detail: string) => new AppError('bad_request', detail, { extra: { type: 'bad_request' } });
/** A cursor that is not one the service issued in form: given twice, too long, not its characters. */
export const malformedCursor = () => cursorError('Malformed cursor: pass back a next_cursor exactly as returned');
