// The one place errors become responses. Client mistakes get their 4xx with a clear `detail`;
// an unavailable store is 503; anything else is a 500 whose body never carries internals. Every
// body is an AppError's, so it carries the `type` of its kind (errors.ts).
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, kindOfStatus, type ErrorKind } from './errors.ts';
import { toValidationError, type RouteMessages } from './validation.ts';

const FASTIFY_ERRORS: Record<string, [ErrorKind, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'Content-Type must be application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_request', 'Content-Length does not match the body'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['bad_request', 'Request body is not valid JSON'],
};

/** `1 MiB`, `64 KiB`: a body limit as the messages name it. */
const sizeOf = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`);

// Connection-level failures of either store: the request may succeed once the store is back.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006', '53300', 'ERR_SQLITE_BUSY']);

/** A failure to reach the store (as opposed to a failure of the statement itself). */
export function isUnavailable(error: { code?: unknown; message?: string; errcode?: unknown }): boolean {
  if (typeof error.code === 'string' && UNAVAILABLE_CODES.has(error.code)) return true;
  if (error.errcode === 5 || error.errcode === 6) return true; // SQLITE_BUSY, SQLITE_LOCKED
  const message = error.message ?? '';
  return /Connection terminated|connection timeout|Client has encountered a connection error|database is locked|timeout exceeded when trying to connect/i.test(message);
}

export function isUniqueViolation(error: { code?: unknown; errcode?: unknown; message?: string }): boolean {
  return error.code === '23505' || error.errcode === 2067 || error.errcode === 1555 || /UNIQUE constraint failed/.test(error.message ?? '');
}

/**
 * A client that hangs up before its request is complete: its body reader fails with "aborted". It is
 * the client's doing, not the store's, and nobody is left to answer.
 */
function isClientAbort(error: { code?: unknown }, request: FastifyRequest): boolean {
  return request.raw.readableAborted || (error.code === 'ECONNRESET' && request.raw.socket?.destroyed === true);
}

function answer(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.status).send(error.body());
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & { errcode?: unknown }, request, reply) => {
    if (isClientAbort(error, request)) {
      request.log.info({ code: error.code }, 'client abort: the connection closed before the request was complete');
      return answer(reply, new AppError('bad_request', 'The connection closed before the request was complete'));
    }
    if (error instanceof AppError) return answer(reply, error);
    if (error.validation) {
      const messages = (request.routeOptions.config as { messages?: RouteMessages }).messages;
      return answer(reply, toValidationError(error.validation as never, error.validationContext ?? 'body', messages));
    }
    // A route may take less than the app's 1 MiB (public routes, public/surface.ts): the message names its limit.
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return answer(reply, new AppError('payload_too_large', `Request body exceeds the ${sizeOf(request.routeOptions.bodyLimit)} limit`));
    const known = error.code ? FASTIFY_ERRORS[error.code] : undefined;
    if (known) return answer(reply, new AppError(known[0], known[1]));
    if (error instanceof SyntaxError && error.statusCode === 400) return answer(reply, new AppError('bad_request', 'Request body is not valid JSON'));
    if (isUniqueViolation(error)) return answer(reply, new AppError('conflict', 'The request conflicts with an existing record'));
    if (isUnavailable(error)) {
      request.log.error({ err: { message: error.message, code: error.code } }, 'store unavailable');
      return answer(reply, new AppError('unavailable', 'The service is temporarily unavailable; retry with backoff', { headers: { 'retry-after': '1' } }));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.code(status).send(new AppError(kindOfStatus(status), STATUS_CODES[status] ?? 'Bad Request').body());
    request.log.error({ err: error }, 'unhandled error');
    return answer(reply, new AppError('internal', 'Internal Server Error'));
  });

  app.setNotFoundHandler((_request, reply) => answer(reply, new AppError('not_found', 'Not Found')));
}
