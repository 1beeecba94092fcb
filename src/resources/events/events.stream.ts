// Live delivery of a tenant's events as Server-Sent Events. A stream remembers the seq of the last
// event it sent and only ever asks the store for "this tenant's events after that seq", so replay
// after Last-Event-ID, in-process wake-ups and the timer poll (which carries events committed by
// other processes) all go through one query and can neither skip nor repeat an event. After each
// read (at least every POLL_MS) the stream checks that its key would still be admitted: a key
// revoked, expired, narrowed or unlinked from the client ends the stream (a reconnect is then 401
// or 403, saying why), with nothing sent that was read after the change is seen.
import { once } from 'node:events';
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authDepsOf, stillAdmitted } from '../../platform/auth.ts';
import { eventsAfter, toEvent } from './events.store.ts';

const POLL_MS = 1000;
const BATCH = 500;

/** True when a GET asks for `text/event-stream` (a HEAD gets the list's headers). */
export function wantsStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return request.method === 'GET' && typeof accept === 'string' && accept.split(',').some((part) => part.split(';')[0].trim().toLowerCase() === 'text/event-stream');
}

const frame = (row: Parameters<typeof toEvent>[0]) => `id: ${row.id}\nevent: ${row.type}\ndata: ${JSON.stringify(toEvent(row))}\n\n`;

/** Takes over the response and streams the tenant's events after `afterSeq` until shutdown or disconnect. */
export function streamEvents(request: FastifyRequest, reply: FastifyReply, options: { afterSeq: number; type?: string }): void {
  const { database, hub, closing, config } = request.server.services;
  const auth = authDepsOf(request.server.services);
  const scope = request.scope;
  const res = reply.raw;
  let lastSeq = options.afterSeq;
  let sent = 0;
  let ended = false;
  let running = false;
  let again = false;
  const stop = new AbortController();

  reply.hijack();
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
  res.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-request-id': request.id,
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();

  const write = async (chunk: string) => {
    if (!res.write(chunk)) await once(res, 'drain', { signal: stop.signal });
  };

  // One catch-up at a time; a wake-up during one makes it run once more.
  const pump = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        let rows;
        do {
          rows = await eventsAfter(database.db, scope, lastSeq, options.type, BATCH);
          // Checked once the rows are read: none read after the key stopped being admitted is sent.
          if (!(await stillAdmitted(auth, request))) return end();
          for (const row of rows) {
            if (ended) return;
            await write(frame(row));
            lastSeq = Number(row.seq);
            sent++;
          }
        } while (rows.length === BATCH && !ended);
      } while (again && !ended);
    } catch (error) {
      // The client reconnects with Last-Event-ID and misses nothing.
      if (!ended) request.log.warn({ err: { message: (error as Error).message } }, 'event stream ended after a store error');
      end();
    } finally {
      running = false;
    }
  };
  const wake = () => void pump();

  const unsubscribe = hub.subscribe(scope, wake);
  const poll = setInterval(wake, POLL_MS);
  const heartbeat = setInterval(() => void res.write(': ping\n\n'), config.sseHeartbeatMs);

  function end(): void {
    if (ended) return;
    ended = true;
    clearInterval(poll);
    clearInterval(heartbeat);
    unsubscribe();
    closing.removeEventListener('abort', end);
    res.off('close', end);
    stop.abort();
    if (!res.writableEnded) res.end();
    request.log.info({ method: request.method, route: request.routeOptions.url, status: 200, ms: Math.round(reply.elapsedTime), org: scope.orgId, events: sent }, 'request');
  }
  closing.addEventListener('abort', end);
  res.on('close', end);
  if (closing.aborted) end();
  else wake();
}
