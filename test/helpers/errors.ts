// The error body as docs/api.md documents it, for tests that compare whole error bodies: the `type`
// of each status, written out here rather than read from the service, so a changed mapping fails.

/** The type of an error of each status. 409 and 422 are also `idempotency_conflict` (asserted where they happen). */
export const TYPE_OF_STATUS: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'authentication_failed',
  402: 'insufficient_credits',
  403: 'permission_denied',
  404: 'not_found',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  417: 'expectation_failed',
  422: 'validation_error',
  429: 'rate_limited',
  431: 'header_fields_too_large',
  500: 'internal_error',
  503: 'service_unavailable',
};

/** The whole body of an error of `status`: its type, `detail`, and the other members given (`param`, `scope`, …). */
export function errorBody(status: number, detail: unknown, members: Record<string, unknown> = {}): Record<string, unknown> {
  const type = TYPE_OF_STATUS[status];
  if (type === undefined) throw new Error(`no error type is documented for status ${status}`);
  return { type, detail, ...members };
}

/** Every type an error of each status may carry: the status's own, and the second types of 409, 422 and 503. */
export const TYPES_OF_STATUS: Readonly<Record<number, readonly string[]>> = {
  ...Object.fromEntries(Object.entries(TYPE_OF_STATUS).map(([status, type]) => [status, [type]])),
  409: ['conflict', 'idempotency_conflict'],
  422: ['validation_error', 'idempotency_conflict'],
  503: ['service_unavailable', 'provider_not_configured'],
};
