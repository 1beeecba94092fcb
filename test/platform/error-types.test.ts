// Every kind of error the service answers, caused through real requests (app.inject, and a real
// socket for what only a socket can send), each asserted as a whole body: the `detail` of the
// specification's shape, the documented `type` of docs/api.md, and `param` (or `scope`) where one
// field (or one scope) is at fault. A client branches on `type`, never on the text of `detail`.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { databaseUrl, DELIVERY_ENV, tenant, testApp } from '../helpers/app.ts';
import { RawConnection, rawRequest, type RawReply } from '../helpers/raw-http.ts';

const UNLIMITED = { RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_SECOND: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' };
const TIMEOUT_MS = 600;

let app: FastifyInstance;
let port: number;
let t: Awaited<ReturnType<typeof tenant>>;
let listId: string;

beforeAll(async () => {
  app = await testApp({ env: { ...UNLIMITED, REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
  t = await tenant(app, { sandbox: false });
  listId = (await t.live.post('/v1/lists', { name: 'People', type: 'contacts' })).json().data.id;
});
afterAll(() => app.close());

/** The whole body of an answer of `status`, from inject or a raw socket. */
const bodyOf = (res: { statusCode?: number; status?: number; body: string }, status: number) => {
  expect(res.statusCode ?? res.status, res.body).toBe(status);
  return JSON.parse(res.body) as Record<string, unknown>;
};

describe('errors of requests that reach a route', () => {
  it('validation: 422 validation_error, with param when one field is at fault', async () => {
    const one = await t.live.post('/v1/contacts', { list_id: listId, work_email: 'not-an-address' });
    expect(bodyOf(one, 422)).toEqual({
      type: 'validation_error',
      detail: [{ loc: ['body', 'work_email'], msg: 'value is not a valid email address', type: 'value_error.email' }],
      param: 'work_email',
    });
    // Errors of two fields name none.
    const twoFields = bodyOf(await t.live.post('/v1/lists', { name: 7, type: 'contacts', zz: 1 }), 422);
    expect(twoFields.type).toBe('validation_error');
    expect(twoFields).not.toHaveProperty('param');
    const query = await t.live.get('/v1/contacts?limit=abc');
    expect(bodyOf(query, 422)).toEqual({ type: 'validation_error', detail: [{ loc: ['query', 'limit'], msg: 'Input should be a valid integer', type: 'integer_type' }], param: 'limit' });
  });

  it('a missing required field or a value not allowed: 400 bad_request naming its param', async () => {
    expect(bodyOf(await t.live.post('/v1/contacts', { name: 'Ada' }), 400)).toEqual({ type: 'bad_request', detail: 'list_id is required when creating contacts', param: 'list_id' });
    expect(bodyOf(await t.live.post('/v1/lists', { name: 'x', type: 'nope' }), 400)).toEqual({ type: 'bad_request', detail: 'Invalid list type', param: 'type' });
    expect(bodyOf(await t.live.get('/v1/contacts?cursor=nope'), 400)).toEqual({ type: 'bad_request', detail: 'Malformed cursor: pass back a next_cursor exactly as returned', param: 'cursor' });
    // A 400 about no one field has no param.
    expect(bodyOf(await t.live.patch(`/v1/lists/${listId}`, {}), 400)).toEqual({ type: 'bad_request', detail: 'No fields to update' });
  });

  it('a body that is not JSON, too large, or of another media type: bad_request, payload_too_large, unsupported_media_type', async () => {
    const post = (payload: string, contentType = 'application/json') => app.inject({ method: 'POST', url: '/v1/lists', payload, headers: { authorization: `Bearer ${t.live_token}`, 'content-type': contentType } });
    expect(bodyOf(await post('{"name":'), 400)).toEqual({ type: 'bad_request', detail: 'Request body is not valid JSON' });
    expect(bodyOf(await post(JSON.stringify({ name: 'x'.repeat(1_100_000) })), 413)).toEqual({ type: 'payload_too_large', detail: 'Request body exceeds the 1 MiB limit' });
    expect(bodyOf(await post('hello', 'text/plain'), 415)).toEqual({ type: 'unsupported_media_type', detail: 'Content-Type must be application/json' });
  });

  it('authentication: 401 authentication_failed for a missing, unknown or JWT credential', async () => {
    const anonymous = await app.inject({ method: 'GET', url: '/v1/contacts' });
    expect(bodyOf(anonymous, 401)).toEqual({ type: 'authentication_failed', detail: 'missing Authorization header' });
    const unknown = await app.inject({ method: 'GET', url: '/v1/contacts', headers: { authorization: 'Bearer svc_live_0000000000000000000000000000' } });
    expect(bodyOf(unknown, 401)).toEqual({ type: 'authentication_failed', detail: 'API key not associated with an organization' });
  });

  it('permissions: 403 permission_denied, with the missing scope, and the hint for X-Org-Id without an agency key', async () => {
    const narrow = (await t.live.post('/auth/v1/api-keys', { name: 'Reader', scopes: ['contacts:read'] })).json().data.api_key_token as string;
    const refused = await app.inject({ method: 'POST', url: '/v1/lists', payload: { name: 'x', type: 'contacts' }, headers: { authorization: `Bearer ${narrow}` } });
    expect(bodyOf(refused, 403)).toEqual({ type: 'permission_denied', detail: 'API key lacks scope lists:write', scope: 'lists:write' });
    const other = await tenant(app, { sandbox: false });
    const mismatch = await t.live.get('/v1/contacts', { 'x-org-id': other.org_id });
    expect(bodyOf(mismatch, 403)).toEqual({ type: 'permission_denied', detail: 'X-Org-Id does not match the organization of the API key (acting for another organization needs an agency key)' });
  });

  it('not_found for a missing record, an unknown route and an unknown public quote link', async () => {
    expect(bodyOf(await t.live.get('/v1/contacts/con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'), 404)).toEqual({ type: 'not_found', detail: 'Contact not found' });
    expect(bodyOf(await t.live.get('/v1/no-such-thing'), 404)).toEqual({ type: 'not_found', detail: 'Not Found' });
    expect(bodyOf(await app.inject({ method: 'GET', url: '/nowhere' }), 404)).toEqual({ type: 'not_found', detail: 'Not Found' });
    expect(bodyOf(await app.inject({ method: 'GET', url: '/v1/public/quotes/no-such-token' }), 404)).toEqual({ type: 'not_found', detail: 'Quote not found' });
  });

  it('a path segment over 100 characters: 414 uri_too_long', async () => {
    expect(bodyOf(await t.live.get(`/v1/contacts/${'x'.repeat(101)}`), 414)).toEqual({ type: 'uri_too_long', detail: 'A path segment of the URL is too long (at most 100 characters)' });
  });

  it('conflicts: 409 conflict with the state, and idempotency_conflict for a key in flight (409) or reused (422)', async () => {
    await t.live.post('/v1/products', { name: 'Seat', unit_price: 1, sku: 'SEAT' });
    const taken = await t.live.post('/v1/products', { name: 'Other', unit_price: 1, sku: 'SEAT' });
    expect(bodyOf(taken, 409)).toEqual({ type: 'conflict', detail: expect.stringMatching(/^Sku SEAT already belongs to product prd_/) });

    const key = { 'idempotency-key': `error-types-${Date.now()}` };
    expect((await t.live.post('/v1/lists', { name: 'Once', type: 'contacts' }, key)).statusCode).toBe(201);
    const reused = await t.live.post('/v1/lists', { name: 'Another', type: 'contacts' }, key);
    expect(bodyOf(reused, 422)).toEqual({ type: 'idempotency_conflict', detail: 'Idempotency-Key was already used with a different request; use a new key for a new request' });
    // The same key while its first request still runs (its stored claim set back to running).
    await app.services.database.db.updateTable('idempotency_keys').set({ status: null, body: null, locked_at: Math.floor(Date.now() / 1000) })
      .where('org_id', '=', t.org_id).where('key', '=', key['idempotency-key']).execute();
    const inFlight = await t.live.post('/v1/lists', { name: 'Once', type: 'contacts' }, key);
    expect(bodyOf(inFlight, 409)).toEqual({ type: 'idempotency_conflict', detail: 'A request with this Idempotency-Key is still being processed; retry later' });
  });

  it('each record of an assert batch fails with the type and param a single assert would answer', async () => {
    const res = await t.live('PUT', '/v1/contacts/assert/batch', { records: [{ list_id: listId, work_email: 'bad' }, { work_email: 'b@example.com' }] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.results.map((r: { error: unknown }) => r.error)).toEqual([
      { status: 422, type: 'validation_error', detail: [expect.objectContaining({ loc: ['body', 'work_email'] })], param: 'work_email' },
      { status: 400, type: 'bad_request', detail: 'list_id is required when creating contacts', param: 'list_id' },
    ]);
  });
});

describe('errors of the budget: insufficient_credits, rate_limited', () => {
  it('402 insufficient_credits when the balance cannot pay', async () => {
    const poor = await testApp({ env: { ...UNLIMITED, DEFAULT_CREDITS: '0' } });
    try {
      const p = await tenant(poor, { sandbox: false });
      const list = (await p.live.post('/v1/lists', { name: 'Audience', type: 'contacts' })).json().data.id as string;
      expect((await p.live.post('/v1/contacts', { list_id: list, name: 'Ada' })).statusCode).toBe(201);
      const mailbox = (await p.live.post('/v1/mailboxes', { email: 'ada@sender.example' })).json().data.id as string;
      const campaign = (await p.live.post('/v1/campaigns', { name: 'Launch', list_id: list, mailbox_ids: [mailbox], steps: [{ channel: 'email', subject: 'Hi' }] })).json().data.id as string;
      const res = await p.live.post(`/v1/campaigns/${campaign}/launch`, { force: true });
      expect(bodyOf(res, 402)).toEqual({ type: 'insufficient_credits', detail: expect.stringMatching(/^Not enough credits: /) });
    } finally {
      await poor.close();
    }
  });

  it('429 rate_limited on the data API and on the public quote routes', async () => {
    const limited = await testApp({ env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_PER_MINUTE: '1000', PUBLIC_RATE_LIMIT_PER_SECOND: '1', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000' } });
    try {
      const l = await tenant(limited, { sandbox: false });
      await l.live.get('/v1/contacts');
      expect(bodyOf(await l.live.get('/v1/contacts'), 429)).toEqual({ type: 'rate_limited', detail: expect.stringMatching(/^Rate limit exceeded: at most 1 requests per second .* per organization; retry after \d+ s$/) });
      await limited.inject({ method: 'GET', url: '/v1/public/quotes/no-such-token' });
      const page = await limited.inject({ method: 'GET', url: '/v1/public/quotes/no-such-token' });
      expect(bodyOf(page, 429)).toEqual({ type: 'rate_limited', detail: expect.stringMatching(/per client address; retry after \d+ s$/) });
    } finally {
      await limited.close();
    }
  });
});

describe('errors answered before any route runs, over a real socket', () => {
  const head = () => `Host: localhost\r\nAuthorization: Bearer ${t.live_token}\r\n`;
  const whole = (reply: RawReply, status: number) => bodyOf({ status: reply.status, body: reply.body }, status);

  it('a malformed request line, an unsupported version, a missing Host: 400 bad_request', async () => {
    expect(whole(await rawRequest(port, 'GET /v1/contacts HTTP/1.1 extra\r\nHost: localhost\r\n\r\n'), 400))
      .toEqual({ type: 'bad_request', detail: 'Malformed HTTP request: the request line, a header or the body framing is invalid' });
    expect(whole(await rawRequest(port, 'GET /v1/contacts HTTP/2.0\r\nHost: localhost\r\n\r\n'), 400))
      .toEqual({ type: 'bad_request', detail: 'Unsupported HTTP version: send HTTP/1.1 or HTTP/1.0' });
    expect(whole(await rawRequest(port, `GET /v1/contacts HTTP/1.1\r\nAuthorization: Bearer ${t.live_token}\r\n\r\n`), 400))
      .toEqual({ type: 'bad_request', detail: 'Host header is required' });
  });

  it('headers over 64 KiB: 431 header_fields_too_large; an unmet Expect: 417 expectation_failed', async () => {
    expect(whole(await rawRequest(port, `GET /v1/contacts HTTP/1.1\r\n${head()}X-Filler: ${'x'.repeat(70_000)}\r\n\r\n`), 431))
      .toEqual({ type: 'header_fields_too_large', detail: 'The request line and headers exceed 64 KiB' });
    expect(whole(await rawRequest(port, `GET /v1/contacts HTTP/1.1\r\n${head()}Expect: the-impossible\r\n\r\n`), 417))
      .toEqual({ type: 'expectation_failed', detail: 'Expectation Failed: the only expectation supported is `Expect: 100-continue`' });
  });

  it('a body that stalls: 408 request_timeout', async () => {
    const connection = await RawConnection.open(port);
    connection.write(`POST /v1/lists HTTP/1.1\r\n${head()}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name": `);
    expect(whole(await connection.response(), 408))
      .toEqual({ type: 'request_timeout', detail: 'The request was not received in time; send the whole request, body included, within the time limit' });
    connection.close();
  });
});

describe('a fault of the service itself', () => {
  it('500 internal_error, with nothing of the fault in the body', async () => {
    const config = loadConfig({ DATABASE_URL: databaseUrl(), DATABASE_POOL_SIZE: '2', ...DELIVERY_ENV });
    const faulty = await buildApp({ config, logger: pino({ level: 'silent' }) });
    faulty.get('/faulty', { config: { public: true } }, async () => {
      throw new Error('a fault with internals: /src/secret.ts:12');
    });
    await faulty.ready();
    try {
      expect(bodyOf(await faulty.inject({ method: 'GET', url: '/faulty' }), 500)).toEqual({ type: 'internal_error', detail: 'Internal Server Error' });
    } finally {
      await faulty.close();
    }
  });
});
