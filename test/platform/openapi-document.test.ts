// The OpenAPI document against the service that serves it. A request set is generated from the
// document itself (for every operation a valid request built from its examples and schemas, with
// real ids of the sandbox data, and hostile variants of it), sent through the app, and every answer
// is checked against the document's own schemas: an undocumented status, media type, header or
// shape fails, naming the operation, the request and the first validation error. Then a client's
// types are generated from the live document (openapi-typescript) and a small client using the
// named types is type-checked.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EVENT_TYPE_NAMES } from '../../src/platform/event-types.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { client, newOrg, testApp } from '../helpers/app.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

interface Operation {
  method: string;
  /** OpenAPI form: /v1/contacts/{id} */
  path: string;
  label: string;
  op: Json;
  writes: boolean;
  public: boolean;
}

interface Sent {
  kind: string;
  method: string;
  url: string;
  headers?: Record<string, string>;
  payload?: string | object;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const WRITES = new Set(['post', 'put', 'patch', 'delete']);
const ID = /^([a-z]{2,4})_[0-9A-Z]{26}$/;
// The limits are out of the way of the replay; 429 is checked on an app of its own.
const UNLIMITED = { RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_SECOND: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' };

let app: FastifyInstance;
let doc: Json;
let ajv: Ajv2020;
let operations: Operation[];

beforeAll(async () => {
  app = await testApp({ env: UNLIMITED });
  doc = (await client(app, undefined).get('/v1/openapi.json')).json();
  ajv = new Ajv2020({ strict: false, allErrors: false, validateSchema: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc, 'openapi.json');
  operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item).filter(([method]) => ['get', 'put', 'post', 'patch', 'delete'].includes(method)).map(([method, op]) => ({
      method: method.toUpperCase(), path, label: `${op.operationId} (${method.toUpperCase()} ${path})`, op,
      writes: WRITES.has(method), public: Array.isArray(op.security) && op.security.length === 0,
    })));
});
afterAll(() => app.close());

/** Follows a local `$ref`. */
function resolve(schema: Json | undefined): Json | undefined {
  let s = schema;
  while (s && typeof s.$ref === 'string') s = s.$ref.slice(2).split('/').reduce((node: Json, key: string) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  return s;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const validators = new Map<string, ValidateFunction>();

/** The document's validator of one response body, compiled against the document itself. */
function validatorOf(o: Operation, status: string, media: string): ValidateFunction {
  const ref = `openapi.json#/${pointer('paths', o.path, o.method.toLowerCase(), 'responses', status, 'content', media, 'schema')}`;
  let validate = validators.get(ref);
  if (!validate) validators.set(ref, (validate = ajv.compile({ $ref: ref })));
  return validate;
}

/** Why `answer` is not what the document says `o` answers, or undefined when it is. */
function mismatch(o: Operation, answer: Answer): string | undefined {
  const responses = o.op.responses as Record<string, Json>;
  const status = String(answer.status);
  const key = [status, `${status[0]}XX`, 'default'].find((k) => responses[k]);
  if (!key) return `status ${status} is not documented (documented: ${Object.keys(responses).join(', ')}); body ${answer.body.slice(0, 200)}`;
  const response = resolve(responses[key])!;
  const declared = Object.keys(response.headers ?? {}).map((h) => h.toLowerCase());
  for (const header of ['idempotent-replayed', 'retry-after', 'x-ratelimit-remaining', 'x-request-id']) {
    if (answer.headers[header] !== undefined && !declared.includes(header)) return `status ${status}: header ${header} is not documented`;
  }
  const media = String(answer.headers['content-type'] ?? '').split(';')[0].trim();
  if (!media) return answer.body === '' ? undefined : `status ${status}: a body without a Content-Type`;
  if (!response.content?.[media]) return `status ${status}: media type ${media} is not documented (documented: ${Object.keys(response.content ?? {}).join(', ') || 'none'})`;
  if (media !== 'application/json') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return `status ${status}: the body is not JSON: ${answer.body.slice(0, 200)}`;
  }
  const validate = validatorOf(o, key, media);
  if (validate(body)) return undefined;
  const e = validate.errors![0];
  return `status ${status}: ${e.instancePath || '(body)'} ${e.message} (${e.schemaPath}); body ${answer.body.slice(0, 300)}`;
}

// --- Building requests from the document --------------------------------------------------------

/** Real values by id prefix (`con` → contact ids) and by field name, read from the API's answers. */
const pool = new Map<string, string[]>();
const remember = (key: string, value: string) => {
  const values = pool.get(key) ?? [];
  if (!values.includes(value)) pool.set(key, [...values, value]);
};

function collect(value: unknown, field?: string): void {
  if (Array.isArray(value)) value.forEach((v) => collect(v, field));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) collect(v, k);
  else if (typeof value === 'string') {
    const id = ID.exec(value);
    if (id) remember(id[1], value);
    if (field === 'public_token') remember(field, value);
  }
}

/** A real value like `example` (an id of the same kind), else the example itself. */
function realLike(example: unknown, name?: string): unknown {
  if (typeof example !== 'string') return example;
  const id = ID.exec(example);
  const known = id ? pool.get(id[1]) : name === 'token' ? pool.get('public_token') : undefined;
  return known?.[0] ?? example;
}

/** A value valid for `schema` as far as the document tells: its example (made real), else the smallest fitting one. */
function valueOf(given: Json | undefined, name?: string, depth = 0): unknown {
  const schema = resolve(given);
  if (!schema || depth > 6) return undefined;
  if (schema.examples?.length) return realLike(schema.examples[0], name);
  if (schema.example !== undefined) return realLike(schema.example, name);
  if (schema.enum) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) return valueOf(branches.find((b) => resolve(b)?.type !== 'null') ?? branches[0], name, depth + 1);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s: Json) => valueOf(s, name, depth + 1)));
  switch (schema.type) {
    case 'object': {
      const out: Json = {};
      const properties = (schema.properties ?? {}) as Record<string, Json>;
      // The required members, and one optional member with an example (an update needs one).
      const optional = Object.keys(properties).find((p) => !(schema.required ?? []).includes(p) && resolve(properties[p])?.examples);
      for (const p of [...(schema.required ?? []), ...(optional ? [optional] : [])]) out[p] = valueOf(properties[p], p, depth + 1);
      return out;
    }
    case 'array': return (schema.minItems ?? 0) > 0 ? [valueOf(schema.items, name, depth + 1)] : [];
    case 'integer': case 'number': return schema.minimum ?? 1;
    case 'boolean': return true;
    case 'string': return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    default: return undefined;
  }
}

