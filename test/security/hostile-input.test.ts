// Hostile and malformed input, generated from the OpenAPI request schemas with fast-check and sent
// to every route that takes it. For every input: a 4xx in the error shape or a success, never a 5xx
// or a hang; a refused write changes nothing the tenant can see; an accepted write reads back as
// acknowledged. FUZZ_RUNS (default 40) sets the generated inputs per route, FUZZ_SEED replays a run.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { capturedLogs, isPostgres, testApp } from '../helpers/app.ts';
import { bodySchema, fill, guarded, loadApi, queryParams, type ApiRoute } from './support/api.ts';
import { freshOrg, send, type Actor } from './support/actors.ts';
import { bodyFor, make, paramsFor, referenceValue } from './support/factories.ts';
import { figures, reportFigures } from './support/figures.ts';
import { HOSTILE_IDS, hostileBody, hostileQuery, type HostileBody } from './support/hostile.ts';
import { json, type Reply } from './support/reply.ts';
import { isReference } from './support/schema-values.ts';
import { expectNoSecretsInLogs } from './support/secrets.ts';
import { firstDifference, snapshot } from './support/snapshot.ts';

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const fuzz = { numRuns: FUZZ_RUNS, ...(FUZZ_SEED === undefined ? {} : { seed: FUZZ_SEED }) };
/** Per-test time limit: room for the configured number of runs (and fast-check's shrinking). */
const FUZZ_TIMEOUT = 30_000 + FUZZ_RUNS * 500;

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000' } });
const api = await loadApi(app);
const label = (r: ApiRoute) => `${r.method} ${r.url}`;
const withBody = guarded(api).filter((r) => bodySchema(api, r));
const reads = guarded(api).filter((r) => r.method === 'GET');

afterAll(async () => {
  reportFigures(import.meta.filename, isPostgres() ? 'postgres' : 'sqlite');
  expectNoSecretsInLogs(capturedLogs);
  await app.close();
});

/** A tenant that owns one object of every kind the routes act on, and a snapshot of it. */
async function fixture(route: ApiRoute) {
  const org = await freshOrg(app, 'F');
  const owner = org.live;
  for (const r of guarded(api)) await paramsFor(api, owner, r);
  const params = await paramsFor(api, owner, route);
  return { owner, url: fill(route.url, params) };
}

/** Where an accepted write of `route` can be read back by id, if anywhere. */
function readBack(route: ApiRoute, url: string, reply: Reply): string | undefined {
  const data = json(reply).data;
  const creates = route.method === 'POST' && route.params.length === 0;
  if (creates && typeof data?.id !== 'string') return undefined;
  const target = creates ? `${route.url}/:id` : route.url;
  if (!guarded(api).some((r) => r.method === 'GET' && r.url === target)) return undefined;
  return creates ? `${url}/${data.id}` : url;
}

async function sendHostile(owner: Actor, route: ApiRoute, url: string, input: HostileBody): Promise<Reply> {
  figures.hostileInputs++;
  return owner.call(route.method, url, { payload: input.payload, headers: { 'content-type': input.contentType ?? 'application/json' } });
}

describe('generated and mutated bodies', () => {
  for (const route of withBody) {
    it(label(route), async () => {
      const { owner, url } = await fixture(route);
      const schema = bodySchema(api, route)!;
      const references: Record<string, unknown> = {};
      for (const field of Object.keys(schema.properties ?? {}).filter(isReference)) references[field] = await referenceValue(api, owner, field);
      let baseline = await snapshot(api, owner);
      await fc.assert(fc.asyncProperty(hostileBody(schema, references), async (input) => {
        const reply = await sendHostile(owner, route, url, input);
        const context = `${label(route)} ${input.kind}: ${input.payload.slice(0, 160)} → ${reply.status} ${reply.body.slice(0, 200)}`;
        if (input.mustRefuse) expect(reply.status, context).toBeGreaterThanOrEqual(400);
        // The baseline always follows the store, also when an assertion fails (fast-check then
        // shrinks the input and runs it again).
        const before = baseline;
        baseline = await snapshot(api, owner);
        if (reply.status >= 400) {
          expect(baseline === before, `refused, yet changed the tenant's data: ${context}\n${firstDifference(before, baseline)}`).toBe(true);
          return;
        }
        const at = readBack(route, url, reply);
        if (at) expect(json(await owner.call('GET', at)).data, `reads back as acknowledged: ${context}`).toEqual(json(reply).data);
      }), fuzz);
    }, FUZZ_TIMEOUT);
  }
});

