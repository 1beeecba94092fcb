// The HTTP layer over real sockets: answers made before any route runs are in the error shape, with
// the caller's rate-limit headers where the caller is known; stalled and trickled bodies are cut off
// with 408 within REQUEST_TIMEOUT_MS, while live event streams are not; a hang-up mid-body is a
// client abort, not an outage.
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { requestDeadline } from '../../src/platform/transport.ts';
import { capturedLogs, tenant, testApp } from '../helpers/app.ts';
import { TYPE_OF_STATUS } from '../helpers/errors.ts';
import { RawConnection, rawRequest, type RawReply } from '../helpers/raw-http.ts';

const TIMEOUT_MS = 600;
let app: FastifyInstance;
let port: number;
let token: string;
let org: Awaited<ReturnType<typeof tenant>>;

beforeAll(async () => {
  // No workers: on PostgreSQL they would run other files' queued deliveries, whose warnings would
  // mix with the log lines these tests read.
  app = await testApp({ env: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS), WORKERS: 'off' } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
  org = await tenant(app);
  token = org.test_token;
});
afterAll(() => app.close());

const auth = () => `Host: localhost\r\nAuthorization: Bearer ${token}\r\n`;
const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\n${auth()}${extra}\r\n`;

function expectErrorShape(reply: RawReply, status: number, detail: RegExp) {
  expect(reply.status, reply.body).toBe(status);
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(reply.json()).sort()).toEqual(['detail', 'type']);
  expect(reply.json().type).toBe(TYPE_OF_STATUS[status]);
  expect(reply.json().detail).toMatch(detail);
  expect(reply.headers['x-request-id']).toMatch(/^[\w-]{8,}$/);
}

function expectRateLimitHeaders(reply: RawReply) {
  for (const name of ['x-ratelimit-limit-second', 'x-ratelimit-limit-minute', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect(reply.headers[name], name).toMatch(/^\d+$/);
  }
}

describe('answers made before a route runs', () => {
  it('answers an over-long path segment 414 with the rate-limit headers of the caller', async () => {
    const reply = await rawRequest(port, get(`/v1/lists/lst_${'a'.repeat(97)}`));
    expectErrorShape(reply, 414, /too long/);
    expectRateLimitHeaders(reply);
  });

  it('lets a 20,000-character query value reach its route, and answers 431 beyond 64 KiB of headers', async () => {
    const passes = await rawRequest(port, get(`/v1/contacts?title=${'q'.repeat(20_000)}`));
    expect(passes.status).toBe(422);
    expect(passes.json().detail).toEqual([expect.objectContaining({ loc: ['query', 'title'], type: 'string_too_long' })]);

    const longQuery = await rawRequest(port, get(`/v1/contacts?title=${'q'.repeat(70_000)}`));
    expectErrorShape(longQuery, 431, /exceed 64 KiB/);
    expect(await longQuery.closedAfterMs).toBeLessThan(2000);

    const manyHeaders = Array.from({ length: 200 }, (_, i) => `X-Extra-${i}: ${'v'.repeat(400)}\r\n`).join('');
    expectErrorShape(await rawRequest(port, get('/v1/contacts', manyHeaders)), 431, /exceed 64 KiB/);
    // 200 ordinary headers are within the limit.
    const ordinary = Array.from({ length: 200 }, (_, i) => `X-Extra-${i}: ${'v'.repeat(40)}\r\n`).join('');
    expect((await rawRequest(port, get('/v1/contacts?limit=1', ordinary))).status).toBe(200);
  });

  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n'],
    ['an invalid HTTP version', 'GET /v1/lists HTTP/9.x\r\nHost: localhost\r\n\r\n'],
    ['a header without a colon', `GET /v1/lists HTTP/1.1\r\n${'Host: localhost\r\n'}Not a header\r\n\r\n`],
    ['a space in a header name', 'GET /v1/lists HTTP/1.1\r\nHost: localhost\r\nBad Name: x\r\n\r\n'],
    ['conflicting Content-Length and Transfer-Encoding', 'POST /v1/lists HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}'],
    ['a bad chunk size', `POST /v1/lists HTTP/1.1\r\n${'Host: localhost\r\n'}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`],
  ])('answers %s 400 in the error shape and closes the connection', async (_name, text) => {
    const reply = await rawRequest(port, text);
    expectErrorShape(reply, 400, /Malformed HTTP request/);
    expect(await reply.closedAfterMs).toBeLessThan(2000);
  });

  it('answers requests pipelined ahead of a malformed one, each in order, before refusing it and closing', async () => {
    const connection = await RawConnection.open(port);
    connection.write(`${get('/v1/lists?limit=1')}${get('/v1/contacts?limit=1')}GARBAGE\r\n\r\n`);
    expect(await connection.closed).toBeLessThan(5000);
    const statuses = [...connection.text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    expect(statuses, connection.text).toEqual([200, 200, 400]);
    expect(connection.text).toMatch(/"data":\[[\s\S]*"data":\[[\s\S]*Malformed HTTP request/);
  });

  it('answers an HTTP/2.0 or HTTP/0.9 request line 400, not as HTTP/1.1', async () => {
    for (const version of ['HTTP/2.0', 'HTTP/0.9']) {
      const reply = await rawRequest(port, `GET /v1/lists ${version}\r\n${auth()}\r\n`);
      expectErrorShape(reply, 400, /Unsupported HTTP version/);
      expectRateLimitHeaders(reply);
      expect(reply.headers.connection).toBe('close');
    }
  });

  it('answers a bad percent-encoding in the path 400 with the rate-limit headers', async () => {
    const reply = await rawRequest(port, get('/v1/lists/%E0%A4%A'));
    expectErrorShape(reply, 400, /Malformed URL/);
    expectRateLimitHeaders(reply);
  });

  it('answers a bad percent-encoding in the query 400 rather than filtering on the text as sent', async () => {
    for (const query of ['title=%zz', 'title=%ff%fe', 'title=caf%C3', 'title=100%']) {
      const reply = await rawRequest(port, get(`/v1/contacts?${query}`));
      expectErrorShape(reply, 400, /Malformed query string/);
      expectRateLimitHeaders(reply);
    }
    expect((await rawRequest(port, get('/v1/contacts?title=caf%C3%A9%20%2B'))).status).toBe(200);
  });

  it('answers an Expect other than 100-continue 417, and honours 100-continue', async () => {
    const refused = await rawRequest(port, get('/v1/lists', 'Expect: something-else\r\n'));
    expectErrorShape(refused, 417, /100-continue/);
    expectRateLimitHeaders(refused);

    const body = JSON.stringify({ name: 'Expect list', type: 'contacts' });
    const connection = await RawConnection.open(port);
    connection.write(`POST /v1/lists HTTP/1.1\r\n${auth()}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`);
    await connection.until((data) => data.startsWith('HTTP/1.1 100 Continue'));
    connection.write(body);
    await connection.until((data) => data.includes('HTTP/1.1 201'));
    connection.close();
  });

  it('answers an HTTP/1.1 request without Host 400 with the rate-limit headers; HTTP/1.0 needs none', async () => {
    const reply = await rawRequest(port, `GET /v1/lists HTTP/1.1\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    expectErrorShape(reply, 400, /Host header is required/);
    expectRateLimitHeaders(reply);
    expect((await rawRequest(port, `GET /v1/lists?limit=1 HTTP/1.0\r\nAuthorization: Bearer ${token}\r\n\r\n`)).status).toBe(200);
  });

  it('answers two Host lines, a Host that is no host, or two Authorization lines 400 before the route runs', async () => {
    const total = async () => (await org.test.get('/v1/lists?limit=1')).json().pagination.total as number;
    const before = await total();
    const body = '{"name":"Twice","type":"contacts"}';
    const post = (headers: string) => `POST /v1/lists HTTP/1.1\r\n${headers}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const cases: Array<[string, RegExp]> = [
      [`Host: a\r\nHost: b\r\nAuthorization: Bearer ${token}\r\n`, /Only one Host header/],
      [`Host: a b\r\nAuthorization: Bearer ${token}\r\n`, /Host header is not a valid host/],
      [`Host: localhost\r\nAuthorization: Bearer ${token}\r\nAuthorization: Bearer svc_test_nope\r\n`, /Only one Authorization header/],
      [`Host: localhost\r\nAuthorization: Bearer svc_test_nope\r\nAuthorization: Bearer ${token}\r\n`, /Only one Authorization header/],
    ];
    for (const [headers, detail] of cases) {
      const reply = await rawRequest(port, post(headers));
      expectErrorShape(reply, 400, detail);
    }
    expect(await total()).toBe(before);
    for (const host of ['localhost:8080', '127.0.0.1', '[::1]:3000', 'api.example.com']) {
      expect((await rawRequest(port, `GET /v1/lists?limit=1 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\n\r\n`)).status, host).toBe(200);
    }
  });

  it('answers a CONNECT request 400 in the error shape and closes, and survives a client that resets at once', async () => {
    for (const text of ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n${auth()}\r\n`]) {
      const reply = await rawRequest(port, text);
      expect(reply.status, reply.body).toBe(400);
      expect(reply.json()).toEqual({ type: 'bad_request', detail: 'The CONNECT method is not supported: this service is not a proxy' });
      expect(reply.headers['content-type']).toMatch(/^application\/json/);
      expect(reply.headers['x-request-id']).toMatch(/^[\w-]{8,}$/);
      expect(reply.headers.connection).toBe('close');
      expect(await reply.closedAfterMs).toBeLessThan(2000);
    }
    for (let i = 0; i < 20; i++) {
      const connection = await RawConnection.open(port);
      connection.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      connection.socket.resetAndDestroy();
    }
    expect((await rawRequest(port, get('/v1/lists?limit=1'))).status).toBe(200);
  });

  it('answers unknown routes 404 with the rate-limit headers, charged to the client address without a key', async () => {
    const known = await rawRequest(port, get('/v1/no-such-thing'));
    expectErrorShape(known, 404, /^Not Found$/);
    expectRateLimitHeaders(known);
    const anonymous = await rawRequest(port, 'GET /v1/no-such-thing HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expectErrorShape(anonymous, 404, /^Not Found$/);
    expectRateLimitHeaders(anonymous);
  });
});

