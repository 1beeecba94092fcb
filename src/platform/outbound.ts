// The one HTTP client for every call the service makes to a URL a user gave (webhooks, imports). It
// bounds each call (a total time limit, the first KiB of the answer kept, the rest discarded),
// never follows redirects (a 3xx is an answer like any other, so a redirect cannot lead a call to
// another host), and guards against SSRF: unless OUTBOUND_ALLOW_PRIVATE=true, it refuses loopback,
// private, link-local (cloud metadata), carrier-grade NAT, multicast and reserved addresses, both
// for IP literals and for every address a host name resolves to, checked at connect time, so a name
// that resolves to a public address at creation and a private one later is refused too.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 3],
] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) blocked.addSubnet(net, bits, 'ipv6');
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are checked against the IPv4 rules by BlockList itself.

/** True for an address outbound calls may not reach unless private networks are allowed. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) return blocked.check(address, 'ipv6');
  return true;
}

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

export interface PostOptions {
  timeoutMs: number;
  maxBytes?: number;
  signal?: AbortSignal;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

export class OutboundClient {
  readonly #allowPrivate: boolean;
  readonly #agent: Agent;

  constructor(options: { allowPrivate: boolean }) {
    this.#allowPrivate = options.allowPrivate;
    const guarded: LookupFunction = (hostname, opts, callback) => {
      dnsLookup(hostname, { ...opts, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error, '', 4);
        const refused = this.#allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
        if (refused) return callback(new OutboundError(`${hostname} resolves to a private or reserved address`), '', 4);
        if (opts.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      });
    };
    this.#agent = new Agent({ connect: { lookup: guarded }, keepAliveTimeout: 10_000 });
  }

  /**
   * Refuses a URL that is not http(s) or whose host is (or resolves to) an address the guard
   * refuses; used when a user gives a URL, before it is stored. A host that does not resolve (yet)
   * is accepted: every call checks again when it connects.
   */
  async check(raw: string): Promise<void> {
    const url = parseUrl(raw);
    if (this.#allowPrivate) return;
    const host = hostOf(url);
    if (isIP(host)) {
      if (isPrivateAddress(host)) throw new OutboundError('URL points to a private or reserved address');
      return;
    }
    const addresses = await new Promise<LookupAddress[]>((resolve) => dnsLookup(host, { all: true }, (e, a) => resolve(e ? [] : a)));
    if (addresses.some((a) => isPrivateAddress(a.address))) throw new OutboundError(`URL host ${host} resolves to a private or reserved address`);
  }

  /** POSTs `body`; resolves with any HTTP answer, rejects with OutboundError when none came. */
  async post(raw: string, body: string, headers: Record<string, string>, options: PostOptions): Promise<OutboundResponse> {
    const url = parseUrl(raw);
    const host = hostOf(url);
    if (!this.#allowPrivate && isIP(host) && isPrivateAddress(host)) throw new OutboundError('URL points to a private or reserved address');
    const started = performance.now();
    const signals = [AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])];
    try {
      const res = await request(url, {
        method: 'POST', body, dispatcher: this.#agent, signal: AbortSignal.any(signals),
        headers: { 'content-type': 'application/json', 'user-agent': 'RevenueDataService-Webhooks/1', ...headers },
      });
      const text = await firstBytes(res.body, options.maxBytes ?? 1024);
      return { status: res.statusCode, body: text, durationMs: Math.round(performance.now() - started) };
    } catch (error) {
      const durationMs = Math.round(performance.now() - started);
      const cause = (error as { cause?: unknown }).cause;
      const name = (error as Error).name;
      const failure = error instanceof OutboundError ? error
        : cause instanceof OutboundError ? cause
          : name === 'TimeoutError' || name === 'AbortError' ? new OutboundError(`No answer within ${options.timeoutMs} ms`)
            : new OutboundError(`Connection failed: ${(error as { code?: string }).code ?? (error as Error).message}`);
      failure.durationMs = durationMs;
      throw failure;
    }
  }

  /**
   * GETs a user-given URL (an import's CSV) under the same guard, without following redirects, and
   * answers its status and body as a stream (the caller bounds its size); rejects with OutboundError
   * when no answer came. `timeoutMs` bounds the whole download.
   */
  async get(raw: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<{ status: number; body: AsyncIterable<Buffer> & { destroy(): void } }> {
    const url = parseUrl(raw);
    const host = hostOf(url);
    if (!this.#allowPrivate && isIP(host) && isPrivateAddress(host)) throw new OutboundError('URL points to a private or reserved address');
    const signals = [AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])];
    try {
      const res = await request(url, { method: 'GET', dispatcher: this.#agent, signal: AbortSignal.any(signals), headers: { 'user-agent': 'RevenueDataService-Imports/1' } });
      return { status: res.statusCode, body: res.body };
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      const name = (error as Error).name;
      if (error instanceof OutboundError) throw error;
      if (cause instanceof OutboundError) throw cause;
      if (name === 'TimeoutError' || name === 'AbortError') throw new OutboundError(`No answer within ${options.timeoutMs} ms`);
      throw new OutboundError(`Connection failed: ${(error as { code?: string }).code ?? (error as Error).message}`);
    }
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
async function firstBytes(body: AsyncIterable<Buffer> & { destroy(): void }, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= max) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}
