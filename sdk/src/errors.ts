// Typed errors. Every error the service answers carries a `type` from a closed set (the `Error`
// schema's enum, listed in the service's docs/api.md): programs branch on it (or on the class made
// from it), never on the text of `detail`. Each error also carries the status, `detail`, `param`
// (the one field at fault, when there is one) and the request id (quote it when asking for support).
import type { components } from './openapi.d.ts';

export type FieldError = components['schemas']['FieldError'];
/** The type of an error the service answers: `not_found`, `validation_error`, `rate_limited`, … */
export type ErrorType = components['schemas']['Error']['type'];
type ErrorBody = Partial<components['schemas']['Error']>;

export class ApiError extends Error {
  readonly status: number;
  /** What kind of error this is; undefined only for an answer that is not the service's (a proxy's 502). */
  readonly type: ErrorType | undefined;
  /** The service's `detail`: a sentence, or the field errors of a 422. */
  readonly detail: string | FieldError[];
  /** The one field of the request at fault (`work_email`, `list_id`, `cursor`), when there is one. */
  readonly param: string | undefined;
  readonly requestId: string | undefined;
  /** The whole error body as the service sent it. */
  readonly body: unknown;

  constructor(status: number, body: unknown, requestId: string | undefined) {
    const detail = detailOf(body, status);
    super(typeof detail === 'string' ? detail : detail.map((e) => `${e.loc.join('.')}: ${e.msg}`).join('; '));
    this.name = new.target.name;
    this.status = status;
    const { type, param } = (isObject(body) ? body : {}) as ErrorBody;
    this.type = typeof type === 'string' ? type : undefined;
    this.detail = detail;
    this.param = typeof param === 'string' ? param : undefined;
    this.requestId = requestId;
    this.body = body;
  }
}

/** `bad_request` (400): a required field is missing, a value is not allowed, a cursor is not one issued. */
export class BadRequestError extends ApiError {}
/** `authentication_failed` (401). */
export class AuthenticationError extends ApiError {}
/** `insufficient_credits` (402): the balance cannot pay for the operation; nothing was done. */
export class InsufficientCreditsError extends ApiError {}
/** `permission_denied` (403). */
export class PermissionError extends ApiError {
  /** The scope the key lacks, when a scope is what is missing. */
  get scope(): string | undefined {
    const { scope } = this.body as ErrorBody;
    return typeof scope === 'string' ? scope : undefined;
  }
}
/** `not_found` (404). */
export class NotFoundError extends ApiError {}
/** `conflict` (409): the request conflicts with the current state. */
export class ConflictError extends ApiError {}
/**
 * `idempotency_conflict`: the Idempotency-Key is in use by a request still running (409; the
 * client retries it) or was used for a different request (422; use a new key).
 */
export class IdempotencyConflictError extends ConflictError {}
/** `validation_error` (422). */
export class ValidationError extends ApiError {
  /** The field errors (`loc`, `msg`, `type`); one item holding the message when the 422 has a sentence. */
  get errors(): FieldError[] {
    return typeof this.detail === 'string' ? [{ loc: [], msg: this.detail, type: 'value_error' }] : this.detail;
  }
}
/** `rate_limited` (429). */
export class RateLimitError extends ApiError {
  /** Seconds to wait before trying again (`Retry-After`). */
  readonly retryAfter: number | undefined;

  constructor(status: number, body: unknown, requestId: string | undefined, retryAfter: number | undefined) {
    super(status, body, requestId);
    this.retryAfter = retryAfter;
  }
}
/** `service_unavailable` (503): the store is away for a moment; retried. */
export class ServiceUnavailableError extends ApiError {}
/** `provider_not_configured` (503): a provider setting is missing (`detail` names it); not retried. */
export class ProviderNotConfiguredError extends ApiError {}

/** The request never got an answer (network failure, every retry spent). */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function detailOf(body: unknown, status: number): string | FieldError[] {
  const detail = isObject(body) ? body.detail : undefined;
  if (typeof detail === 'string' || Array.isArray(detail)) return detail as string | FieldError[];
  return `HTTP ${status}`;
}

type ErrorClass = new (status: number, body: unknown, requestId: string | undefined) => ApiError;

const BY_TYPE: Partial<Record<ErrorType, ErrorClass>> = {
  bad_request: BadRequestError,
  authentication_failed: AuthenticationError,
  insufficient_credits: InsufficientCreditsError,
  permission_denied: PermissionError,
  not_found: NotFoundError,
  conflict: ConflictError,
  idempotency_conflict: IdempotencyConflictError,
  validation_error: ValidationError,
  service_unavailable: ServiceUnavailableError,
  provider_not_configured: ProviderNotConfiguredError,
};

/** For answers without a type (not the service's own): the class of their status. */
const BY_STATUS: Record<number, ErrorClass> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: InsufficientCreditsError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  422: ValidationError,
  503: ServiceUnavailableError,
};

export function errorOf(status: number, body: unknown, requestId: string | undefined, retryAfter: number | undefined): ApiError {
  const type = isObject(body) ? body.type : undefined;
  if (type === 'rate_limited' || (type === undefined && status === 429)) return new RateLimitError(status, body, requestId, retryAfter);
  const Class = (typeof type === 'string' ? BY_TYPE[type as ErrorType] : BY_STATUS[status]) ?? ApiError;
  return new Class(status, body, requestId);
}

/** Whether a retry of the same request (same Idempotency-Key) may succeed. */
export function retryable(error: ApiError): boolean {
  if (error.status === 429) return true;
  if (error.status === 409) return error.type === 'idempotency_conflict';
  return error.status >= 500 && error.type !== 'provider_not_configured';
}