const parameters = (o: Operation, place: string) => ((o.op.parameters ?? []) as Json[]).map((p) => resolve(p)!).filter((p) => p.in === place);

function urlOf(o: Operation, params: (name: string, example: unknown) => string, query = ''): string {
  const path = o.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const p = parameters(o, 'path').find((x) => x.name === name);
    return encodeURIComponent(params(name, p?.example ?? p?.schema?.examples?.[0]));
  });
  const required = parameters(o, 'query').filter((p) => p.required).map((p) => `${p.name}=${encodeURIComponent(String(valueOf(p.schema, p.name) ?? 'a'))}`);
  const all = [...required, ...(query ? [query] : [])].join('&');
  return all ? `${path}?${all}` : path;
}

const realUrl = (o: Operation, query?: string) => urlOf(o, (name, example) => String(realLike(example, name) ?? 'x'), query);
const bodyOf = (o: Operation): Json | undefined => {
  const schema = o.op.requestBody?.content?.['application/json']?.schema;
  return schema ? valueOf(schema) as Json : undefined;
};

/** The valid request of `o`, and its hostile variants. */
function requestsOf(o: Operation): Sent[] {
  const url = realUrl(o);
  const body = bodyOf(o);
  const valid: Sent = { kind: 'valid', method: o.method, url, ...(body !== undefined ? { payload: body } : {}) };
  const out: Sent[] = [
    valid,
    { ...valid, kind: 'missing auth', headers: { authorization: '' } },
    { ...valid, kind: 'unknown key', headers: { authorization: 'Bearer svc_live_0000000000000000000000000000' } },
    { ...valid, kind: 'JWT', headers: { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln' } },
    { ...valid, kind: 'unknown query parameter', url: realUrl(o, 'zz_unknown=1') },
    { ...valid, kind: 'malformed X-Org-Id', headers: { 'x-org-id': 'not-an-org' } },
  ];
  if (o.path.includes('{')) {
    out.push({ ...valid, kind: 'absent id', url: urlOf(o, (_, example) => (typeof example === 'string' && ID.test(example) ? example : 'zz_00000000000000000000000000')) });
    out.push({ ...valid, kind: 'id that names nothing', url: urlOf(o, () => 'nope') });
    out.push({ ...valid, kind: 'over-long path segment', url: urlOf(o, () => 'x'.repeat(101)) });
  }
  for (const p of parameters(o, 'query')) {
    const schema = resolve(p.schema)!;
    const branch = resolve((schema.anyOf as Json[] | undefined)?.find((b) => resolve(b)?.type !== 'null')) ?? schema;
    const hostile = branch.type === 'integer' || branch.type === 'number' ? 'abc' : branch.enum ? 'zz_not_one' : 'x'.repeat(20_001);
    out.push({ ...valid, kind: `bad query ${p.name}`, url: realUrl(o, `${encodeURIComponent(p.name)}=${encodeURIComponent(hostile)}`) });
  }
  if (o.writes) {
    out.push(
      { ...valid, kind: 'text/plain body', payload: 'hello', headers: { 'content-type': 'text/plain' } },
      { ...valid, kind: 'XML body', payload: '<a/>', headers: { 'content-type': 'application/xml' } },
      { ...valid, kind: 'body over 1 MiB', payload: JSON.stringify({ name: 'x'.repeat(1_100_000) }), headers: { 'content-type': 'application/json' } },
      { ...valid, kind: 'malformed JSON', payload: '{"name":', headers: { 'content-type': 'application/json' } },
      { ...valid, kind: 'array body', payload: '[]', headers: { 'content-type': 'application/json' } },
      { ...valid, kind: 'unknown field', payload: { ...(body ?? {}), zz_unknown: 1 } },
      { ...valid, kind: 'malformed Idempotency-Key', headers: { 'idempotency-key': 'bad key with spaces' } },
    );
  }
  return out;
}

// --- Sending and checking ------------------------------------------------------------------------

const failures: string[] = [];
const seen = new Map<string, Set<number>>();
/** The key of the organization the replay wrote in. */
let replayToken: string | undefined;

async function send(o: Operation, sent: Sent, token: string | undefined): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...sent.headers };
  if (headers.authorization === '') delete headers.authorization;
  const answer = await app.inject({ method: sent.method as 'GET', url: sent.url, headers, ...(sent.payload !== undefined ? { payload: sent.payload } : {}) });
  judge(o, sent.kind, answer.statusCode, answer.headers as Answer['headers'], answer.body);
  if (sent.kind === 'valid' && answer.statusCode < 300 && answer.headers['content-type']?.startsWith('application/json')) collect(answer.json());
  return answer;
}

