// Hostile and malformed input, derived from the OpenAPI request schemas and sent to every route of a
// shard (shards.ts) that takes it: first an enumeration (every kind of body mutation and every
// boundary value of every field, on every route with a body; every bound, key form and raw value of
// every query parameter, on every GET route: support/hostile-cases.ts), then random inputs generated
// with fast-check on top (fuzz.ts), then hostile ids in the route's path. For every input: a 4xx in
// the error shape or a success, never a 5xx or a hang; a refused write changes nothing (the change
// probe after each input, whole snapshots around each route); an accepted write reads back as
// acknowledged. After every route, no error has escaped a handler and GET /healthz still answers.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { isPostgres } from '../../helpers/app.ts';
import { freshOrg, type Actor } from '../support/actors.ts';
import { bodySchema, fill, fillRoute, guarded, queryParams, type ApiRoute } from '../support/api.ts';
import { bodyFor, paramsFor, referenceValue } from '../support/factories.ts';
import { figures } from '../support/figures.ts';
import { enumeratedBodies, enumeratedQueries, familiesFor } from '../support/hostile-cases.ts';
import { HOSTILE_IDS, hostileBody, hostileQuery, type Family, type HostileBody } from '../support/hostile.ts';
import { changeProbe } from '../support/probe.ts';
import { json, providerNotConfigured, type Reply } from '../support/reply.ts';
import { isReference } from '../support/schema-values.ts';
import { firstDifference, snapshot } from '../support/snapshot.ts';
import { fuzz, FUZZ_TIMEOUT, replayLine } from './fuzz.ts';
import { hostileApp, isAnotherRoute, label, readBack } from './hostile-app.ts';
import { shardFile, shardRoutes, type Shard } from './shards.ts';

/**
 * Routes whose valid body can be accepted once only: it carries a single-use code that another
 * organization hands out (an agency redeeming a client's grant), or names a record that can take
 * part once (a member becomes an agent once). Only the refusals are checked here;
 * test/resources/agency-grants.test.ts redeems real codes, test/resources/voice-dialer.test.ts makes agents.
 */
const ONE_TIME_CODES = new Set(['POST /v1/agency/clients/link', 'POST /v1/voice/agents']);
/** Routes whose valid body is answered 503 by design: they need a provider kind the service has none of yet (a language model). */
const NO_PROVIDER_YET = new Set(['POST /v1/voice/calls/:id/grade']);

/** Fields of background work (an import, an export) that its job moves after the write has answered. */
const PROGRESS = new Set(['status', 'rows_total', 'rows_processed', 'created', 'updated', 'skipped', 'failed', 'size_bytes', 'error', 'download_url', 'started_at', 'finished_at', 'completed_at', 'exhausted', 'updated_at']);
/** States of records whose work goes on after the answer (an import's, a sequence's move). */
const BUSY = ['queued', 'running', 'scheduling', 'pausing', 'resuming', 'terminating'];
/**
 * Where to watch the work an accepted write at `at` left going: the record itself while it is busy,
 * or the sequence a campaign's launch made and runs.
 */
function queuedWork(at: string, reply: Reply): string | undefined {
  if (reply.status >= 300) return undefined;
  const data = json(reply).data as Record<string, unknown> | undefined;
  if (BUSY.includes(String(data?.status))) return at;
  return typeof data?.sequence_id === 'string' ? `/v1/sequences/${data.sequence_id}` : undefined;
}
const withoutProgress = (data: Record<string, unknown>) => Object.fromEntries(Object.entries(data).filter(([k]) => !PROGRESS.has(k)));

