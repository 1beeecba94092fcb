// The envelope, the error shapes and the request limits that every route shares (DESIGN.md section 4).
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, tenant, testApp } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp();
});
afterAll(() => app.close());

/** Sends a raw body with the given Content-Type. */
async function raw(token: string, payload: string | Buffer, contentType: string, url = '/v1/lists'): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, payload });
}

const expectFieldErrors = (res: LightMyRequestResponse) => {
  expect(res.statusCode).toBe(422);
  const { detail } = res.json();
  expect(Array.isArray(detail)).toBe(true);
  expect(detail.length).toBeGreaterThan(0);
  for (const e of detail) {
    expect(Object.keys(e).sort()).toEqual(['loc', 'msg', 'type']);
    expect(Array.isArray(e.loc)).toBe(true);
    expect(e.loc.every((part: unknown) => typeof part === 'string')).toBe(true);
    expect(['body', 'query', 'path']).toContain(e.loc[0]);
    expect(typeof e.msg).toBe('string');
    expect(typeof e.type).toBe('string');
  }
  return detail as Array<{ loc: string[]; msg: string; type: string }>;
};

describe('envelope', () => {
  it('wraps one object in data', async () => {
    const t = await tenant(app, { sandbox: false });
    const res = await t.live.post('/v1/lists', { name: 'L', type: 'contacts' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.json())).toEqual(['data']);
    const got = await t.live.get(`/v1/lists/${res.json().data.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(res.json());
  });

  it('answers lists in the list form with the pagination object', async () => {
    const t = await tenant(app, { sandbox: false });
    await t.live.post('/v1/lists', { name: 'L', type: 'contacts' });
    const body = (await t.live.get('/v1/lists')).json();
    expect(Object.keys(body).sort()).toEqual(['data', 'next_cursor', 'object', 'pagination']);
    expect(body.object).toBe('list');
    expect(body.data).toHaveLength(1);
    expect(body.next_cursor).toBeNull();
    expect(body.pagination).toEqual({ page: 1, limit: 50, total: 1, has_next: false, next_cursor: null });
  });
});

describe('validation errors', () => {
  it('answers wrong types with 422 and the field list', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = (await t.live.post('/v1/lists', { name: 'L', type: 'contacts' })).json().data.id;
    const detail = expectFieldErrors(await t.live.post('/v1/contacts', { list_id: list, work_email: 42, tags: 'vip', title: ['a'] }));
    expect(detail.map((e) => e.loc.join('.')).sort()).toEqual(['body.tags', 'body.title', 'body.work_email']);
    expect(detail.find((e) => e.loc[1] === 'tags')!.type).toBe('array_type');
    expectFieldErrors(await t.live.post('/v1/lists', { name: 7, type: 'contacts' }));
  });

  it('answers a malformed e-mail address with 422', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = (await t.live.post('/v1/lists', { name: 'L', type: 'contacts' })).json().data.id;
    for (const email of ['not-an-email', 'a@', '@b.co', 'a b@c.co']) {
      const detail = expectFieldErrors(await t.live.post('/v1/contacts', { list_id: list, work_email: email }));
      expect(detail).toEqual([{ loc: ['body', 'work_email'], msg: 'value is not a valid email address', type: 'value_error.email' }]);
    }
  });

  it('refuses fields the client may not set', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = (await t.live.post('/v1/lists', { name: 'L', type: 'contacts' })).json().data.id;
    for (const field of ['id', 'org_id', 'mode', 'created_at', 'updated_at', 'suppressed', 'unknown_field']) {
      const detail = expectFieldErrors(await t.live.post('/v1/contacts', { list_id: list, [field]: field === 'created_at' ? 1 : 'x' }));
      expect(detail).toEqual([{ loc: ['body', field], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]);
    }
    const detail = expectFieldErrors(await t.live.post('/v1/lists', { name: 'L', type: 'contacts', org_id: 'org_x', member_count: 5 }));
    expect(detail.map((e) => e.loc[1]).sort()).toEqual(['member_count', 'org_id']);
    expect((await t.live.get('/v1/contacts')).json().pagination.total).toBe(0);
  });

  it('reports query errors under query', async () => {
    const t = await tenant(app, { sandbox: false });
    const detail = expectFieldErrors(await t.live.get('/v1/contacts?created_after=yesterday'));
    expect(detail[0].loc).toEqual(['query', 'created_after']);
    expect(expectFieldErrors(await t.live.get('/v1/contacts?colour=red'))[0]).toMatchObject({ loc: ['query', 'colour'], type: 'extra_forbidden' });
  });

  it('never answers a hostile string with a server error', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = (await t.live.post('/v1/lists', { name: 'L', type: 'contacts' })).json().data.id;
    expectFieldErrors(await t.live.post('/v1/contacts', { list_id: list, title: 'a\u0000b' }));
    expectFieldErrors(await t.live.post('/v1/contacts', { list_id: list, title: 'x'.repeat(5000) }));
    for (const url of [`/v1/contacts/${'%00'.repeat(3)}`, '/v1/contacts?title=%00', `/v1/lists/${'x'.repeat(300)}`, '/v1/lists/%E0%A4%A', '/v1/contacts?limit=1e400']) {
      const res = await t.live.get(url);
      expect(res.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, url).toBeLessThan(500);
      expect(res.json().detail, url).toBeDefined();
    }
  });
});

describe('malformed requests', () => {
  it('answers unknown routes with a JSON 404', async () => {
    const t = await tenant(app, { sandbox: false });
    for (const [method, url] of [['GET', '/v1/nothing-here'], ['POST', '/v1/contacts/con_x/launch'], ['GET', '/'], ['PUT', '/v1/contacts']] as const) {
      const res = await t.live(method, url);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toEqual({ type: 'not_found', detail: 'Not Found' });
    }
    expect((await client(app, undefined).get('/v2/contacts')).json()).toEqual({ type: 'not_found', detail: 'Not Found' });
  });

  it('answers malformed JSON with 400', async () => {
    const t = await tenant(app, { sandbox: false });
    for (const body of ['{"name":', '{name: "x"}', 'undefined', '{"a":1}}']) {
      const res = await raw(t.live_token, body, 'application/json');
      expect(res.statusCode, body).toBe(400);
      expect(typeof res.json().detail).toBe('string');
    }
  });

  it('answers a body nested deeper than 64 levels with 400, whatever route it is sent to', async () => {
    const t = await tenant(app, { sandbox: false });
    const nested = (depth: number) => {
      let value = '1';
      for (let i = 0; i < depth; i++) value = `{"a":${value}}`;
      return value;
    };
    for (const [url, fields] of [['/v1/tasks', '"title":"Deep"'], ['/v1/contacts', '"name":"Deep"'], ['/v1/lists', '"name":"Deep","type":"leads"']]) {
      for (const depth of [65, 5000]) {
        const res = await raw(t.live_token, `{${fields},"custom_fields":${nested(depth)}}`, 'application/json', url);
        expect(res.statusCode, `${url} at ${depth}`).toBe(400);
        expect(res.json()).toEqual({ type: 'bad_request', detail: 'Request body nests objects and arrays deeper than 64 levels' });
      }
    }
    // 64 levels in all are read (and refused for what they say); brackets inside strings do not count.
    expect((await raw(t.live_token, `{"title":"Deep","custom_fields":${nested(63)}}`, 'application/json', '/v1/tasks')).statusCode).toBe(422);
    const brackets = await raw(t.live_token, JSON.stringify({ title: `${'['.repeat(200)}{"]`, description: '}'.repeat(200) }), 'application/json', '/v1/tasks');
    expect(brackets.statusCode).toBe(201);
  });

  it('answers a JSON value that is not an object with 422', async () => {
    const t = await tenant(app, { sandbox: false });
    for (const body of ['[1,2]', 'null', '"text"', '42']) expectFieldErrors(await raw(t.live_token, body, 'application/json'));
  });

  it('answers other media types with 415', async () => {
    const t = await tenant(app, { sandbox: false });
    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await raw(t.live_token, 'name=x&type=contacts', type);
      expect(res.statusCode, type).toBe(415);
      expect(typeof res.json().detail).toBe('string');
    }
    expect((await t.live.get('/v1/lists')).json().pagination.total).toBe(0);
  });

  it('accepts JSON with a charset', async () => {
    const t = await tenant(app, { sandbox: false });
    const res = await raw(t.live_token, JSON.stringify({ name: 'L', type: 'leads' }), 'application/json; charset=utf-8');
    expect(res.statusCode).toBe(201);
  });

  it('answers bodies over 1 MiB with 413', async () => {
    const t = await tenant(app, { sandbox: false });
    const big = JSON.stringify({ name: 'L', type: 'contacts', description: 'x'.repeat(1024 * 1024) });
    const res = await raw(t.live_token, big, 'application/json');
    expect(res.statusCode).toBe(413);
    expect(typeof res.json().detail).toBe('string');
    // Just under the limit is parsed (and then refused by the field's own bound).
    const near = JSON.stringify({ name: 'L', type: 'contacts', description: 'x'.repeat(1024 * 1024 - 100) });
    expect((await raw(t.live_token, near, 'application/json')).statusCode).toBe(422);
  });
});

describe('headers', () => {
  it('sends no x-powered-by and a request id on every response', async () => {
    const t = await tenant(app, { sandbox: false });
    const responses = [
      await t.live.get('/v1/lists'),
      await t.live.post('/v1/lists', { name: 'L', type: 'bogus' }),
      await t.live.get('/v1/lists/lst_missing'),
      await client(app, undefined).get('/v1/lists'),
      await client(app, undefined).get('/v1/nothing-here'),
      await client(app, undefined).get('/healthz'),
      await raw(t.live_token, '{', 'application/json'),
    ];
    const ids = new Set<string>();
    for (const res of responses) {
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      ids.add(String(res.headers['x-request-id']));
    }
    expect(ids.size).toBe(responses.length);
  });

  it('echoes a safe incoming X-Request-Id and replaces an unsafe one', async () => {
    const t = await tenant(app, { sandbox: false });
    const given = 'req-2026.01:abc_DEF';
    expect((await t.live.get('/v1/lists', { 'x-request-id': given })).headers['x-request-id']).toBe(given);
    expect((await client(app, undefined).get('/v1/nowhere', { 'x-request-id': given })).headers['x-request-id']).toBe(given);
    for (const unsafe of ['has spaces in it', 'x'.repeat(65), '<script>', 'a"b']) {
      const echoed = (await t.live.get('/v1/lists', { 'x-request-id': unsafe })).headers['x-request-id'];
      expect(echoed).not.toBe(unsafe);
      expect(echoed).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
