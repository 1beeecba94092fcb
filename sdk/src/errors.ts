// Typed errors: one class per status a caller handles differently, all carrying the service's
// `detail`, the status and the request id (quote it when asking for support).
import type { components } from './openapi.d.ts';

export type FieldError = components['schemas']['FieldError'];
type ErrorBody = components['schemas']['Error'];

export class ApiError extends Error {
  readonly status: number;
  /** The service's `detail`: a sentence, or the field errors of a 422. */
  readonly detail: string | FieldError[];
  readonly requestId: string | undefined;
  /** The whole error body as the service sent it. */
  readonly body: unknown;

  constructor(status: number, body: unknown, requestId: string | undefined) {
    const detail = detailOf(body, status);
    super(typeof detail === 'string' ? detail : detail.map((e) => `${e.loc.join('.')}: ${e.msg}`).join('; '));
    this.name = new.target.name;
    this.status = status;
    this.detail = detail;
    this.requestId = requestId;
    this.body = body;
  }
}

export class AuthenticationError extends ApiError {}
export class PermissionError extends ApiError {}
export class NotFoundError extends ApiError {}
export class ConflictError extends ApiError {
  /** The service's error type, when it gives one (e.g. missing evidence on a deal's stage). */
  get type(): string | undefined {
    return (this.body as Partial<ErrorBody> | undefined)?.type;
  }
}
export class ValidationError extends ApiError {
  /** The field errors (`loc`, `msg`, `type`); one item holding the message when the 422 has a sentence. */
  get errors(): FieldError[] {
    return typeof this.detail === 'string' ? [{ loc: [], msg: this.detail, type: 'value_error' }] : this.detail;
  }
}
export class RateLimitError extends ApiError {
  /** Seconds to wait before trying again (`Retry-After`). */
  readonly retryAfter: number | undefined;

  constructor(status: number, body: unknown, requestId: string | undefined, retryAfter: number | undefined) {
    super(status, body, requestId);
    this.retryAfter = retryAfter;
  }
}

/** The request never got an answer (network failure, every retry spent). */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}

function detailOf(body: unknown, status: number): string | FieldError[] {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string' || Array.isArray(detail)) return detail as string | FieldError[];
  return `HTTP ${status}`;
}

const CLASSES: Record<number, typeof ApiError> = {
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  422: ValidationError,
};

export function errorOf(status: number, body: unknown, requestId: string | undefined, retryAfter: number | undefined): ApiError {
  if (status === 429) return new RateLimitError(status, body, requestId, retryAfter);
  return new (CLASSES[status] ?? ApiError)(status, body, requestId);
}
