// The one HTTP client for every call the service makes to a URL a user gave (webhooks, imports). It
// bounds each call (a total time limit, the first KiB of the answer kept, the rest discarded),
// never follows redirects (a 3xx is an answer like any other, so a redirect cannot lead a call to
// another host), and guards against SSRF (outbound-addresses.ts says what it refuses), both for IP
// literals and for every address a host name resolves to, checked at connect time, so a name that
// resolves to a public address at creation and a private one later is refused too. No answer's body
// can end the process: its errors reach whoever reads it, and are dropped once nobody does.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { addressRefusal, guardedHost, nameRefusal, type OutboundPolicy } from './outbound-addresses.ts';

/** A call refused by the guard or one that could not be made; the message is safe to show. */
export class OutboundError extends Error {
  /** How long the call took before it failed, milliseconds (0 when refused before connecting). */
  durationMs = 0;
}

export interface OutboundResponse {
  status: number;
  /** The first `maxBytes` of the answer, as text. */
  body: string;
  durationMs: number;
}

/** A GET's answer: its body is read by iterating it, and what is not read is dropped with `discard`. */
export interface OutboundAnswer {
  status: number;
  /** The media type (`text/csv`), lower case, without parameters; undefined when the answer names none. */
  contentType: string | undefined;
  /** The declared length, when the answer declares one. */
  contentLength: number | undefined;
  /** The body; a failure while it is read (a reset, the time limit) is an OutboundError. */
  body: AsyncIterable<Buffer>;
  /** Stops the download and releases its connection; safe at any time, also after the end. */
  discard(): void;
}

export interface PostOptions {
  timeoutMs: number;
  maxBytes?: number;
  signal?: AbortSignal;
}

/** How the client resolves names: `dns.lookup` with `all: true`, or a stand-in with its signature. */
export type Resolve = (hostname: string, options: { all: true; family?: number; hints?: number }, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

export interface OutboundOptions {
  /** OUTBOUND_ALLOW_PRIVATE: loopback, private and reserved addresses may be reached. */
  allowPrivate: boolean;
  /** OUTBOUND_ALLOW_LINK_LOCAL_UNSAFE: link-local and cloud metadata addresses may be reached. */
  allowLinkLocal?: boolean;
  /** The resolver, node:dns `lookup` unless a test gives another. */
  lookup?: Resolve;
}

const refusedAddress = (refusal: string) => new OutboundError(`URL points to a ${refusal} address`);
const refusedName = (host: string, refusal: string) => new OutboundError(`${host} resolves to a ${refusal} address`);

/** What a failed connection says, without the internal error codes. */
const CONNECTION_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused', ECONNRESET: 'the connection was reset', EPIPE: 'the connection was reset',
  UND_ERR_SOCKET: 'the connection was closed before the answer', ENOTFOUND: 'the host name does not resolve', EAI_AGAIN: 'the host name does not resolve',
  ETIMEDOUT: 'the connection timed out', UND_ERR_CONNECT_TIMEOUT: 'the connection timed out', EHOSTUNREACH: 'the host is unreachable', ENETUNREACH: 'the network is unreachable',
};

/** The OutboundError a failure of a call becomes: the guard's own, the time limit, or a failed connection. */
function failureOf(error: unknown, timeoutMs: number, whileReading: boolean): OutboundError {
  if (error instanceof OutboundError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof OutboundError) return cause;
  const name = (error as Error).name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new OutboundError(whileReading ? `The answer did not arrive whole within ${timeoutMs} ms` : `No answer within ${timeoutMs} ms`);
  }
  const code = (error as { code?: string }).code;
  if (whileReading) return new OutboundError(`The answer was cut off: ${CONNECTION_FAILURES[code ?? ''] ?? 'the connection failed'}`);
  return new OutboundError(`Connection failed: ${CONNECTION_FAILURES[code ?? ''] ?? 'the connection could not be made'}`);
}

/**
 * An answer's body as it is read: undici's stream emits an `error` when it is destroyed before its
 * end (RequestAbortedError), even by its own reader, which would be unhandled (and end the process)
 * once nobody listens. The listener keeps it handled; a reader still gets every error as it reads.
 */
function handled(body: Dispatcher.ResponseData['body']): Dispatcher.ResponseData['body'] {
  body.on('error', () => {});
  return body;
}

/** `body` with the failures met while reading it as OutboundErrors. */
async function* readGuarded(body: AsyncIterable<Buffer>, timeoutMs: number): AsyncGenerator<Buffer> {
  try {
    yield* body;
  } catch (error) {
    throw failureOf(error, timeoutMs, true);
  }
}

export class OutboundClient {
  readonly #policy: OutboundPolicy;
  readonly #lookup: Resolve;
  readonly #agent: Agent;

