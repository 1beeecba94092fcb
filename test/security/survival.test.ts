// A request can never end the process. One real service process (private networks allowed, short
// time limits, a small import limit) is sent every way the routes that fetch a URL or read a stream
// can go wrong: imports by URL and by multipart upload, and webhook deliveries through the outbound
// client, against a local source that answers 404, 500, redirects, resets mid-body, stalls, sends
// too much or the wrong content type. Each is answered with a clear 4xx (or recorded as a failed
// delivery), and afterwards the same process (its pid) still answers GET /healthz. So does a process
// in which an error escapes every handler.
import type { ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawConnection } from '../helpers/raw-http.ts';
import { multipartBody } from '../helpers/imports.ts';
import { checkReply, fromFetch, json } from './support/reply.ts';
import { afterProcessTests, freePort, request, startServer, startWorker, type ServerProcess } from './support/server-process.ts';
import { freshStore, orgIn, type FreshStore } from './support/stores.ts';

const stores: FreshStore[] = [];
afterProcessTests(import.meta.filename, stores);

const MAX_BYTES = 65_536;
const URL_TIMEOUT_MS = 1000;
const WEBHOOK_TIMEOUT_MS = 500;
const ENV = {
  IMPORT_MAX_BYTES: String(MAX_BYTES), IMPORT_URL_TIMEOUT_MS: String(URL_TIMEOUT_MS), WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
  REQUEST_TIMEOUT_MS: '1500', WEBHOOK_RETRY_SCHEDULE: '60', RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000',
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const CSV = 'Email,Title\n';
const rows = (bytes: number) => Array.from({ length: Math.ceil(bytes / 28) }, (_, i) => `row${String(i).padStart(8, '0')}@example.com,CTO\n`).join('');

/** A source that misbehaves as its path says, for GETs (imports) and POSTs (deliveries) alike. */
const hits = new Map<string, number>();
const stalled = new Set<ServerResponse>();
const BEHAVIOURS: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/ok': (_req, res) => res.writeHead(200, { 'content-type': 'text/csv' }).end(`${CSV}ok@example.com,CTO\n`),
  '/404': (_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('not here'),
  '/500': (_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('broken'),
  '/301': (_req, res) => res.writeHead(301, { location: '/ok' }).end(),
  '/302': (_req, res) => res.writeHead(302, { location: '/ok' }).end(),
  // Part of the body (less than the first KiB a delivery keeps), then the connection is reset.
  '/reset': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/csv', 'content-length': '40000' });
    res.write(`${CSV}${rows(300)}`);
    setTimeout(() => res.socket?.resetAndDestroy(), 50);
  },
  // The head and a line of the body, then nothing: the answer stalls past every time limit.
  '/slow': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/csv' });
    res.write(CSV);
    stalled.add(res);
  },
  // No answer at all.
  '/silent': (_req, res) => void stalled.add(res),
  // More than the import's limit, sent without a declared length.
  '/big': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/csv' });
    res.end(`${CSV}${rows(4 * MAX_BYTES)}`);
  },
  // A declared length over the limit: refused before a byte is read.
  '/big-declared': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(100 * MAX_BYTES) });
    res.write(CSV);
    stalled.add(res);
  },
  '/html': (_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html><body>Sign in</body></html>'),
  '/json': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"error":"no"}'),
};
const source = createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://source').pathname;
  hits.set(path, (hits.get(path) ?? 0) + 1);
  req.resume();
  req.on('end', () => (BEHAVIOURS[path] ?? BEHAVIOURS['/404'])(req, res));
});
let sourceBase: string;
let closedPort: number;
let server: ServerProcess;
let pid: number | undefined;
let token: string;
let listId: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
  sourceBase = `http://127.0.0.1:${(source.address() as { port: number }).port}`;
  closedPort = await freePort();
  const store = await freshStore('survival');
  stores.push(store);
  server = await startServer({ DATABASE_URL: store.url, ...ENV });
  pid = server.child.pid;
  const org = await orgIn(store.url, 'Survival');
  token = org.live_token;
  listId = json(await request(server.base, 'POST', '/v1/lists', { token, body: { name: 'Survivors', type: 'contacts' } })).data.id;
}, 60_000);

afterAll(async () => {
  for (const res of stalled) res.destroy();
  source.closeAllConnections();
  await new Promise((resolve) => source.close(resolve));
});

/** The process that was started is the one still running, and it answers. */
async function expectAlive(context: string): Promise<void> {
  expect(server.child.exitCode, `${context}: the process exited: ${server.output.slice(-5).join('\n')}`).toBeNull();
  expect(server.child.signalCode, `${context}: the process was killed`).toBeNull();
  expect(server.child.pid).toBe(pid);
  const health = await request(server.base, 'GET', '/healthz');
  expect(health.status, `${context}: GET /healthz`).toBe(200);
}