function judge(o: Operation, kind: string, status: number, headers: Answer['headers'], body: string): void {
  const problem = mismatch(o, { status, headers, body });
  if (problem) failures.push(`${o.label} [${kind}]: ${problem}`);
  seen.set(o.label, (seen.get(o.label) ?? new Set()).add(status));
}

/** GETs first (they fill the pool of real ids), then the writes, deletions and the sandbox reset last. */
const phase = (o: Operation) => (o.method === 'GET' ? 0 : o.path === '/v1/sandbox/reset' ? 3 : o.method === 'DELETE' ? 2 : 1);

describe('every answer of the service is the document\'s', () => {
  beforeEach(() => {
    failures.length = 0;
  });

  it('replays a request set generated from the document through the app and validates every answer', async () => {
    const org = await newOrg(app);
    const token = (replayToken = org.test_token);
    // A key to revoke, so the replay never revokes the one it uses.
    const spare = await client(app, token).post('/auth/v1/api-keys', { name: 'Spare', mode: 'test' });
    expect(spare.statusCode).toBe(201);
    // And a key that may only read usage: the other operations answer 403.
    const narrow = (await client(app, token).post('/auth/v1/api-keys', { name: 'Narrow', mode: 'test', scopes: ['usage:read'] })).json().data.api_key_token as string;

    for (const o of operations.filter((x) => x.method === 'GET')) await send(o, { kind: 'valid', method: o.method, url: realUrl(o) }, token);
    pool.set('key', [spare.json().data.id]);

    let sent = 0;
    for (const o of [...operations].sort((a, b) => phase(a) - phase(b))) {
      for (const request of requestsOf(o)) {
        await send(o, request, token);
        sent++;
      }
      await send(o, { kind: 'narrow key', method: o.method, url: realUrl(o), payload: bodyOf(o) }, narrow);
      sent++;
      if (!o.writes || o.public) continue;
      // A retry with the same Idempotency-Key replays the first answer, marked as such.
      const key = `replay-${sent}`;
      const request = { method: o.method, url: realUrl(o), payload: bodyOf(o), headers: { 'idempotency-key': key } };
      const first = await send(o, { kind: 'with Idempotency-Key', ...request }, token);
      const replayed = await send(o, { kind: 'replayed', ...request }, token);
      if (first.statusCode < 300 && replayed.headers['idempotent-replayed'] !== 'true') failures.push(`${o.label} [replayed]: no Idempotent-Replayed header (${replayed.statusCode})`);
      if (replayed.headers['idempotent-replayed'] !== 'true') continue;
      // The same key while its first request still runs: 409 (the stored claim is set back to running).
      await app.services.database.db.updateTable('idempotency_keys').set({ status: null, body: null, locked_at: Math.floor(Date.now() / 1000) })
        .where('org_id', '=', org.org_id).where('mode', '=', 'test').where('key', '=', key).execute();
      const inFlight = await send(o, { kind: 'Idempotency-Key in flight', ...request }, token);
      if (inFlight.statusCode !== 409) failures.push(`${o.label} [Idempotency-Key in flight]: ${inFlight.statusCode} instead of 409`);
    }
    sent += operations.filter((o) => o.method === 'GET').length;

    expect(failures, failures.slice(0, 40).join('\n')).toEqual([]);
    // The valid requests reached the handlers: most operations answered a success.
    const succeeded = operations.filter((o) => [...seen.get(o.label) ?? []].some((s) => s < 300));
    expect(succeeded.length, `operations that answered a success: ${succeeded.length} of ${operations.length}`).toBeGreaterThan(operations.length * 0.6);
    expect(sent).toBeGreaterThan(operations.length * 10);
  }, 300_000);

  it('answers over a real socket as documented: headers over the limit (431), an unmet Expect (417), the event stream', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const org = await newOrg(app);
    const sample = ['listContacts', 'createContact', 'getUsage', 'deleteDeal', 'getQuotePage'].map((id) => operations.find((o) => o.op.operationId === id)!);
    for (const o of sample) {
      const url = o.path.replace(/\{\w+\}/g, 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B');
      const head = `${o.method} ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${org.live_token}\r\n`;
      const huge = await rawRequest(port, `${head}X-Filler: ${'x'.repeat(70_000)}\r\n\r\n`);
      judge(o, 'header over 64 KiB', huge.status, huge.headers, huge.body);
      const longUrl = await rawRequest(port, `${o.method} ${url}?q=${'x'.repeat(70_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      judge(o, 'URL over 64 KiB', longUrl.status, longUrl.headers, longUrl.body);
      const expectation = await rawRequest(port, `${head}Expect: the-impossible\r\nContent-Length: 0\r\n\r\n`);
      judge(o, 'unmet Expect', expectation.status, expectation.headers, expectation.body);
      expect([huge.status, longUrl.status, expectation.status]).toEqual([431, 431, 417]);
    }

    // The live stream answers 200 text/event-stream, as the document says.
    const events = operations.find((o) => o.op.operationId === 'listEvents')!;
    const stream = await new Promise<Answer>((done, fail) => {
      const req = httpRequest({ port, host: '127.0.0.1', path: '/v1/events', headers: { accept: 'text/event-stream', authorization: `Bearer ${org.test_token}` } }, (res) => {
        done({ status: res.statusCode ?? 0, headers: res.headers as Answer['headers'], body: '' });
        req.destroy();
      });
      req.on('error', fail);
      req.end();
    });
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    judge(events, 'event stream', stream.status, stream.headers, stream.body);
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it('documents the 429 of every kind of route, with Retry-After', async () => {
    const limited = await testApp({ env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_PER_MINUTE: '1000', PUBLIC_RATE_LIMIT_PER_SECOND: '1', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000' } });
    try {
      const org = await newOrg(limited);
      for (const id of ['listContacts', 'createContact', 'getPublicQuote', 'getQuotePage', 'revokeApiKey']) {
        const o = operations.find((x) => x.op.operationId === id)!;
        const url = o.path.replace(/\{\w+\}/g, 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B');
        let answer: LightMyRequestResponse | undefined;
        for (let i = 0; i < 3; i++) answer = await limited.inject({ method: o.method as 'GET', url, headers: { authorization: `Bearer ${org.live_token}` }, ...(o.writes ? { payload: {} } : {}) });
        expect(answer!.statusCode, o.label).toBe(429);
        expect(answer!.headers['retry-after'], o.label).toBeDefined();
        judge(o, 'over the rate limit', answer!.statusCode, answer!.headers as Answer['headers'], answer!.body);
      }
    } finally {
      await limited.close();
    }
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it('names every shape as a component, and every event type as a webhook whose payload is an event as listed', async () => {
    const schemas = doc.components.schemas as Record<string, Json>;
    for (const name of ['Contact', 'ContactCreate', 'ContactUpdate', 'ContactList', 'ContactSearch', 'Error', 'ValidationError', 'Pagination', 'Event']) expect(schemas[name], name).toBeDefined();
    // One name per shape: a name taken twice by different shapes would be numbered.
    expect(Object.keys(schemas).filter((n) => /\d$/.test(n))).toEqual([]);
    const inline: string[] = [];
    for (const o of operations) {
      const bodies = [o.op.requestBody?.content?.['application/json']?.schema, ...Object.entries(o.op.responses as Record<string, Json>).map(([, r]) => r.content?.['application/json']?.schema)];
      // Objects are shapes, named; a plain string (a CSV, a page) is not.
      for (const schema of bodies) if (schema?.type === 'object') inline.push(o.label);
    }
    expect(inline, 'JSON bodies not named').toEqual([]);
    // The upload the import route parses itself is documented beside its JSON body.
    const startImport = operations.find((o) => o.op.operationId === 'startImport')!.op.requestBody.content;
    expect(Object.keys(startImport).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(startImport['multipart/form-data'].schema).toEqual({ $ref: '#/components/schemas/ImportUpload' });
    expect(schemas.ImportUpload.properties.file).toMatchObject({ type: 'string', contentMediaType: 'text/csv' });
    expect(schemas.ImportUpload.required).toEqual(['file', 'object']);
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPE_NAMES].sort());

    // The events the replay recorded (of many types) are the payloads the webhooks document for them.
    const t = client(app, replayToken ?? (await newOrg(app)).test_token);
    const events: Json[] = [];
    for (let url = '/v1/events?limit=200', page = 0; url && page < 10; page++) {
      const answer = (await t.get(url)).json();
      events.push(...answer.data);
      url = answer.next_cursor ? `/v1/events?limit=200&cursor=${encodeURIComponent(answer.next_cursor)}` : '';
    }
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) {
      const [type, id] = [String(event.type), String(event.id)];
      const validate = ajv.compile({ $ref: `openapi.json#/${pointer('webhooks', type, 'post', 'requestBody', 'content', 'application/json', 'schema')}` });
      if (!validate(event)) failures.push(`webhook ${type} (${id}): ${validate.errors![0].instancePath} ${validate.errors![0].message}`);
    }
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it('lists the error types each response may carry: an Error with a closed type enum, param, and one component per status', () => {
    const schemas = doc.components.schemas as Record<string, Json>;
    expect(schemas.Error.required).toEqual(['type', 'detail']);
    expect(schemas.Error.properties.type.enum).toEqual([
      'bad_request', 'authentication_failed', 'insufficient_credits', 'permission_denied', 'not_found', 'request_timeout', 'conflict',
      'idempotency_conflict', 'payload_too_large', 'uri_too_long', 'unsupported_media_type', 'expectation_failed', 'validation_error',
      'header_fields_too_large', 'rate_limited', 'service_unavailable', 'provider_not_configured', 'internal_error',
    ]);
    expect(schemas.Error.properties.param).toMatchObject({ type: 'string' });
    expect(schemas.ValidationError.properties.type.enum).toEqual(['validation_error']);
    /** The types a response's JSON body may have, as the document says. */
    const typesOf = (response: Json): string[] => {
      const schema = response.content['application/json'].schema as Json;
      return ((schema.anyOf ?? [schema]) as Json[]).flatMap((branch) => {
        const named = resolve(branch)!;
        return named.allOf ? resolve(named.allOf[1])!.properties.type.enum : named.properties.type.enum;
      });
    };
    const responses = (id: string) => operations.find((o) => o.op.operationId === id)!.op.responses as Record<string, Json>;
    const create = responses('createContact');
    expect(Object.fromEntries(['400', '401', '403', '404', '408', '409', '413', '415', '422', '429', '431', '500', '503'].map((s) => [s, typesOf(create[s] ?? responses('getContact')[s])]))).toEqual({
      400: ['bad_request'], 401: ['authentication_failed'], 403: ['permission_denied'], 404: ['not_found'], 408: ['request_timeout'],
      409: ['conflict', 'idempotency_conflict'], 413: ['payload_too_large'], 415: ['unsupported_media_type'], 422: ['validation_error', 'idempotency_conflict'],
      429: ['rate_limited'], 431: ['header_fields_too_large'], 500: ['internal_error'], 503: ['service_unavailable', 'provider_not_configured'],
    });
    expect(create['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/NotFoundError' });
    expect(typesOf(responses('launchCampaign')['402'])).toEqual(['insufficient_credits']);
    // Every JSON error response of every operation names the types it may carry, all of them documented ones.
    for (const o of operations) {
      for (const [status, response] of Object.entries(o.op.responses as Record<string, Json>)) {
        if (!/^[45]/.test(status) || !response.content?.['application/json']) continue;
        const types = typesOf(response);
        expect(types.length, `${o.label} ${status}`).toBeGreaterThan(0);
        for (const type of types) expect(schemas.Error.properties.type.enum, `${o.label} ${status}`).toContain(type);
      }
    }
  });

  it('has readable, unique operationIds', () => {
    const ids = operations.map((o) => o.op.operationId as string);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z]+(?:[A-Z][a-z]+)*$/);
    for (const id of ['listContacts', 'createContact', 'getContact', 'updateContact', 'deleteContact', 'launchCampaign', 'getUsage', 'listEvents']) expect(ids).toContain(id);
  });
});

describe('a client generated from the document', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rds-openapi-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has named types (openapi-typescript) that a small client type-checks against', async () => {
    const types = astToString(await openapiTS(doc as Parameters<typeof openapiTS>[0]));
    expect(types).toContain('Contact: {');
    writeFileSync(join(dir, 'api.d.ts'), types);
    writeFileSync(join(dir, 'client.ts'), [
      'import type { components, operations, webhooks } from \'./api.d.ts\';',
      'type Schemas = components[\'schemas\'];',
      'export type Contact = Schemas[\'Contact\'];',
      'export const label = (c: Contact): string => c.name ?? c.work_email ?? c.id;',
      'export const ids = (page: Schemas[\'ContactList\']): string[] => page.data.map((c) => c.id);',
      'export const next = (page: Schemas[\'ContactList\']): string | null => page.pagination.next_cursor;',
      'export const created: Schemas[\'ContactCreate\'] = { list_id: \'lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B\', name: \'Ada Lovelace\' };',
      'export const change: Schemas[\'ContactUpdate\'] = { title: null };',
      'export const problem = (e: Schemas[\'Error\'] | Schemas[\'ValidationError\']): string => (typeof e.detail === \'string\' ? e.detail : e.detail.map((f) => f.msg).join(\', \'));',
      'export const missing = (e: Schemas[\'NotFoundError\']): \'not_found\' => e.type;',
      'export const field = (e: Schemas[\'ValidationError\']): string | undefined => e.param;',
      '// @ts-expect-error a 404 is never a conflict',
      'export const notAConflict = (e: Schemas[\'NotFoundError\']): \'conflict\' => e.type;',
      'export type Launched = operations[\'launchCampaign\'][\'responses\'][200][\'content\'][\'application/json\'];',
      'export type Usage = operations[\'getUsage\'][\'responses\'][200][\'content\'][\'application/json\'][\'data\'];',
      'export type ContactCreated = NonNullable<webhooks[\'contact.created\'][\'post\']>[\'requestBody\'];',
      '// @ts-expect-error list_id is required',
      'export const incomplete: Schemas[\'ContactCreate\'] = { name: \'Ada\' };',
      '// @ts-expect-error a contact has no such member',
      'export const wrong = (c: Contact) => c.no_such_member;',
    ].join('\n'));
    const program = ts.createProgram([join(dir, 'client.ts')], {
      strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
      allowImportingTsExtensions: true, skipLibCheck: false, types: [],
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName.split('/').pop() ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(diagnostics).toEqual([]);
  }, 60_000);
});
