// Rules the platform applies to every route, walked over the whole route table so that routes added
// later are held to them too: unknown query parameters are 422 naming them; a route that takes no
// body refuses one with 422 and changes nothing; a route whose body is an object takes none as `{}`;
// JSON bodies are UTF-8 and name a forbidden member; a malformed cursor of any length is 400
// bad_request; every request and response schema compiles.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatorCompiler } from '../../src/platform/validation.ts';
import { client, newOrg, testApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

let app: FastifyInstance;
let t: { live: ReturnType<typeof client>; test: ReturnType<typeof client> };
let liveToken: string;
const tokenOf = async () => liveToken;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
  // An agency organization, so that the agency routes reach validation like every other route.
  const org = await newOrg(app, 'Route rules', { agency: true });
  t = { live: client(app, org.live_token), test: client(app, org.test_token) };
  liveToken = org.live_token;
});
afterAll(() => app.close());

interface Operation {
  requestBody?: unknown;
  parameters?: Array<{ in: string; name: string; required?: boolean; schema?: { examples?: unknown[] } }>;
}

/** Every operation of the route table, with whether its OpenAPI operation documents a body. */
async function operations() {
  const doc = (await t.live.get('/v1/openapi.json')).json() as { paths: Record<string, Record<string, Operation>> };
  return app.routeTable
    .filter((route) => route.url.startsWith('/v1/') || route.url.startsWith('/auth/v1/'))
    .filter((route) => !route.public)
    .map((route) => {
      const documented = doc.paths[route.url.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()];
      expect(documented, `${route.method} ${route.url} is documented`).toBeDefined();
      // Ids that match no object: validation is answered before the handler looks anything up.
      // Required query parameters (the `q` of a search) get their documented example.
      const required = (documented?.parameters ?? []).filter((p) => p.in === 'query' && p.required);
      const query = required.map((p) => `${p.name}=${encodeURIComponent(String(p.schema?.examples?.[0] ?? 'x'))}&`).join('');
      return { ...route, path: route.url.replace(/:(\w+)/g, 'zz_000'), query, takesBody: documented?.requestBody !== undefined };
    });
}

const label = (r: { method: string; url: string }) => `${r.method} ${r.url}`;