describe('imports by URL', () => {
  const cases: Array<[string, number, string | RegExp]> = [
    ['/404', 400, 'url: answered 404, not 200'],
    ['/500', 400, 'url: answered 500, not 200'],
    ['/301', 400, 'url: answered 301, not 200 (redirects are not followed)'],
    ['/302', 400, 'url: answered 302, not 200 (redirects are not followed)'],
    ['/reset', 400, /^url: The answer was cut off: the connection/],
    ['/slow', 400, `url: The answer did not arrive whole within ${URL_TIMEOUT_MS} ms`],
    ['/silent', 400, `url: No answer within ${URL_TIMEOUT_MS} ms`],
    ['/big', 413, `The file exceeds the ${MAX_BYTES} bytes limit of an import`],
    ['/big-declared', 413, `The file exceeds the ${MAX_BYTES} bytes limit of an import`],
    ['/html', 400, 'url: answered text/html, not a CSV (text/csv, text/plain or application/octet-stream)'],
    ['/json', 400, 'url: answered application/json, not a CSV (text/csv, text/plain or application/octet-stream)'],
  ];
  for (const [path, status, detail] of cases) {
    it(`${path}: ${status}, and the process lives on`, async () => {
      const reply = await request(server.base, 'POST', '/v1/imports', { token, body: { url: `${sourceBase}${path}`, object: 'contacts', list_id: listId } });
      expect(reply.status, reply.body).toBe(status);
      const expected = typeof detail === 'string' ? detail : expect.stringMatching(detail);
      expect(json(reply)).toEqual(status === 413 ? { type: 'payload_too_large', detail: expected } : { type: 'bad_request', detail: expected, param: 'url' });
      await expectAlive(path);
    });
  }

  it('a redirect is not followed, a refused connection is a 400, and nothing refused was kept', async () => {
    expect(hits.get('/ok') ?? 0, 'the redirects\' target').toBe(0);
    const refused = await request(server.base, 'POST', '/v1/imports', { token, body: { url: `http://127.0.0.1:${closedPort}/people.csv`, object: 'contacts', list_id: listId } });
    expect(refused.status).toBe(400);
    expect(json(refused)).toEqual({ type: 'bad_request', detail: 'url: Connection failed: the connection was refused', param: 'url' });
    const ok = await request(server.base, 'POST', '/v1/imports', { token, body: { url: `${sourceBase}/ok`, object: 'contacts', list_id: listId } });
    expect(ok.status, ok.body).toBe(201);
    const imports = json(await request(server.base, 'GET', '/v1/imports', { token })).data;
    expect(imports.map((i: { filename: string }) => i.filename)).toEqual([`${sourceBase}/ok`]);
    await expectAlive('refused connection');
  });
});

describe('imports by multipart upload', () => {
  const head = (contentType: string, extra: string) =>
    `POST /v1/imports HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: ${contentType}\r\n${extra}\r\n`;
  const upload = (csv: string) => multipartBody({ csv, fields: { object: 'contacts', list_id: listId } });

  it('a connection reset mid-body', async () => {
    const { payload, contentType } = upload(`${CSV}${rows(40_000)}`);
    const connection = await RawConnection.open(server.port);
    connection.write(head(contentType, `Content-Length: ${payload.length}\r\n`));
    connection.socket.write(payload.subarray(0, 20_000));
    await sleep(100);
    connection.socket.resetAndDestroy();
    await sleep(200);
    await expectAlive('upload reset mid-body');
  });

  it('a body that stalls past the time limit is 408', async () => {
    const { payload, contentType } = upload(`${CSV}${rows(40_000)}`);
    const connection = await RawConnection.open(server.port);
    connection.write(head(contentType, `Content-Length: ${payload.length}\r\n`));
    connection.socket.write(payload.subarray(0, 20_000));
    const reply = await connection.response(10_000);
    connection.close();
    expect(reply.status, reply.body).toBe(408);
    expect(reply.json()).toEqual({ type: 'request_timeout', detail: expect.stringMatching(/not received in time/) });
    await expectAlive('upload stalled');
  });

  it('a body over the limit is 413, declared or not', async () => {
    const { payload, contentType } = upload(`${CSV}${rows(4 * MAX_BYTES)}`);
    for (const framing of ['declared', 'chunked'] as const) {
      const connection = await RawConnection.open(server.port);
      if (framing === 'declared') {
        connection.write(head(contentType, `Content-Length: ${payload.length + 1024 * 1024}\r\n`));
      } else {
        connection.write(head(contentType, 'Transfer-Encoding: chunked\r\n'));
        for (let at = 0; at < payload.length && !connection.socket.destroyed; at += 16_384) {
          const piece = payload.subarray(at, at + 16_384);
          connection.socket.write(`${piece.length.toString(16)}\r\n`);
          connection.socket.write(piece);
          connection.socket.write('\r\n');
        }
        connection.write('0\r\n\r\n');
      }
      const reply = await connection.response(10_000);
      connection.close();
      expect(reply.status, `${framing}: ${reply.body}`).toBe(413);
      expect(reply.json()).toEqual({ type: 'payload_too_large', detail: `The file exceeds the ${MAX_BYTES} bytes limit of an import` });
      await expectAlive(`upload over the limit, ${framing}`);
    }
  });

  it('a body of the wrong content type is refused', async () => {
    const cases: Array<[string, string | Buffer, number]> = [
      ['text/csv', `${CSV}a@example.com,CTO\n`, 415],
      ['multipart/form-data', upload(CSV).payload, 400],
      ['application/octet-stream', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]), 415],
    ];
    for (const [contentType, payload, status] of cases) {
      const res = await fetch(`${server.base}/v1/imports`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body: payload, signal: AbortSignal.timeout(10_000) });
      const reply = await fromFetch(res);
      checkReply(reply, `upload as ${contentType}`);
      expect(reply.status, `${contentType}: ${reply.body}`).toBe(status);
      await expectAlive(`upload as ${contentType}`);
    }
    const imports = json(await request(server.base, 'GET', '/v1/imports', { token })).data;
    expect(imports.filter((i: { source: string }) => i.source === 'upload')).toEqual([]);
  });
});