describe('request deadline', () => {
  const stalledCreate = () => `POST /v1/lists HTTP/1.1\r\n${auth()}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n`;
  const listTotal = async () => (await org.test.get('/v1/lists?limit=1')).json().pagination.total as number;

  it('answers a body that stalls 408 and closes within REQUEST_TIMEOUT_MS, writing nothing', async () => {
    const before = await listTotal();
    const connection = await RawConnection.open(port);
    connection.write(`${stalledCreate()}{"name": "stalled", `);
    const reply = await connection.response();
    expectErrorShape(reply, 408, /not received in time/);
    expectRateLimitHeaders(reply);
    expect(reply.headers.connection).toBe('close');
    expect(reply.ms).toBeGreaterThanOrEqual(TIMEOUT_MS / 2);
    expect(await connection.closed).toBeLessThanOrEqual(TIMEOUT_MS + 300);
    expect(await listTotal()).toBe(before);
  });

  it('cuts off many stalled bodies at once, each within the deadline and answered once', async () => {
    // More than the per-second limit: those over it are answered 429 at once, before their body; the
    // deadline then closes their connection without a second answer.
    const connections = await Promise.all(Array.from({ length: 100 }, () => RawConnection.open(port)));
    for (const connection of connections) connection.write(`${stalledCreate()}{"name": `);
    const replies = await Promise.all(connections.map((connection) => connection.response()));
    const statuses = replies.map((reply) => reply.status);
    expect(statuses.filter((status) => status === 408).length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 408 && status !== 429)).toEqual([]);
    const closedAfter = await Promise.all(connections.map((connection) => connection.closed));
    expect(Math.max(...closedAfter)).toBeLessThanOrEqual(TIMEOUT_MS + 500);
    for (const connection of connections) expect(connection.text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });

  it('cuts off a body that trickles a byte at a time', async () => {
    const connection = await RawConnection.open(port);
    connection.write(stalledCreate());
    void connection.trickle(`{"name": "${'x'.repeat(500)}`, 20);
    const reply = await connection.response();
    expectErrorShape(reply, 408, /not received in time/);
    expect(await connection.closed).toBeLessThanOrEqual(TIMEOUT_MS + 300);
  });

  it('cuts off headers that trickle, and a connection that sends nothing', async () => {
    const trickled = await RawConnection.open(port);
    void trickled.trickle(get('/v1/lists'), 30);
    expectErrorShape(await trickled.response(), 408, /not received in time/);
    expect(await trickled.closed).toBeLessThanOrEqual(TIMEOUT_MS + 300);

    const silent = await RawConnection.open(port);
    expectErrorShape(await silent.response(), 408, /not received in time/);
    expect(await silent.closed).toBeLessThanOrEqual(TIMEOUT_MS + 300);
  });

  it('does not cut a live event stream that outlasts the deadline', async () => {
    const connection = await RawConnection.open(port);
    connection.write(get('/v1/events', 'Accept: text/event-stream\r\n'));
    await connection.until((data) => data.startsWith('HTTP/1.1 200'));
    await sleep(TIMEOUT_MS * 3);
    const created = await org.test.post('/v1/lists', { name: 'After the deadline', type: 'contacts' });
    expect(created.statusCode).toBe(201);
    await connection.until((data) => data.includes(created.json().data.id));
    expect(connection.socket.destroyed).toBe(false);
    connection.close();
  });

  it.each(['closes', 'resets'])('logs a client that %s its connection mid-body as a client abort at info, not as an outage', async (how) => {
    const from = capturedLogs.length;
    const connection = await RawConnection.open(port);
    connection.write(`${stalledCreate()}{"name": "hung up`);
    await sleep(100);
    if (how === 'resets') connection.socket.resetAndDestroy();
    else connection.close();
    await sleep(200);
    const lines = capturedLogs.slice(from).join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(lines.some((line) => line.level === 30 && /client abort/.test(line.msg)), JSON.stringify(lines)).toBe(true);
    expect(lines.filter((line) => line.level >= 40)).toEqual([]);
  });

  it('defaults to 30 seconds, cut at the latest at the deadline', async () => {
    expect(loadConfig({}).requestTimeoutMs).toBe(30_000);
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: 'soon' })).toThrow(/REQUEST_TIMEOUT_MS/);
    const { checkEveryMs, timeoutMs } = requestDeadline(30_000);
    expect(timeoutMs + checkEveryMs).toBe(30_000);
    const defaults = await testApp();
    try {
      expect(defaults.server.requestTimeout).toBe(timeoutMs);
      expect(defaults.server.headersTimeout).toBe(timeoutMs);
    } finally {
      await defaults.close();
    }
  });
});

describe('closing', () => {
  it('is not held by a connection that has sent nothing, and lets a request in flight finish', async () => {
    // The default deadline (30 s): only the close can end the silent connection in time.
    const own = await testApp();
    await own.listen({ port: 0, host: '127.0.0.1' });
    const ownPort = (own.server.address() as AddressInfo).port;
    const t = await tenant(own);
    const silent = await RawConnection.open(ownPort);
    const busy = await RawConnection.open(ownPort);
    const body = JSON.stringify({ name: 'Closing', type: 'contacts' });
    busy.write(`POST /v1/lists HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${t.live_token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
    await sleep(100);
    const started = Date.now();
    const closed = own.close();
    await sleep(100);
    busy.write(body.slice(5));
    const reply = await busy.response();
    await closed;
    expect(reply.status, reply.body).toBe(201);
    expect(Date.now() - started).toBeLessThan(5000);
    await silent.closed;
  }, 15_000);
});