/** Waits (without failing) until the work an accepted write queued at `at` has ended, so that it moves nothing behind the next comparison. */
async function settle(owner: Actor, at: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const reply = await owner.call('GET', at);
    if (reply.status !== 200 || !BUSY.includes(json(reply).data?.status)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Defines the hostile-input walk of `shard`'s routes in the calling test file. */
export async function hostileInputWalk(shard: Shard): Promise<void> {
  const { app, api } = await hostileApp(shardFile(shard));
  const routes = shardRoutes(api, shard);
  const withBody = routes.filter((r) => bodySchema(api, r));
  const reads = routes.filter((r) => r.method === 'GET');
  console.log(replayLine(`hostile input ${shardFile(shard)}`));
  const enumerated = { bodies: 0, bodyRoutes: 0, queries: 0, queryRoutes: 0 };
  afterAll(() => {
    console.log(`hostile input ${shardFile(shard)} (${isPostgres() ? 'postgres' : 'sqlite'}): enumerated ${enumerated.bodies} bodies on ${enumerated.bodyRoutes} routes and ${enumerated.queries} query strings on ${enumerated.queryRoutes} routes; ${replayLine('random on top')}`);
  });

  /** A tenant that owns one object of every kind the routes act on, so a stray write has something to change. */
  async function fixture(route: ApiRoute) {
    const org = await freshOrg(app, 'F');
    // A test helper is walked with a test key: a live one is refused whatever it sends.
    const owner = route.testOnly ? org.test : org.live;
    for (const r of guarded(api)) await paramsFor(api, owner, r);
    const params = await paramsFor(api, owner, route);
    // Writes carry their required query parameters (`?match=` of a deal assert); reads get theirs from the walk.
    return { owner, orgId: org.orgId, url: route.method === 'GET' ? fill(route.url, params) : fillRoute(route, params) };
  }

  /** A tenant for `route` with real ids for its body's reference fields, and a check of each input. */
  async function bodyTarget(route: ApiRoute) {
    const { owner, orgId, url } = await fixture(route);
    const schema = bodySchema(api, route)!;
    const references: Record<string, unknown> = {};
    for (const field of Object.keys(schema.properties ?? {}).filter(isReference)) references[field] = await referenceValue(api, owner, field);
    let probe = await changeProbe(app, orgId);
    let accepted = 0;
    /** Sends `input` and checks the invariants; returns the reply. */
    const check = async (input: HostileBody): Promise<Reply> => {
      figures.hostileInputs++;
      const reply = await owner.call(route.method, url, { payload: input.payload, headers: { 'content-type': input.contentType ?? 'application/json' } });
      const context = `${label(route)} ${input.kind}: ${input.payload.slice(0, 160)} → ${reply.status} ${reply.body.slice(0, 200)}`;
      if (input.mustRefuse) expect(reply.status, context).toBeGreaterThanOrEqual(400);
      // The probe always follows the store, also when an assertion fails (fast-check then shrinks
      // the input and runs it again).
      const before = probe;
      const at = reply.status < 400 ? readBack(api, route, url, reply) : undefined;
      // Work the write queued (an import, an export) ends first: it changes the tenant by design.
      const queued = at === undefined ? undefined : queuedWork(at, reply);
      if (queued) await settle(owner, queued);
      probe = await changeProbe(app, orgId);
      if (reply.status >= 400) {
        expect(probe === before, `refused, yet wrote: ${context}\n${firstDifference(before, probe)}`).toBe(true);
        return reply;
      }
      accepted++;
      // A webhook endpoint's `secret` is shown only in the answer that made it, never read back; the
      // progress of queued work has moved on since the answer.
      if (at) {
        // Read back, what was acknowledged (a read may carry more: a thread its messages).
        const full = json(await owner.call('GET', at)).data;
        const acknowledged = { ...json(reply).data, secret: undefined };
        const read = Object.fromEntries(Object.keys(acknowledged).map((key) => [key, full[key]]));
        if (queued) expect(withoutProgress(read), `reads back as acknowledged: ${context}`).toEqual(withoutProgress(acknowledged));
        else expect(read, `reads back as acknowledged: ${context}`).toEqual(acknowledged);
      }
      return reply;
    };
    /**
     * The whole snapshot now (and the probe), and a check that nothing changed it since, made when
     * no input was accepted in between.
     */
    const whole = async () => {
      probe = await changeProbe(app, orgId);
      const [before, acceptedBefore] = [await snapshot(api, owner), accepted];
      return async (what: string) => {
        if (accepted > acceptedBefore) return;
        const after = await snapshot(api, owner);
        expect(after === before, `${label(route)}: ${what} changed the tenant's data\n${firstDifference(before, after)}`).toBe(true);
      };
    };
    return { owner, schema, references, check, whole };
  }

  if (withBody.length > 0) describe('every mutation kind and every boundary value (enumerated)', () => {
    for (const route of withBody) {
      it(label(route), async () => {
        const { owner, schema, references, check, whole } = await bodyTarget(route);
        // The route's own valid body wins: its references agree with each other (a stage of its pipeline).
        const base = async () => ({ ...references, ...(await bodyFor(api, owner, route) as Record<string, unknown>) });
        const sent = new Set<Family>();
        const cases: HostileBody[] = [];
        for (const make of enumeratedBodies(schema, base)) cases.push(await make());
        const send = async (input: HostileBody) => {
          const reply = await check(input);
          sent.add(input.family);
          enumerated.bodies++;
          if (input.family === 'valid' && NO_PROVIDER_YET.has(label(route))) expect(reply.status, `a valid body waits for a provider: ${input.payload.slice(0, 200)}`).toBe(503);
          else if (input.family === 'valid' && !ONE_TIME_CODES.has(label(route))) expect(reply.status, `a valid body is accepted: ${input.payload.slice(0, 200)} → ${reply.body.slice(0, 200)}`).toBeLessThan(300);
        };
        // The inputs that must be refused go first, between two whole snapshots: none of them may
        // change anything, whether or not the write path would have recorded it.
        const unchanged = await whole();
        for (const input of cases.filter((c) => c.mustRefuse)) await send(input);
        await unchanged('an input that must be refused');
        for (const input of cases.filter((c) => !c.mustRefuse)) await send(input);
        expect([...sent].sort(), 'every mutation kind that applies was sent').toEqual(familiesFor(schema).sort());
        enumerated.bodyRoutes++;
      }, 120_000);
    }
  });

  if (withBody.length > 0) describe('generated and mutated bodies (random, on top)', () => {
    for (const route of withBody) {
      it(label(route), async () => {
        const { schema, references, check, whole } = await bodyTarget(route);
        const unchanged = await whole();
        await fc.assert(fc.asyncProperty(hostileBody(schema, references), async (input) => {
          await check(input);
        }), fuzz);
        await unchanged('a refused random input');
      }, FUZZ_TIMEOUT);
    }
  });

  if (withBody.length > 0) describe('bodies no parser should accept, and an empty one', () => {
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

  if (reads.length > 0) describe('every bound, key form and raw value of every query parameter (enumerated)', () => {
    for (const route of reads) {
      it(label(route), async () => {
        const { owner, url } = await fixture(route);
        for (const input of enumeratedQueries(queryParams(route))) {
          figures.hostileInputs++;
          const reply = await owner.call('GET', `${url}?${input.query}`);
          const context = `${label(route)}?${input.query.slice(0, 160)} (${input.kind}) → ${reply.status} ${reply.body.slice(0, 200)}`;
          expect([200, 400, 404, 422].includes(reply.status) || providerNotConfigured(reply), context).toBe(true);
          if (input.mustRefuse) expect([400, 422].includes(reply.status), `out of bounds, yet ${context}`).toBe(true);
          enumerated.queries++;
        }
        enumerated.queryRoutes++;
      }, 60_000);
    }
  });

  if (reads.length > 0) describe('hostile query strings (random, on top)', () => {
    for (const route of reads) {
      it(label(route), async () => {
        const { owner, url } = await fixture(route);
        await fc.assert(fc.asyncProperty(hostileQuery(queryParams(route)), async ({ query }) => {
          figures.hostileInputs++;
          // Streams are asked for by Accept only; a hostile query must still answer, not hang.
          const reply = await owner.call('GET', `${url}?${query}`);
          expect([200, 400, 404, 422].includes(reply.status) || providerNotConfigured(reply), `${label(route)}?${query} → ${reply.status} ${reply.body.slice(0, 200)}`).toBe(true);
        }), fuzz);
      }, FUZZ_TIMEOUT);
    }
  });

  const withIds = routes.filter((r) => r.params.length > 0);
  if (withIds.length > 0) {
    describe('hostile ids in paths', () => {
      it('answers every hostile id on every route of the shard with a 4xx and changes nothing', async () => {
        const owner = (await freshOrg(app, 'P')).live;
        for (const r of guarded(api)) await paramsFor(api, owner, r);
        const before = await snapshot(api, owner);
        for (const route of withIds) {
          const params = await paramsFor(api, owner, route);
          const body = await bodyFor(api, owner, route);
          for (const name of route.params) {
            for (const id of HOSTILE_IDS) {
              figures.hostileInputs++;
              const path = route.url.replace(/:(\w+)/g, (_, p: string) => (p === name ? id : encodeURIComponent(params[p])));
              // A dot-segment id makes the URL another documented route's (`/v1/deals/../contacts` is
              // `/v1/contacts` to every client): that request is the other route's, answered as such.
              if (isAnotherRoute(api, route, path)) continue;
              const reply = await owner.call(route.method, path, { body });
              expect(reply.status, `${route.method} ${path} → ${reply.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
            }
          }
        }
        expect(await snapshot(api, owner)).toBe(before);
      });
    });
  }
}
