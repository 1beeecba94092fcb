// Hostile and malformed input, derived from the OpenAPI request schemas and sent to every route that
// takes it: first an enumeration (every kind of body mutation and every boundary value of every
// field, on every route with a body; every bound, key form and raw value of every query parameter,
// on every GET route: support/hostile-cases.ts), then random inputs generated with fast-check on
// top. For every input: a 4xx in the error shape or a success, never a 5xx or a hang; a refused
// write changes nothing the tenant can see; an accepted write reads back as acknowledged. After every
// route, no error has escaped a handler (it would end a real process) and GET /healthz still answers.
// FUZZ_RUNS (default 40) sets the random inputs per route; the run prints its FUZZ_SEED, which
// replays it.
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { capturedLogs, isPostgres, testApp } from '../helpers/app.ts';
import { bodySchema, fill, fillRoute, guarded, loadApi, queryParams, type ApiRoute } from './support/api.ts';
import { freshOrg, send, type Actor } from './support/actors.ts';
import { bodyFor, make, paramsFor, referenceValue } from './support/factories.ts';
import { figures, reportFigures } from './support/figures.ts';
import { enumeratedBodies, enumeratedQueries, familiesFor } from './support/hostile-cases.ts';
import { HOSTILE_IDS, hostileBody, hostileQuery, type Family, type HostileBody } from './support/hostile.ts';
import { json, type Reply } from './support/reply.ts';
import { isReference } from './support/schema-values.ts';
import { expectNoSecretsInLogs } from './support/secrets.ts';
import { firstDifference, snapshot } from './support/snapshot.ts';

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const fuzz = { numRuns: FUZZ_RUNS, seed: FUZZ_SEED };
console.log(`hostile input: FUZZ_SEED=${FUZZ_SEED} FUZZ_RUNS=${FUZZ_RUNS} (set both to replay this run)`);
/** Per-test time limit: room for the configured number of runs (and fast-check's shrinking). */
const FUZZ_TIMEOUT = 30_000 + FUZZ_RUNS * 500;

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000' } });
const api = await loadApi(app);
const label = (r: ApiRoute) => `${r.method} ${r.url}`;
const withBody = guarded(api).filter((r) => bodySchema(api, r));
const reads = guarded(api).filter((r) => r.method === 'GET');

/** What the enumeration sent, printed at the end of the run. */
const enumerated = { bodies: 0, bodyRoutes: 0, queries: 0, queryRoutes: 0 };

afterAll(async () => {
  console.log(`hostile input: enumerated ${enumerated.bodies} bodies on ${enumerated.bodyRoutes} routes and ${enumerated.queries} query strings on ${enumerated.queryRoutes} routes; random ${FUZZ_RUNS} per route and property on top, FUZZ_SEED=${FUZZ_SEED}`);
  reportFigures(import.meta.filename, isPostgres() ? 'postgres' : 'sqlite');
  expectNoSecretsInLogs(capturedLogs);
  await app.close();
}, 180_000);

/**
 * Errors that escaped every handler (an `error` event nobody listened to, a rejection nobody awaited):
 * each would have ended a real service process. After every route and batch none has, and the same
 * process still answers its health check.
 */
const escaped: string[] = [];
process.on('uncaughtException', (error) => escaped.push(`uncaught exception: ${error.stack ?? error.message}`));
process.on('unhandledRejection', (reason) => escaped.push(`unhandled rejection: ${reason instanceof Error ? reason.stack : String(reason)}`));
const pid = process.pid;

afterEach(async () => {
  const health = await app.inject({ method: 'GET', url: '/healthz' });
  expect(escaped, 'errors that escaped their request: each would end the process').toEqual([]);
  expect(health.statusCode, health.body).toBe(200);
  expect(process.pid).toBe(pid);
});