describe('webhook deliveries through the outbound client', () => {
  it('records every misbehaving receiver as a failed attempt (or a kept first KiB), and the process lives on', async () => {
    const expected: Record<string, { status_code: number | null; error: string | RegExp | null }> = {
      '/404': { status_code: 404, error: 'The endpoint answered 404' },
      '/500': { status_code: 500, error: 'The endpoint answered 500' },
      '/302': { status_code: 302, error: 'The endpoint answered 302' },
      '/reset': { status_code: null, error: /^The answer was cut off: the connection/ },
      '/slow': { status_code: null, error: `The answer did not arrive whole within ${WEBHOOK_TIMEOUT_MS} ms` },
      '/silent': { status_code: null, error: `No answer within ${WEBHOOK_TIMEOUT_MS} ms` },
      '/big': { status_code: 200, error: null },
      '/html': { status_code: 200, error: null },
    };
    const endpoints = new Map<string, string>();
    for (const path of Object.keys(expected)) {
      const reply = await request(server.base, 'POST', '/v1/webhooks', { token, body: { url: `${sourceBase}${path}`, event_types: ['list.created'] } });
      expect(reply.status, reply.body).toBe(201);
      endpoints.set(path, json(reply).data.id);
    }
    const before = hits.get('/ok') ?? 0;
    await request(server.base, 'POST', '/v1/lists', { token, body: { name: 'Delivered badly', type: 'contacts' } });
    for (const [path, id] of endpoints) {
      const deadline = Date.now() + 15_000;
      let delivery: { status: string; attempts: Array<Record<string, unknown>> } | undefined;
      while (!delivery?.attempts.length) {
        expect(Date.now() < deadline, `${path}: no attempt recorded within 15 s`).toBe(true);
        await sleep(100);
        delivery = json(await request(server.base, 'GET', `/v1/webhooks/${id}/deliveries`, { token })).data[0];
      }
      const attempt = delivery.attempts[0];
      expect(attempt, path).toMatchObject(expected[path]);
      expect(delivery.status, path).toBe(expected[path].error === null ? 'succeeded' : 'pending');
      if (path === '/big') expect(String(attempt.response_body)).toHaveLength(1024);
      await expectAlive(`delivery to ${path}`);
    }
    expect(hits.get('/ok') ?? 0, 'a redirect is not followed').toBe(before);
  }, 30_000);
});

describe('an error that escapes every handler', () => {
  // A process with a trap: on SIGUSR2 it throws outside any request and rejects a promise nobody awaits.
  const trap = 'process.on("SIGUSR2",()=>{setImmediate(()=>{throw new Error("stray error")});Promise.reject(new Error("stray rejection"))})';
  const TRAPPED = { NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(trap)}` };

  /** Springs the trap and waits until both errors are logged (log lines are written in batches). */
  async function spring(child: ChildProcess, output: readonly string[]): Promise<string[]> {
    child.kill('SIGUSR2');
    const logged = () => output.filter((line) => line.includes('an error escaped its request or job'));
    for (let waited = 0; logged().length < 2 && waited < 5000; waited += 50) await sleep(50);
    await sleep(100);
    expect(child.exitCode, output.slice(-5).join('\n')).toBeNull();
    expect(child.signalCode).toBeNull();
    return logged().map((line) => JSON.parse(line).err.message).sort();
  }

  it('is logged, and the API process lives on', async () => {
    const store = await freshStore('stray');
    stores.push(store);
    const trapped = await startServer({ DATABASE_URL: store.url, ...TRAPPED });
    expect(await spring(trapped.child, trapped.output)).toEqual(['stray error', 'stray rejection']);
    expect((await request(trapped.base, 'GET', '/healthz')).status).toBe(200);
    await trapped.stop();
  }, 60_000);

  it('is logged, and the worker process lives on', async () => {
    const store = await freshStore('stray_worker');
    stores.push(store);
    const worker = await startWorker({ DATABASE_URL: store.url, ...TRAPPED });
    expect(await spring(worker.child, worker.output)).toEqual(['stray error', 'stray rejection']);
    await worker.stop();
  }, 60_000);
});
