// The HTTP server's own limits, and the answers Node's HTTP layer makes before Fastify sees a
// request: a malformed request line or header, headers over the size limit, a request not received
// in time, an `Expect` other than `100-continue`, a CONNECT. Every one of them answers in the error shape
// (`{"type": …, "detail": …}` with a request id) instead of Node's or Fastify's own bodies, and closes the
// connection, since what is left on it cannot be trusted.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { AppError, errorBody } from './errors.ts';

/** Request line and headers together; room for the 20,000-character query values the API accepts. */
export const MAX_HEADER_BYTES = 64 * 1024;

const DETAIL = {
  timeout: 'The request was not received in time; send the whole request, body included, within the time limit',
  tooLarge: `The request line and headers exceed ${MAX_HEADER_BYTES / 1024} KiB`,
  malformed: 'Malformed HTTP request: the request line, a header or the body framing is invalid',
  expectation: 'Expectation Failed: the only expectation supported is `Expect: 100-continue`',
  connect: 'The CONNECT method is not supported: this service is not a proxy',
};

/**
 * How often Node looks for requests that are late, and how early the deadline is set so that a late
 * request is cut within `requestTimeoutMs` of its start, never after it.
 */
export function requestDeadline(requestTimeoutMs: number): { checkEveryMs: number; timeoutMs: number } {
  const checkEveryMs = Math.min(1000, Math.max(10, Math.floor(requestTimeoutMs / 10)));
  return { checkEveryMs, timeoutMs: requestTimeoutMs - checkEveryMs };
}

/** Options of the HTTP server (Fastify's `http`, `requestTimeout` and `clientErrorHandler`). */
export function serverOptions(config: Config) {
  const deadline = requestDeadline(config.requestTimeoutMs);
  const http: ServerOptions = {
    maxHeaderSize: MAX_HEADER_BYTES,
    // A request without Host is refused by the platform (early-answers.ts) in the error shape,
    // not by Node with an empty body.
    requireHostHeader: false,
    // Headers, like the whole request, must arrive within the deadline (slow-header clients).
    headersTimeout: deadline.timeoutMs,
    connectionsCheckingInterval: deadline.checkEveryMs,
  };
  // The deadline covers receiving the request only: once it has arrived, a long answer (the live
  // event stream) is not cut.
  return { http, requestTimeout: deadline.timeoutMs, clientErrorHandler };
}

function rawAnswer(status: number, detail: string, requestId: string = randomUUID()): string {
  const body = JSON.stringify(errorBody(status, detail));
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

function classify(code: string | undefined): [number, string] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, DETAIL.timeout];
  if (code === 'HPE_HEADER_OVERFLOW') return [431, DETAIL.tooLarge];
  return [400, DETAIL.malformed];
}

/** The request a socket is serving, when Fastify is reading its body and has not answered yet. */
function readingBody(socket: Socket): IncomingMessage | undefined {
  const res = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (!res || res.headersSent || !res.req || res.req.complete) return undefined;
  return res.req.listenerCount('error') > 0 ? res.req : undefined;
}

/**
 * Requests answered before their body arrived (a 401 or 429 refuses before reading it), by socket.
 * Node keeps reading and discarding such a body so the connection can serve the next request; if
 * the rest never comes, the deadline closes the connection without a second answer to the request.
 * An answer that closes the connection (a 413) closes it only after lingering (closeAfterLingering).
 */
const answeredEarly = new WeakMap<Socket, IncomingMessage>();

export function noteAnswered(req: IncomingMessage): void {
  if (req.complete || !req.socket) return;
  answeredEarly.set(req.socket, req);
  req.socket.destroySoon = closeAfterLingering;
}

/** How long, and how many more bytes, a connection closed before its request's body arrived keeps reading. */
export const LINGER_MS = 5000;
export const LINGER_BYTES = 64 * 1024 * 1024;

/** Connections whose request was cut off (too slow, or a broken body): nothing more is read from them. */
const cutOff = new WeakSet<Socket>();

/**
 * Closes a connection whose answer says `Connection: close` (Node calls it once the answer is written)
 * as nginx does, when the request's body is still arriving (a 413 for a body over the limit, a 417):
 * it half-closes after the answer and reads and discards the rest until the body ends, the client
 * hangs up, LINGER_MS pass or LINGER_BYTES more arrive, whichever comes first, then closes. Closing at
 * once would leave the client's bytes unread, which the kernel answers with a reset: a client still
 * writing its body then sees EPIPE or ECONNRESET and never reads the answer. A client that stops
 * sending is cut off by the request deadline as before (clientErrorHandler).
 */