/** A tenant that owns one object of every kind the routes act on, and a snapshot of it. */
async function fixture(route: ApiRoute) {
  const org = await freshOrg(app, 'F');
  const owner = org.live;
  for (const r of guarded(api)) await paramsFor(api, owner, r);
  const params = await paramsFor(api, owner, route);
  // Writes carry their required query parameters (`?match=` of a deal assert); reads get theirs from the walk.
  return { owner, url: route.method === 'GET' ? fill(route.url, params) : fillRoute(route, params) };
}

/**
 * Where an accepted write of `route` can be read back, if anywhere: a created object by its id, an
 * updated one at its URL, and the object an action answers with (`/v1/campaigns/:id/launch`) at
 * the URL of that object. Other answers (a report such as the entries added) are not read back.
 */
function readBack(route: ApiRoute, url: string, reply: Reply): string | undefined {
  const data = json(reply).data;
  const readable = (target: string) => guarded(api).some((r) => r.method === 'GET' && r.url === target);
  if (route.method === 'PATCH') return readable(route.url) ? url : undefined;
  if (route.method !== 'POST' || typeof data?.id !== 'string') return undefined;
  if (route.params.length === 0) return readable(`${route.url}/:id`) ? `${url}/${data.id}` : undefined;
  const parent = url.slice(0, url.lastIndexOf('/'));
  return parent.endsWith(`/${encodeURIComponent(data.id)}`) && readable(route.url.slice(0, route.url.lastIndexOf('/'))) ? parent : undefined;
}

/** Fields of background work (an import, an export) that its job moves after the write has answered. */
const PROGRESS = new Set(['status', 'rows_total', 'rows_processed', 'created', 'updated', 'skipped', 'failed', 'size_bytes', 'error', 'download_url', 'started_at', 'finished_at', 'updated_at']);
const isQueued = (reply: Reply) => reply.status < 300 && json(reply).data?.status === 'queued';
const withoutProgress = (data: Record<string, unknown>) => Object.fromEntries(Object.entries(data).filter(([k]) => !PROGRESS.has(k)));