describe('unknown query parameters', () => {
  it.each([
    ['/v1/usage?foo=1'],
    ['/v1/usage/transactions?foo=1'],
    ['/auth/v1/api-keys?limit=1'],
    ['/v1/lists?foo=1'],
  ])('refuses %s with 422 naming the parameter', async (url) => {
    const res = await t.live.get(url);
    expect(res.statusCode, res.body).toBe(422);
    const name = url.split('?')[1].split('=')[0];
    expect(res.json()).toEqual({ type: 'validation_error', detail: [{ loc: ['query', name], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }], param: name });
  });

  it('refuses them on a route with an id, which still answers without them', async () => {
    const list = (await t.live.post('/v1/lists', { name: 'Query rule', type: 'contacts' })).json().data;
    expect((await t.live.get(`/v1/lists/${list.id}?foo=1&bar=2`)).json().detail.map((e: { loc: string[] }) => e.loc)).toEqual([['query', 'foo'], ['query', 'bar']]);
    expect((await t.live.get(`/v1/lists/${list.id}`)).statusCode).toBe(200);
  });

  it('refuses them on every route of the table, and on the operational endpoints', async () => {
    for (const route of await operations()) {
      if (route.takesBody) continue; // a body's own errors are answered first
      const res = await t.live(route.method as 'GET', `${route.path}?${route.query}zz_unknown=1`);
      expect(res.statusCode, `${label(route)} ${res.body}`).toBe(422);
      expect(res.json().detail, label(route)).toContainEqual({ loc: ['query', 'zz_unknown'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
    }
    expect((await t.live.get('/healthz?zz_unknown=1')).statusCode).toBe(422);
    expect((await t.live.get('/healthz')).statusCode).toBe(200);
  });

  it('still refuses them without a credential with 401 first', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/usage?foo=1' });
    expect(res.statusCode).toBe(401);
  });
});

describe('routes that take no body', () => {
  it('refuses a launch with a member it does not take: 422 naming the field, still a draft, no credit spent', async () => {
    const list = (await t.test.post('/v1/lists', { name: 'Audience', type: 'contacts' })).json().data;
    expect((await t.test.post('/v1/contacts', { list_id: list.id, name: 'Ada' })).statusCode).toBe(201);
    const mailbox = (await t.test.post('/v1/mailboxes', { email: 'dry-run@sender.example' })).json().data;
    const steps = [{ channel: 'email', delay_days: 1, subject: 'Hello', body: 'Hi' }];
    const campaign = (await t.test.post('/v1/campaigns', { name: 'Dry run?', list_id: list.id, mailbox_ids: [mailbox.id], steps })).json().data;
    const balance = async () => (await t.test.get('/v1/usage')).json().data.balance as number;
    const before = await balance();

    const res = await t.test.post(`/v1/campaigns/${campaign.id}/launch`, { dry_run: true }, { 'idempotency-key': 'launch-with-body' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ type: 'validation_error', detail: [{ loc: ['body', 'dry_run'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }], param: 'dry_run' });
    expect((await t.test.get(`/v1/campaigns/${campaign.id}`)).json().data.status).toBe('draft');
    expect(await balance()).toBe(before);

    // Its own member is accepted (past the preflight: the mailbox's domain is not verified); the refused request's key was not spent.
    const launched = await t.test.post(`/v1/campaigns/${campaign.id}/launch`, { force: true }, { 'idempotency-key': 'launch-with-body' });
    expect(launched.statusCode, launched.body).toBe(200);
    expect(launched.json().data.status).toBe('active');
    // A body-less action: the pause (once the campaign's sequence is live).
    await waitFor(async () => (await t.test.get(`/v1/sequences/${launched.json().data.sequence_id}`)).json().data.status, (st) => st === 'live');
    const paused = await t.test('POST', `/v1/campaigns/${campaign.id}/pause`);
    expect(paused.statusCode, paused.body).toBe(200);
  });

  it('refuses a delete with a body and keeps the object', async () => {
    const list = (await t.live.post('/v1/lists', { name: 'Keep me', type: 'contacts' })).json().data;
    for (const body of [{ cascade: true }, [1], '"text"', 42, true]) {
      const res = await t.live('DELETE', `/v1/lists/${list.id}`, body, { 'content-type': 'application/json' });
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().detail[0].type).toBe('extra_forbidden');
    }
    expect((await t.live.get(`/v1/lists/${list.id}`)).statusCode).toBe(200);
    expect((await t.live('DELETE', `/v1/lists/${list.id}`, {})).statusCode).toBe(200);
  });

  it('refuses a body on every route of the table that documents none', async () => {
    const bodiless = (await operations()).filter((r) => !r.takesBody && r.method !== 'GET');
    expect(bodiless.map(label)).toEqual(expect.arrayContaining(['POST /v1/campaigns/:id/pause', 'POST /v1/campaigns/:id/resume', 'DELETE /v1/lists/:id']));
    for (const route of bodiless) {
      const res = await t.test(route.method as 'POST', route.path, { zz_extra: 1 });
      expect(res.statusCode, `${label(route)} ${res.body}`).toBe(422);
      expect(res.json().detail, label(route)).toEqual([{ loc: ['body', 'zz_extra'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]);
    }
  });
});

describe('routes whose body is an object', () => {
  it('take no body, or an empty one under a JSON Content-Type, as {}', async () => {
    const company = (await t.live.post('/v1/companies', { name: 'No body', city: 'Oslo' })).json().data;
    const json = { 'content-type': 'application/json' };
    for (const headers of [{}, json]) {
      const patch = await app.inject({ method: 'PATCH', url: `/v1/companies/${company.id}`, headers: { authorization: `Bearer ${(await tokenOf())}`, ...headers } });
      expect(patch.statusCode, patch.body).toBe(400);
      expect(patch.json()).toEqual({ type: 'bad_request', detail: 'No fields to update' });
      // A create names what it needs rather than that the body is missing.
      const create = await app.inject({ method: 'POST', url: '/v1/companies', headers: { authorization: `Bearer ${(await tokenOf())}`, ...headers } });
      expect(create.statusCode, create.body).toBe(400);
      expect(JSON.stringify(create.json())).toContain('name');
    }
    expect((await t.live.get(`/v1/companies/${company.id}`)).json().data).toEqual(company);
  });

  it('put a contact on a deal without a body, as the optional role allows', async () => {
    const list = (await t.live.post('/v1/lists', { name: 'People', type: 'contacts' })).json().data;
    const ada = (await t.live.post('/v1/contacts', { name: 'Ada', list_id: list.id })).json().data;
    const deal = (await t.live.post('/v1/deals', { name: 'Bodiless' })).json().data;
    const put = await t.live('PUT', `/v1/deals/${deal.id}/contacts/${ada.id}`);
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().data).toMatchObject({ deal_id: deal.id, contact_id: ada.id, role: null });
    // Without a body an unknown deal is still 404.
    expect((await t.live('PUT', `/v1/deals/dea_01KWA69J18KR7HB645AKG3BWK9/contacts/${ada.id}`)).json()).toEqual({ type: 'not_found', detail: 'Deal not found' });
  });
});

describe('JSON bodies', () => {
  const raw = async (payload: Buffer | string, contentType = 'application/json') =>
    app.inject({ method: 'POST', url: '/v1/companies', headers: { authorization: `Bearer ${await tokenOf()}`, 'content-type': contentType }, payload });

  it('refuses bytes that are not UTF-8 with 400 and writes nothing', async () => {
    const before = (await t.live.get('/v1/companies?limit=1')).json().pagination.total;
    for (const contentType of ['application/json', 'application/json; charset=latin1']) {
      const res = await raw(Buffer.from([...Buffer.from('{"name":"caf'), 0xe9, ...Buffer.from('"}')]), contentType);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ type: 'bad_request', detail: 'Request body is not valid UTF-8' });
    }
    expect((await t.live.get('/v1/companies?limit=1')).json().pagination.total).toBe(before);
    const ok = await raw(Buffer.from('{"name":"café ☕"}'));
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().data.name).toBe('café ☕');
  });

  it('names a forbidden member rather than calling the JSON invalid', async () => {
    for (const body of ['{"name":"x","__proto__":{}}', '{"name":"x","custom_fields":{"__proto__":{"a":1}}}', '{"name":"x","constructor":{"prototype":{}}}']) {
      const res = await raw(body);
      expect(res.statusCode, body).toBe(400);
      expect(res.json().detail, body).toMatch(/__proto__/);
    }
    expect((await raw('{"name":')).json()).toEqual({ type: 'bad_request', detail: 'Request body is not valid JSON' });
  });
});

