// One shape for responses from app.inject and from real sockets, and the checks every response of
// the security suite must pass: no 5xx for anything a client sends (503 only where a test takes a
// store away), errors as JSON with a `detail` and the documented `type` of their status, no
// internals, no token hashes, no x-powered-by.
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { TYPES_OF_STATUS } from '../../helpers/errors.ts';
import { tokenHashIn } from './secrets.ts';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

export const fromInject = (res: LightMyRequestResponse): Reply => ({ status: res.statusCode, headers: res.headers, body: res.body });

export async function fromFetch(res: Response): Promise<Reply> {
  const headers: Reply['headers'] = {};
  res.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { status: res.status, headers, body: await res.text() };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const json = (reply: Reply): any => JSON.parse(reply.body);

/** Traces of internals that no response body may carry. */
const INTERNALS = [
  /\n\s+at /, /\bat [\w.<>]+ \(/, /node:internal/, /node_modules/, /file:\/\//, /\.ts:\d+/, /\/src\//,
  /\b(TypeError|RangeError|ReferenceError|DatabaseError|SqliteError)\b/,
  /SQLITE_[A-Z]+/, /ERR_[A-Z_]{4,}/, /duplicate key value/, /violates [\w ]*constraint/, /relation "/, /pg_catalog/,
  /\bECONN[A-Z]+\b/, /Cannot read propert/, /is not a function/, /undefined is not/,
];

export function internalsIn(text: string): RegExp | undefined {
  return INTERNALS.find((pattern) => pattern.test(text));
}

/** A 503 by design: a provider the service does not have, or that is not configured (DESIGN.md 8), naming the setting. */
export const providerNotConfigured = (reply: Reply): boolean => reply.status === 503 && /"type":"provider_not_configured"/.test(reply.body);

export interface CheckOptions {
  /** Accept 503 (a test has taken a store away). */
  allowUnavailable?: boolean;
  /** Accept 500 (a test has broken the service itself). */
  allowServerError?: boolean;
}

/** The invariants of every response; `context` names the request in failure messages. */
export function checkReply(reply: Reply, context: string, options: CheckOptions = {}): void {
  const where = `${context} → ${reply.status} ${reply.body.slice(0, 300)}`;
  expect(reply.headers['x-powered-by'], `x-powered-by on ${where}`).toBeUndefined();
  if (reply.status >= 500) {
    const allowed = providerNotConfigured(reply) || (options.allowUnavailable && reply.status === 503) || (options.allowServerError && reply.status === 500);
    expect(allowed, `server error for ${where}`).toBe(true);
  }
  if (reply.status >= 400) {
    expect(String(reply.headers['content-type']), `error content type of ${where}`).toMatch(/^application\/json/);
    let body: unknown;
    expect(() => (body = JSON.parse(reply.body)), `error body is JSON: ${where}`).not.toThrow();
    const { detail, type, param } = body as { detail?: unknown; type?: unknown; param?: unknown };
    expect(TYPES_OF_STATUS[reply.status] ?? [], `error type ${String(type)} of ${where}`).toContain(type);
    if (param !== undefined) expect(typeof param === 'string' && param.length > 0, `param: ${where}`).toBe(true);
    if (Array.isArray(detail)) {
      expect(type, `a list of field errors is a validation_error: ${where}`).toBe('validation_error');
      expect(detail.length, `empty detail list: ${where}`).toBeGreaterThan(0);
      for (const item of detail) {
        expect(Array.isArray(item.loc) && typeof item.msg === 'string' && typeof item.type === 'string', `field error shape: ${where}`).toBe(true);
      }
    } else {
      expect(typeof detail === 'string' && detail.length > 0, `detail string: ${where}`).toBe(true);
    }
    expect(internalsIn(reply.body), `internals in ${where}`).toBeUndefined();
  }
  expect(tokenHashIn(reply.body), `token hash in ${where}`).toBeUndefined();
}