describe('bodies no parser should accept', () => {
  for (const route of withBody) {
    it(label(route), async () => {
      const { owner, url } = await fixture(route);
      const before = await snapshot(api, owner);
      const cases: Array<[string, string | Buffer, Record<string, string>, number[]]> = [
        ['over 1 MiB', `{"name":"${'a'.repeat(1024 * 1024)}"}`, { 'content-type': 'application/json' }, [413]],
        ['empty with a JSON type', '', { 'content-type': 'application/json' }, [400]],
        ['JSON without a content type', '{"name":"x"}', {}, [400, 415, 422]],
        ['UTF-16 JSON', Buffer.from('{"name":"x"}', 'utf16le'), { 'content-type': 'application/json; charset=utf-16' }, [400, 415]],
        ['a lone value', 'null', { 'content-type': 'application/json' }, [400, 422]],
        ['trailing garbage', '{"name":"x"} {"name":"y"}', { 'content-type': 'application/json' }, [400]],
        ['comments', '{/* c */"name":"x"}', { 'content-type': 'application/json' }, [400]],
        ['content length lies', '{"name":"x"}', { 'content-type': 'application/json', 'content-length': '5' }, [400]],
      ];
      for (const [name, payload, headers, statuses] of cases) {
        figures.hostileInputs++;
        const reply = await owner.call(route.method, url, { payload, headers });
        expect(statuses.includes(reply.status), `${label(route)} ${name} → ${reply.status} ${reply.body.slice(0, 200)}`).toBe(true);
      }
      expect(await snapshot(api, owner)).toBe(before);
    });
  }
});

describe('invalid UTF-8', () => {
  it('is refused, or stored exactly as acknowledged', async () => {
    const owner = (await freshOrg(app, 'U')).live;
    const name = Buffer.concat([Buffer.from('{"type":"contacts","name":"a'), Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80]), Buffer.from('z"}')]);
    figures.hostileInputs++;
    const reply = await owner.call('POST', '/v1/lists', { payload: name, headers: { 'content-type': 'application/json' } });
    expect([201, 400, 422].includes(reply.status), reply.body).toBe(true);
    if (reply.status === 201) expect(json(await owner.call('GET', `/v1/lists/${json(reply).data.id}`)).data).toEqual(json(reply).data);
  });
});

describe('hostile query strings', () => {
  for (const route of reads) {
    it(label(route), async () => {
      const { owner, url } = await fixture(route);
      await fc.assert(fc.asyncProperty(hostileQuery(queryParams(route)), async ({ query }) => {
        figures.hostileInputs++;
        // Streams are asked for by Accept only; a hostile query must still answer, not hang.
        const reply = await owner.call('GET', `${url}?${query}`);
        expect([200, 400, 404, 422].includes(reply.status), `${label(route)}?${query} → ${reply.status} ${reply.body.slice(0, 200)}`).toBe(true);
      }), fuzz);
    }, FUZZ_TIMEOUT);
  }
});

function isAnotherRoute(route: { method: string }, path: string): boolean {
  const resolved = new URL(path, 'http://service.invalid').pathname;
  if (resolved === path) return false;
  const pattern = (url: string) => new RegExp(`^${url.replace(/:\w+/g, '[^/]+')}$`);
  return guarded(api).some((r) => r.method === route.method && pattern(r.url).test(resolved));
}