/** Waits (without failing) until the work an accepted write queued at `at` has ended, so that it moves nothing behind the next comparison. */
async function settle(owner: Actor, at: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const reply = await owner.call('GET', at);
    if (reply.status !== 200 || !['queued', 'running'].includes(json(reply).data?.status)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function sendHostile(owner: Actor, route: ApiRoute, url: string, input: HostileBody): Promise<Reply> {
  figures.hostileInputs++;
  return owner.call(route.method, url, { payload: input.payload, headers: { 'content-type': input.contentType ?? 'application/json' } });
}

/** A tenant for `route` with real ids for its body's reference fields, and a check of each input. */
async function bodyTarget(route: ApiRoute) {
  const { owner, url } = await fixture(route);
  const schema = bodySchema(api, route)!;
  const references: Record<string, unknown> = {};
  for (const field of Object.keys(schema.properties ?? {}).filter(isReference)) references[field] = await referenceValue(api, owner, field);
  let baseline = await snapshot(api, owner);
  /** Sends `input` and checks the invariants; returns the reply. */
  const check = async (input: HostileBody): Promise<Reply> => {
    const reply = await sendHostile(owner, route, url, input);
    const context = `${label(route)} ${input.kind}: ${input.payload.slice(0, 160)} → ${reply.status} ${reply.body.slice(0, 200)}`;
    if (input.mustRefuse) expect(reply.status, context).toBeGreaterThanOrEqual(400);
    // The baseline always follows the store, also when an assertion fails (fast-check then
    // shrinks the input and runs it again).
    const before = baseline;
    const at = reply.status < 400 ? readBack(route, url, reply) : undefined;
    // Work the write queued (an import, an export) ends first: it changes the tenant by design.
    const queued = at !== undefined && isQueued(reply);
    if (queued) await settle(owner, at);
    baseline = await snapshot(api, owner);
    if (reply.status >= 400) {
      expect(baseline === before, `refused, yet changed the tenant's data: ${context}\n${firstDifference(before, baseline)}`).toBe(true);
      return reply;
    }
    // A webhook endpoint's `secret` is shown only in the answer that made it, never read back; the
    // progress of queued work has moved on since the answer.
    if (at) {
      const read = json(await owner.call('GET', at)).data;
      const acknowledged = { ...json(reply).data, secret: undefined };
      if (queued) expect(withoutProgress(read), `reads back as acknowledged: ${context}`).toEqual(withoutProgress(acknowledged));
      else expect(read, `reads back as acknowledged: ${context}`).toEqual(acknowledged);
    }
    return reply;
  };
  return { owner, schema, references, check };
}

/**
 * Routes whose valid body carries a single-use code that another organization hands out (an agency
 * redeeming a client's grant): a body built from the schema cannot be accepted, so only the refusals
 * are checked here; test/resources/agency-grants.test.ts redeems real codes.
 */
const ONE_TIME_CODES = new Set(['POST /v1/agency/clients/link']);

describe('every mutation kind and every boundary value (enumerated)', () => {
  for (const route of withBody) {
    it(label(route), async () => {
      const { owner, schema, references, check } = await bodyTarget(route);
      // The route's own valid body wins: its references agree with each other (a stage of its pipeline).
      const base = async () => ({ ...references, ...(await bodyFor(api, owner, route) as Record<string, unknown>) });
      const sent = new Set<Family>();
      for (const make of enumeratedBodies(schema, base)) {
        const input = await make();
        const reply = await check(input);
        sent.add(input.family);
        enumerated.bodies++;
        if (input.family === 'valid' && !ONE_TIME_CODES.has(label(route))) expect(reply.status, `a valid body is accepted: ${input.payload.slice(0, 200)} → ${reply.body.slice(0, 200)}`).toBeLessThan(300);
      }
      expect([...sent].sort(), 'every mutation kind that applies was sent').toEqual(familiesFor(schema).sort());
      enumerated.bodyRoutes++;
    }, 120_000);
  }
});

describe('generated and mutated bodies (random, on top)', () => {
  for (const route of withBody) {
    it(label(route), async () => {
      const { schema, references, check } = await bodyTarget(route);
      await fc.assert(fc.asyncProperty(hostileBody(schema, references), async (input) => {
        await check(input);
      }), fuzz);
    }, FUZZ_TIMEOUT);
  }
});

describe('bodies no parser should accept, and an empty one', () => {
  for (const route of withBody) {
    it(label(route), async () => {
      const { owner, url } = await fixture(route);
      const before = await snapshot(api, owner);
      const cases: Array<[string, string | Buffer, Record<string, string>, number[]]> = [
        ['over 1 MiB', `{"name":"${'a'.repeat(1024 * 1024)}"}`, { 'content-type': 'application/json' }, [413]],
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
      // An empty body under a JSON type is no body: answered as a request without one.
      const bare = await owner.call(route.method, url, {});
      const empty = await owner.call(route.method, url, { payload: '', headers: { 'content-type': 'application/json' } });
      expect(empty.status, `${label(route)} empty with a JSON type → ${empty.status} ${empty.body.slice(0, 200)}, without a body ${bare.status} ${bare.body.slice(0, 200)}`).toBe(bare.status);
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

describe('every bound, key form and raw value of every query parameter (enumerated)', () => {
  for (const route of reads) {
    it(label(route), async () => {
      const { owner, url } = await fixture(route);
      for (const input of enumeratedQueries(queryParams(route))) {
        figures.hostileInputs++;
        const reply = await owner.call('GET', `${url}?${input.query}`);
        const context = `${label(route)}?${input.query.slice(0, 160)} (${input.kind}) → ${reply.status} ${reply.body.slice(0, 200)}`;
        expect([200, 400, 404, 422].includes(reply.status), context).toBe(true);
        if (input.mustRefuse) expect([400, 422].includes(reply.status), `out of bounds, yet ${context}`).toBe(true);
        enumerated.queries++;
      }
      enumerated.queryRoutes++;
    }, 60_000);
  }
});

describe('hostile query strings (random, on top)', () => {
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