function closeAfterLingering(this: Socket): void {
  const req = answeredEarly.get(this);
  const server = (this as Socket & { server?: { listening: boolean } }).server;
  if (!req || req.complete || cutOff.has(this) || server?.listening === false) return Socket.prototype.destroySoon.call(this);
  this.end();
  const start = this.bytesRead;
  const close = () => {
    clearTimeout(timer);
    this.destroy();
  };
  const timer = setTimeout(close, LINGER_MS).unref();
  req.on('data', () => {
    if (this.bytesRead - start > LINGER_BYTES) close();
  });
  req.once('end', close);
  this.once('close', () => clearTimeout(timer));
}

/** Connections refused by a raw answer, written or waiting for the answers ahead of it. */
const refusing = new WeakSet<Socket>();

/** Fastify's `clientErrorHandler`: Node's HTTP parser or its request deadline refused the connection. */
function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  // Once refused, the parser stays failed: what else the client sends (or its hang-up) fails again,
  // and is answered by the one refusal.
  if (error.code === 'ECONNRESET' || socket.destroyed || refusing.has(socket)) return;
  if (answeredEarly.get(socket)?.complete === false) {
    socket.destroy();
    return;
  }
  const request = readingBody(socket);
  // The client hung up mid-request: nobody is left to answer. A body reader logs it as a client
  // abort when the socket goes (error-handler.ts); otherwise it is logged here.
  if (error.code === 'HPE_INVALID_EOF_STATE') {
    if (!request) this.log.info({ code: error.code }, 'client abort: the connection closed before the request was complete');
    socket.destroy();
    return;
  }
  const [status, detail] = classify(error.code);
  // A body that stalls or breaks its framing mid-way: the route's body reader gets the error, so the
  // answer goes through the error handler with the request's id and rate-limit headers (and is
  // logged by its request line).
  if (request) {
    cutOff.add(socket);
    const kind = status === 408 ? 'request_timeout' : 'bad_request';
    request.emit('error', new AppError(kind, detail, { headers: { connection: 'close' } }));
    return;
  }
  refusing.add(socket);
  this.log.info({ status, code: error.code }, 'client error');
  afterAnswersInFlight(socket, () => {
    if (!socket.writable) return socket.destroy();
    socket.setTimeout(1000, () => socket.destroy());
    socket.end(rawAnswer(status, detail), () => socket.destroy());
  });
}

/**
 * Runs `then` once the answers to requests that came before on the connection (pipelined ahead of
 * the one refused) are written, so each is answered, in order, before the refusal closes it. Node
 * hands the socket to the next queued answer in its own 'finish' listener, which runs before this one.
 * An answer to a request not yet received whole is the refused request's own (a 401 made before its
 * body): the refusal replaces it.
 */
function afterAnswersInFlight(socket: Socket, then: () => void): void {
  const res = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (!res || res.writableFinished || !res.req?.complete) return then();
  res.once('finish', () => afterAnswersInFlight(socket, then));
}

/**
 * A CONNECT request, which Node hands over outside Fastify's request cycle (and closes without a word
 * when nobody listens for it), is refused with a raw 400 in the error shape.
 */
export function refuseConnect(app: FastifyInstance): void {
  app.server.on('connect', (req: IncomingMessage, socket: Socket) => {
    // Node took its own listeners off the socket: a reset must not go unhandled.
    socket.on('error', () => socket.destroy());
    const requestId = randomUUID();
    app.log.info({ reqId: requestId, method: req.method, route: 'unknown', status: 400 }, 'request');
    socket.setTimeout(1000, () => socket.destroy());
    socket.end(rawAnswer(400, DETAIL.connect, requestId), () => socket.destroy());
  });
}

/**
 * Requests whose `Expect` is not `100-continue` go through Fastify like any other (so the answer
 * carries the caller's rate-limit headers), marked to be refused with 417 before their route runs.
 */
const failedExpectations = new WeakSet<IncomingMessage>();

export function routeFailedExpectations(app: FastifyInstance): void {
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    failedExpectations.add(req);
    app.routing(req, res);
  });
}

export const expectationFailed = (req: IncomingMessage): boolean => failedExpectations.has(req);

export const EXPECTATION_DETAIL = DETAIL.expectation;

/**
 * At close, drops the connections that have no request in flight: Fastify closes idle kept-alive
 * connections, but a connection that has not yet sent a whole request is not idle to Node, and one
 * that sends nothing would hold the shutdown until its header deadline. Requests in flight finish.
 */
export function dropQuietConnectionsOnClose(app: FastifyInstance): void {
  const inFlight = new Map<Socket, number>();
  app.server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.once('close', () => {
      if (inFlight.has(socket)) inFlight.set(socket, inFlight.get(socket)! - 1);
    });
  });
  app.addHook('preClose', async () => {
    for (const [socket, n] of inFlight) if (n === 0) socket.destroy();
  });
}