describe('hostile ids in paths', () => {
  it('answers every hostile id on every route with a 4xx and changes nothing', async () => {
    const org = await freshOrg(app, 'P');
    const owner = org.live;
    for (const r of guarded(api)) await paramsFor(api, owner, r);
    const before = await snapshot(api, owner);
    for (const route of guarded(api).filter((r) => r.params.length > 0)) {
      const params = await paramsFor(api, owner, route);
      const body = await bodyFor(api, owner, route);
      for (const name of route.params) {
        for (const id of HOSTILE_IDS) {
          figures.hostileInputs++;
          const path = route.url.replace(/:(\w+)/g, (_, p: string) => (p === name ? id : encodeURIComponent(params[p])));
          // A dot-segment id makes the URL another documented route's (`/v1/deals/../contacts` is
          // `/v1/contacts` to every client): that request is the other route's, answered as such.
          if (isAnotherRoute(route, path)) continue;
          const reply = await owner.call(route.method, path, { body });
          expect(reply.status, `${route.method} ${path} → ${reply.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
        }
      }
    }
    expect(await snapshot(api, owner)).toBe(before);
  });
});

describe('cursors', () => {
  it('answers every byte flip, truncation and extension of a real cursor with 400 bad_request', async () => {
    const org = await freshOrg(app, 'C');
    const owner = org.live;
    let tried = 0;
    for (const route of guarded(api).filter((r) => r.method === 'GET' && r.params.length === 0 && queryParams(r).some((p) => p.name === 'cursor'))) {
      for (let i = 0; i < 3; i++) await make(api, owner, route.url, { fresh: true }).catch(() => undefined);
      const first = json(await owner.call('GET', `${route.url}?limit=1`));
      const cursor: string | null = first.next_cursor;
      if (!cursor) continue;
      const variants = new Set<string>();
      for (let i = 0; i < cursor.length; i++) {
        const code = cursor.charCodeAt(i);
        for (const flipped of [code ^ 0x01, code ^ 0x20, code ^ 0x04]) variants.add(cursor.slice(0, i) + String.fromCharCode(flipped) + cursor.slice(i + 1));
        variants.add(cursor.slice(0, i));
      }
      variants.add(`${cursor}A`);
      variants.add(`${cursor}.`);
      variants.add(cursor.split('.').reverse().join('.'));
      variants.delete(cursor);
      for (const variant of variants) {
        figures.hostileInputs++;
        tried++;
        const reply = await owner.call('GET', `${route.url}?limit=1&cursor=${encodeURIComponent(variant)}`);
        expect(reply.status, `${route.url} cursor ${JSON.stringify(variant)} (real ${cursor}) → ${reply.body}`).toBe(400);
        expect(json(reply).type).toBe('bad_request');
      }
      const real = await owner.call('GET', `${route.url}?limit=1&cursor=${encodeURIComponent(cursor)}`);
      expect(real.status, 'the real cursor still works').toBe(200);
    }
    expect(tried).toBeGreaterThan(100);
  });
});

describe('hostile headers', () => {
  it('refuses malformed Idempotency-Key values and never echoes a hostile request id', async () => {
    const org = await freshOrg(app, 'H');
    const before = await snapshot(api, org.live);
    for (const key of ['', ' ', 'k'.repeat(256), 'ключ', 'a b', 'tab\there', '\u0000']) {
      figures.hostileInputs++;
      const reply = await send(app, 'POST', '/v1/lists', {
        body: { name: 'x', type: 'contacts' },
        headers: { authorization: `Bearer ${org.live.token}`, 'idempotency-key': Buffer.from(key, 'utf8').toString('latin1') },
      });
      expect(reply.status, `Idempotency-Key ${JSON.stringify(key)} → ${reply.body}`).toBe(400);
    }
    for (const id of ['<script>', 'x'.repeat(100), 'a b', '../../x']) {
      figures.hostileInputs++;
      const reply = await org.live.call('GET', '/v1/lists', { headers: { 'x-request-id': id } });
      expect(reply.headers['x-request-id']).not.toBe(id);
    }
    for (const authorization of [`Bearer ${'x'.repeat(10_000)}`, 'Bearer svc_live_', 'Bearer svc_test_', `Bearer ${org.live.token.replace('svc_live_', 'svc_test_')}`.slice(0, -1), 'Bearer \u00ff\u00fe']) {
      figures.hostileInputs++;
      const reply = await send(app, 'GET', '/v1/lists', { headers: { authorization: Buffer.from(authorization, 'utf8').toString('latin1') } });
      expect(reply.status, authorization.slice(0, 40)).toBe(401);
    }
    expect(await snapshot(api, org.live)).toBe(before);
  });
});