describe('malformed cursors of any length', () => {
  it.each([1, 511, 512, 600, 5_000, 20_000])('answers a %i-character cursor 400 bad_request on every list', async (length) => {
    const cursor = 'A'.repeat(Math.floor(length / 2)) + '.' + 'B'.repeat(length - Math.floor(length / 2) - 1);
    for (const path of ['/v1/contacts', '/v1/lists', '/v1/events', '/v1/usage/transactions']) {
      const res = await t.live.get(`${path}?cursor=${cursor.slice(0, length)}`);
      expect(res.statusCode, `${path} ${res.body.slice(0, 200)}`).toBe(400);
      expect(res.json()).toEqual({ type: 'bad_request', detail: expect.any(String), param: 'cursor' });
    }
  });
});

describe('schemas compiled on first use', () => {
  // Validators and serializers compile when a request first needs them (validation.ts,
  // serializers.ts), so a schema that cannot compile would only fail the request that reaches it:
  // compile every one here instead.
  it('compiles every request and response schema of the route table', () => {
    const compileSerializer = SerializerSelector()({}, {});
    let validators = 0;
    let serializers = 0;
    for (const route of app.routeTable) {
      const { response, ...parts } = (route.schema ?? {}) as Record<string, unknown>;
      for (const [httpPart, schema] of Object.entries(parts)) {
        if (!['body', 'querystring', 'params', 'headers'].includes(httpPart)) continue;
        const validate = validatorCompiler({ schema, httpPart, method: route.method, url: route.url }) as (data: unknown) => boolean;
        expect(() => validate(undefined), `${label(route)} ${httpPart}`).not.toThrow();
        validators++;
      }
      for (const [status, schema] of Object.entries((response ?? {}) as Record<string, unknown>)) {
        expect(() => compileSerializer({ schema, method: route.method, url: route.url, httpStatus: status }), `${label(route)} ${status}`).not.toThrow();
        serializers++;
      }
    }
    expect(validators).toBeGreaterThan(200);
    expect(serializers).toBeGreaterThan(1000);
  });
});
