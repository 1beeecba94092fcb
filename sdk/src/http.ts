// The one request function every method goes through: authentication, the Idempotency-Key of a
// write (made once, sent again on every retry so the service runs the write once), retries with
// exponential backoff and full jitter, and typed errors.
import { ConnectionError, errorOf, retryable } from './errors.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ClientOptions {
  apiKey: string;
  /** e.g. `https://api.example.com`; no trailing `/v1`. */
  baseUrl: string;
  /** Retries after the first attempt (network errors, 429, an Idempotency-Key in flight, 5xx but `provider_not_configured`). Default 2. */
  maxRetries?: number;
  /** A `fetch` to use instead of the global one (proxies, tests). */
  fetch?: typeof fetch;
}

/** Per-call options, the last argument of every method. */
export interface RequestOptions {
  /** The Idempotency-Key of a write; one is generated when absent. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export interface Request {
  method: HttpMethod;
  path: string;
  query?: object;
  body?: unknown;
  options?: RequestOptions;
}

const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;

export class Http {
  readonly #apiKey: string;
  readonly #baseUrl: string;
  readonly fetch: typeof fetch;
  readonly maxRetries: number;

  constructor(options: ClientOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required');
    this.#apiKey = options.apiKey;
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetch = options.fetch ?? globalThis.fetch;
    this.maxRetries = options.maxRetries ?? 2;
  }

  url(path: string, query?: object): string {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      for (const one of Array.isArray(value) ? value : [value]) search.append(name, String(one));
    }
    const qs = search.toString();
    return `${this.#baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  headers(extra?: Record<string, string>): Record<string, string> {
    return { authorization: `Bearer ${this.#apiKey}`, accept: 'application/json', ...extra };
  }

  /** Sends `request`, retrying what may be retried; resolves to the parsed success body. */
  async send<T>(request: Request): Promise<T> {
    const { method, path, query, body, options = {} } = request;
    const headers = this.headers(options.headers);
    if (method !== 'GET') headers['idempotency-key'] = options.idempotencyKey ?? crypto.randomUUID();
    // A FormData body goes as multipart/form-data: fetch sets the type with its boundary, and
    // serializes it afresh for every attempt.
    const form = body instanceof FormData;
    if (body !== undefined && !form) headers['content-type'] = 'application/json';
    const init: RequestInit = { method, headers, body: body === undefined || form ? (body as FormData | undefined) : JSON.stringify(body), signal: options.signal };
    const url = this.url(path, query);

    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.fetch(url, init);
      } catch (error) {
        if (options.signal?.aborted) throw error;
        if (attempt >= this.maxRetries) throw new ConnectionError(`${method} ${path}: ${(error as Error).message}`, { cause: error });
        await sleep(backoff(attempt), options.signal);
        continue;
      }
      const parsed = await parse(response);
      if (response.ok) return parsed as T;
      const retryAfter = retryAfterOf(response);
      const error = errorOf(response.status, parsed, response.headers.get('x-request-id') ?? undefined, retryAfter);
      if (attempt >= this.maxRetries || !retryable(error)) throw error;
      await sleep(retryAfter !== undefined ? retryAfter * 1000 : backoff(attempt), options.signal);
    }
  }
}

/** Full jitter: anywhere between 0 and the exponential ceiling of this attempt. */
export function backoff(attempt: number): number {
  return Math.random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt);
}

export function retryAfterOf(response: Response): number | undefined {
  const value = response.headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

async function parse(response: Response): Promise<unknown> {
  if (response.status === 204) return undefined;
  const text = await response.text();
  if (!(response.headers.get('content-type') ?? '').includes('json')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}
