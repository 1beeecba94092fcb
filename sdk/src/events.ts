// The live event stream: `GET /v1/events` as Server-Sent Events, read as an async iterator of
// events. When the connection drops (or the server restarts and ends it), the iterator reconnects
// with `Last-Event-ID` set to the last event it yielded, so no event is missed or repeated.
import { ConnectionError, errorOf, retryable } from './errors.ts';
import { backoff, retryAfterOf, sleep, type Http } from './http.ts';
import type { components, operations } from './openapi.d.ts';

export type Event = components['schemas']['Event'];

export interface StreamOptions {
  /** Resume after this event id: every later event is replayed first, then the stream goes live. */
  since?: string;
  /** Only events of this type. */
  type?: NonNullable<operations['listEvents']['parameters']['query']>['type'];
  /** Stops the stream (the iterator then ends). Breaking out of `for await` stops it too. */
  signal?: AbortSignal;
}

export async function* streamEvents(http: Http, options: StreamOptions = {}): AsyncGenerator<Event, void, undefined> {
  let lastId = options.since;
  let failures = 0;
  while (!options.signal?.aborted) {
    const connection = new AbortController();
    const stop = () => connection.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', stop, { once: true });
    try {
      let response: Response;
      try {
        response = await fetchStream(http, lastId, options.type, connection.signal);
      } catch (error) {
        if (options.signal?.aborted) return;
        if (++failures > http.maxRetries) throw new ConnectionError(`event stream: ${(error as Error).message}`, { cause: error });
        await sleep(backoff(failures - 1), options.signal).catch(() => undefined);
        continue;
      }
      if (!response.ok) {
        const body = await response.json().catch(() => undefined);
        const error = errorOf(response.status, body, response.headers.get('x-request-id') ?? undefined, retryAfterOf(response));
        if (!retryable(error) || ++failures > http.maxRetries) throw error;
        const retryAfter = retryAfterOf(response);
        await sleep(retryAfter !== undefined ? retryAfter * 1000 : backoff(failures - 1), options.signal).catch(() => undefined);
        continue;
      }
      failures = 0;
      try {
        for await (const event of parseStream(response.body!)) {
          lastId = event.id;
          yield event;
        }
        // The server ended the stream (it is shutting down): reconnect, without hammering it.
        await sleep(backoff(0), options.signal).catch(() => undefined);
      } catch (error) {
        // A connection dropped mid-stream: reconnect from the last event yielded.
        if (options.signal?.aborted) return;
        if (++failures > http.maxRetries) throw new ConnectionError(`event stream: ${(error as Error).message}`, { cause: error });
        await sleep(backoff(failures - 1), options.signal).catch(() => undefined);
      }
    } finally {
      options.signal?.removeEventListener('abort', stop);
      connection.abort();
    }
  }
}

function fetchStream(http: Http, lastId: string | undefined, type: string | undefined, signal: AbortSignal): Promise<Response> {
  const headers = http.headers({ accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) });
  return http.fetch(http.url('/v1/events', { type }), { headers, signal });
}

/** The events of an SSE body: `data:` lines joined, comments (`: ping`) and other fields ignored. */
async function* parseStream(body: ReadableStream<Uint8Array>): AsyncGenerator<Event> {
  let buffer = '';
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let end: number;
    while ((end = buffer.search(/\r?\n\r?\n/)) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      const data = block.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice(5).replace(/^ /, ''));
      if (data.length) yield JSON.parse(data.join('\n')) as Event;
    }
  }
}