  constructor(options: OutboundOptions) {
    this.#policy = { allowPrivate: options.allowPrivate, allowLinkLocal: options.allowLinkLocal ?? false };
    this.#lookup = options.lookup ?? (dnsLookup as Resolve);
    // Every connection resolves its host here, checked address by address: what a name resolved to
    // when its URL was accepted proves nothing about what it resolves to now.
    const guarded: LookupFunction = (hostname, opts, callback) => {
      const host = guardedHost(hostname);
      const refusal = nameRefusal(host, this.#policy);
      if (refusal) return callback(refusedName(host, refusal), '', 4);
      this.#lookup(host, { family: opts.family as number | undefined, hints: opts.hints, all: true }, (error, addresses) => {
        if (error) return callback(error, '', 4);
        for (const { address } of addresses) {
          const refused = addressRefusal(address, this.#policy);
          if (refused) return callback(refusedName(host, refused), '', 4);
        }
        if (addresses.length === 0) return callback(Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' }), '', 4);
        if (opts.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      });
    };
    this.#agent = new Agent({ connect: { lookup: guarded }, keepAliveTimeout: 10_000 });
  }

  /** Refuses an IP literal the guard refuses, before any connection. */
  #checkLiteral(url: URL): void {
    const host = guardedHost(url.hostname);
    if (!isIP(host)) return;
    const refusal = addressRefusal(host, this.#policy);
    if (refusal) throw refusedAddress(refusal);
  }

  /**
   * Refuses a URL that is not http(s) or whose host is (or resolves to) an address the guard
   * refuses; used when a user gives a URL, before it is stored. A host that does not resolve (yet)
   * is accepted: every call checks again when it connects.
   */
  async check(raw: string): Promise<void> {
    const url = parseUrl(raw);
    this.#checkLiteral(url);
    const host = guardedHost(url.hostname);
    if (isIP(host)) return;
    const named = nameRefusal(host, this.#policy);
    if (named) throw new OutboundError(`URL host ${host} is a ${named} address`);
    const addresses = await new Promise<LookupAddress[]>((resolve) => this.#lookup(host, { all: true }, (e, a) => resolve(e ? [] : a)));
    for (const { address } of addresses) {
      const refusal = addressRefusal(address, this.#policy);
      if (refusal) throw new OutboundError(`URL host ${host} resolves to a ${refusal} address`);
    }
  }

  /** POSTs `body`; resolves with any HTTP answer, rejects with OutboundError when none came. */
  post(raw: string, body: string, headers: Record<string, string>, options: PostOptions): Promise<OutboundResponse> {
    return this.#exchange('POST', raw, body, headers, options);
  }

  /** GETs a small answer (a provider's record of a call) as `post` does, its first `maxBytes` as text. */
  read(raw: string, headers: Record<string, string>, options: PostOptions): Promise<OutboundResponse> {
    return this.#exchange('GET', raw, undefined, headers, options);
  }

  async #exchange(method: 'POST' | 'GET', raw: string, body: string | undefined, headers: Record<string, string>, options: PostOptions): Promise<OutboundResponse> {
    const url = parseUrl(raw);
    this.#checkLiteral(url);
    const started = performance.now();
    const signals = [AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])];
    let answered = false;
    try {
      const res = await request(url, {
        method, body, dispatcher: this.#agent, signal: AbortSignal.any(signals),
        headers: { 'content-type': 'application/json', 'user-agent': 'RevenueDataService-Webhooks/1', ...headers },
      });
      answered = true;
      const text = await firstBytes(handled(res.body), options.maxBytes ?? 1024);
      return { status: res.statusCode, body: text, durationMs: Math.round(performance.now() - started) };
    } catch (error) {
      const failure = failureOf(error, options.timeoutMs, answered);
      failure.durationMs = Math.round(performance.now() - started);
      throw failure;
    }
  }

  /**
   * GETs a user-given URL (an import's CSV) under the same guard, without following redirects, and
   * answers its status and body as a stream (the caller bounds its size and discards what it does
   * not read); rejects with OutboundError when no answer came. `timeoutMs` bounds the whole download.
   */
  async get(raw: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<OutboundAnswer> {
    const url = parseUrl(raw);
    this.#checkLiteral(url);
    const signals = [AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])];
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, { method: 'GET', dispatcher: this.#agent, signal: AbortSignal.any(signals), headers: { 'user-agent': 'RevenueDataService-Imports/1' } });
    } catch (error) {
      throw failureOf(error, options.timeoutMs, false);
    }
    const body = handled(res.body);
    const type = res.headers['content-type'];
    const length = Number(res.headers['content-length']);
    return {
      status: res.statusCode,
      contentType: typeof type === 'string' ? type.split(';')[0].trim().toLowerCase() || undefined : undefined,
      contentLength: res.headers['content-length'] !== undefined && Number.isSafeInteger(length) ? length : undefined,
      body: readGuarded(body, options.timeoutMs),
      discard: () => void body.destroy(),
    };
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError('URL is not a valid absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OutboundError('URL must start with https:// or http://');
  if (url.username || url.password) throw new OutboundError('URL must not contain credentials');
  return url;
}

/** Reads up to `max` bytes of a body and discards the rest without waiting for it. */
async function firstBytes(body: Dispatcher.ResponseData['body'], max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= max) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}
