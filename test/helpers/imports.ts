// Helpers of the import and export tests: real multipart bodies, and waiting for a job to end.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export interface Upload {
  csv: string | Buffer;
  fields?: Record<string, string | object>;
  filename?: string;
}

/** A multipart/form-data body: the option fields (objects as JSON text), then the file part. */
export function multipartBody({ csv, fields = {}, filename = 'people.csv' }: Upload): { payload: Buffer; contentType: string } {
  const boundary = `----form${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${typeof value === 'string' ? value : JSON.stringify(value)}\r\n`));
  }
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/csv\r\n\r\n`));
  parts.push(Buffer.isBuffer(csv) ? csv : Buffer.from(csv));
  parts.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** POSTs an upload to /v1/imports with `token`. */
export function upload(app: FastifyInstance, token: string, given: Upload): Promise<LightMyRequestResponse> {
  const { payload, contentType } = multipartBody(given);
  return app.inject({ method: 'POST', url: '/v1/imports', payload, headers: { authorization: `Bearer ${token}`, 'content-type': contentType } });
}

const ENDED = new Set(['completed', 'completed_with_errors', 'failed', 'cancelled']);

/** Polls `GET <path>` until its `status` is one that ends the work. */
export async function waitFor(app: FastifyInstance, token: string, path: string, ended = ENDED, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${token}` } });
    const data = res.json().data as Record<string, unknown>;
    if (ENDED.has(String(data.status)) || ended.has(String(data.status))) return data;
    if (Date.now() > deadline) throw new Error(`${path} still ${String(data.status)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
