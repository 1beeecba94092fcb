// Tenant isolation, generated from the route table: every route refuses missing and foreign
// credentials (401/403) and an X-Org-Id it may not act for, leaving the owner's data unchanged.
// Cursors, idempotency keys and ids inside bodies and filters never cross tenants either. Every
// route is documented, and every resource group has its shards of the route walks (walks/shards.ts):
// the walk of each route that takes an id on another tenant's objects runs there (walks/isolation.ts).
import { afterAll, describe, expect, it } from 'vitest';
import { capturedLogs, isPostgres, testApp } from '../helpers/app.ts';
import { absentLike, accepts, bodySchema, fill, fillRoute, guarded, isDocsRoute, loadApi, queryParams, type ApiRoute } from './support/api.ts';
import { actor, freshOrg, send, type Actor, type Org } from './support/actors.ts';
import { bodyFor, FACTORIES, make, paramsFor, referenceValue, routeFactoryKey } from './support/factories.ts';
import { reportFigures } from './support/figures.ts';
import { json, providerNotConfigured } from './support/reply.ts';
import { isReference } from './support/schema-values.ts';
import { expectNoSecretsInLogs } from './support/secrets.ts';
import { snapshot } from './support/snapshot.ts';
import { label, UNLIMITED } from './walks/hostile-app.ts';
import { callRoute } from './walks/isolation.ts';
import { shardFile, shardFiles, shardsOf } from './walks/shards.ts';

const app = await testApp({ env: UNLIMITED });
const api = await loadApi(app);

const MISSING = 'missing Authorization header';
const JWT = 'JWT token provided instead of API key';
const INVALID = 'API key not associated with an organization';
const A_JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyXzEyMyIsImV4cCI6NDEwMjQ0NDgwMH0.c2lnbmF0dXJlLW5vdC1jaGVja2Vk';

/** Operational endpoints outside the API they describe: health, the document itself, the reference. */
const OPERATIONAL = new Set(['GET /healthz', 'GET /v1/openapi.json']);

const idRoutes = guarded(api).filter((r) => r.params.length > 0);

afterAll(async () => {
  reportFigures(import.meta.filename, isPostgres() ? 'postgres' : 'sqlite');
  expectNoSecretsInLogs(capturedLogs);
  await app.close();
});

/** The identifier of a created object, whatever its field is called. */
const idOf = (data: Record<string, string>) => data.id ?? data.api_key_id ?? data.org_id;

describe('the route table and the OpenAPI document', () => {
  it('documents every route and serves every documented route', () => {
    const served = new Set(api.routes.map((r) => `${r.method} ${r.path}`).filter((r) => !OPERATIONAL.has(r)));
    const documented = new Set<string>();
    for (const [path, operations] of Object.entries(api.document.paths)) {
      for (const method of Object.keys(operations)) {
        if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) documented.add(`${method.toUpperCase()} ${path}`);
      }
    }
    expect([...served].filter((r) => !documented.has(r)), 'routes missing from /v1/openapi.json').toEqual([]);
    expect([...documented].filter((r) => !served.has(r)), 'documented routes that do not exist').toEqual([]);
    expect(app.routeTable.some((r) => isDocsRoute(r.url)), 'the reference is served').toBe(true);
    expect(idRoutes.length).toBeGreaterThan(0);
  });

  it('has a factory for every route with an id, so none escapes the isolation walk', () => {
    const missing = idRoutes.filter((r) => !FACTORIES[routeFactoryKey(r)!]).map(label);
    expect(missing, 'add factories in test/security/support/factories.ts').toEqual([]);
  });

  it('has the shard files of the route walks that the route table asks for, so no route escapes them', () => {
    expect(shardFiles(), 'write them: npx node test/security/walks/generate.ts').toEqual(shardsOf(api).map(shardFile).sort());
  });
});

describe('credentials', () => {
  it('refuses missing, JWT, revoked and non-Bearer credentials on every route, changing nothing', async () => {
    const a = await freshOrg(app, 'A');
    const created = json(await a.live.call('POST', '/auth/v1/api-keys', { body: { name: 'to revoke' } })).data;
    expect((await a.live.call('DELETE', `/auth/v1/api-keys/${created.api_key_id}`)).status).toBe(200);
    const revoked: string = created.api_key_token;
    const credentials: Array<[string, Record<string, string>, string]> = [
      ['no key', {}, MISSING],
      ['empty header', { authorization: '' }, MISSING],
      ['a JWT', { authorization: `Bearer ${A_JWT}` }, JWT],
      ['a revoked key', { authorization: `Bearer ${revoked}` }, INVALID],
      ['Basic scheme', { authorization: `Basic ${Buffer.from(`${a.live.token}:`).toString('base64')}` }, INVALID],
      ['Token scheme', { authorization: `Token ${a.live.token}` }, INVALID],
      ['no scheme', { authorization: a.live.token }, INVALID],
      ['Bearer without token', { authorization: 'Bearer ' }, INVALID],
      ['key with a suffix', { authorization: `Bearer ${a.live.token}x` }, INVALID],
      ['two tokens', { authorization: `Bearer ${a.live.token} ${a.test.token}` }, INVALID],
    ];
    for (const route of guarded(api)) await paramsFor(api, a.live, route);
    const before = await snapshot(api, a.live);
    for (const route of guarded(api)) {
      const params = await paramsFor(api, a.live, route);
      const body = await bodyFor(api, a.live, route);
      for (const [name, headers, detail] of credentials) {
        const reply = await send(app, route.method, fill(route.url, params), { body, headers });
        expect(reply.status, `${name} on ${label(route)}`).toBe(401);
        expect(json(reply).detail, `${name} on ${label(route)}`).toBe(detail);
      }
    }
    expect(await snapshot(api, a.live)).toBe(before);
  });

  it('refuses X-Org-Id naming another organization on every route and never switches', async () => {
    const [a, b] = [await freshOrg(app, 'A'), await freshOrg(app, 'B')];
    for (const route of guarded(api)) await paramsFor(api, a.live, route);
    const before = await snapshot(api, a.live);
    for (const route of guarded(api)) {
      const params = await paramsFor(api, a.live, route);
      for (const caller of [b.live, b.test]) {
        const reply = await callRoute(api, caller, route, params, { 'x-org-id': a.orgId });
        expect(reply.status, `${caller.label} naming A on ${label(route)} → ${reply.body}`).toBe(403);
        expect(json(reply)).toEqual({ type: 'permission_denied', detail: 'X-Org-Id does not match the organization of the API key (acting for another organization needs an agency key)' });
      }
      if (route.method === 'GET') {
        const own = await callRoute(api, a.live, route, params, { 'x-org-id': a.orgId });
        // Served (a route that needs a provider the tenant has not configured answers 503 by design).
        expect(own.status === 200 || providerNotConfigured(own), `own X-Org-Id on ${label(route)} → ${own.status} ${own.body}`).toBe(true);
      }
    }
    expect(await snapshot(api, a.live)).toBe(before);
  });
});

describe('cursors, idempotency keys and ids in bodies and filters', () => {
  it('never honours a cursor issued to another tenant, mode or endpoint', async () => {
    const [a, b] = [await freshOrg(app, 'A'), await freshOrg(app, 'B')];
    const paged = guarded(api).filter((r) => r.method === 'GET' && accepts(r, 'cursor'));
    const cursors = new Map<ApiRoute, string>();
    for (const route of paged) {
      if (FACTORIES[route.url] && route.params.length === 0) for (let i = 0; i < 2; i++) await make(api, a.live, route.url, { fresh: true });
      const params = await paramsFor(api, a.live, route);
      const page = json(await a.live.call('GET', `${fill(route.url, params)}?limit=1`));
      if (page.next_cursor) cursors.set(route, page.next_cursor);
    }
    expect(cursors.size, 'routes that produced a cursor').toBeGreaterThanOrEqual(3);
    const anyCursor = [...cursors.values()][0];
    for (const route of paged) {
      const params = await paramsFor(api, a.live, route);
      const url = fill(route.url, params);
      const attempts: Array<[Actor, string, string]> = [[a.live, [...cursors.entries()].find(([r]) => r !== route)![1], 'another endpoint\'s cursor']];
      const own = cursors.get(route);
      if (own) attempts.push([b.live, own, 'A\'s cursor'], [b.test, own, 'A\'s cursor'], [a.test, own, 'the live key\'s cursor']);
      else attempts.push([b.live, anyCursor, 'A\'s cursor of another endpoint']);
      for (const [caller, cursor, what] of attempts) {
        const reply = await caller.call('GET', `${url}?cursor=${encodeURIComponent(cursor)}&limit=1`);
        const where = `${caller.label} with ${what} on ${label(route)} → ${reply.status} ${reply.body}`;
        if (reply.status === 404) expect(caller.orgId !== a.orgId || caller.mode !== 'live', where).toBe(true); // the parent id is foreign first
        else {
          expect(reply.status, where).toBe(400);
          expect(json(reply).type, where).toBe('bad_request');
        }
      }
    }
  });

  it('scopes Idempotency-Key to the tenant: another tenant\'s identical key executes on its own and never replays', async () => {
    const [a, b] = [await freshOrg(app, 'A'), await freshOrg(app, 'B')];
    const creates = guarded(api).filter((r) => r.method === 'POST' && r.params.length === 0 && FACTORIES[r.url]);
    expect(creates.length).toBeGreaterThanOrEqual(3);
    for (const route of creates) {
      const key = `shared-key-${route.url}`;
      const ownerBody = await bodyFor(api, a.live, route);
      const first = await a.live.call('POST', route.url, { body: ownerBody, headers: { 'idempotency-key': key } });
      expect(first.status, `${label(route)} → ${first.body}`).toBe(201);
      for (const other of [b.live, b.test, a.test]) {
        const own = await other.call('POST', route.url, { body: await bodyFor(api, other, route), headers: { 'idempotency-key': key } });
        expect(own.status, `${other.label} ${label(route)} → ${own.body}`).toBe(201);
        expect(own.headers['idempotent-replayed']).toBeUndefined();
        expect(idOf(json(own).data)).not.toBe(idOf(json(first).data));
        // The owner's exact request under the owner's key: executed in the caller's scope (or refused
        // for naming the owner's objects), never answered with the owner's stored response.
        const copy = await other.call('POST', route.url, { body: ownerBody, headers: { 'idempotency-key': `${key}-copy` } });
        expect(copy.headers['idempotent-replayed']).toBeUndefined();
        expect(copy.body).not.toBe(first.body);
        expect([201, 403, 404].includes(copy.status), `${other.label} copy of ${label(route)} → ${copy.status} ${copy.body}`).toBe(true);
      }
      const replay = await a.live.call('POST', route.url, { body: ownerBody, headers: { 'idempotency-key': key } });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe(first.body);
    }
  });

  it('answers another tenant\'s ids in bodies and filters like absent ids', async () => {
    const [a, b] = [await freshOrg(app, 'A'), await freshOrg(app, 'B')];
    const referenceFields = guarded(api).flatMap((r) => [...Object.keys(bodySchema(api, r)?.properties ?? {}), ...queryParams(r).map((p) => p.name)]).filter(isReference);
    for (const field of referenceFields) await referenceValue(api, a.live, field);
    const before = await snapshot(api, a.live);
    let bodyChecks = 0;
    let filterChecks = 0;
    for (const route of guarded(api)) {
      const properties = bodySchema(api, route)?.properties ?? {};
      for (const field of Object.keys(properties).filter(isReference)) {
        const foreign = await referenceValue(api, a.live, field);
        const missing = Array.isArray(foreign) ? foreign.map(absentLike) : absentLike(foreign);
        const params = await paramsFor(api, b.live, route);
        const base = (await bodyFor(api, b.live, route)) as Record<string, unknown>;
        const seen = await b.live.call(route.method, fillRoute(route, params), { body: { ...base, [field]: foreign } });
        const none = await b.live.call(route.method, fillRoute(route, params), { body: { ...base, [field]: missing } });
        expect(seen.status, `${label(route)} with A's ${field} → ${seen.body}`).toBe(404);
        expect(seen.body, `${label(route)} with A's ${field}`).toBe(none.body);
        bodyChecks++;
      }
      if (route.method !== 'GET') continue;
      for (const param of queryParams(route).filter((p) => isReference(p.name))) {
        const foreign = String(await referenceValue(api, a.live, param.name));
        const params = await paramsFor(api, b.live, route);
        // One page holds the whole answer: a next_cursor is bound to its filters, so it differs by design.
        const all = accepts(route, 'limit') ? '&limit=200' : '';
        const seen = await b.live.call('GET', `${fill(route.url, params)}?${param.name}=${foreign}${all}`);
        const none = await b.live.call('GET', `${fill(route.url, params)}?${param.name}=${absentLike(foreign)}${all}`);
        expect(seen.status, `${label(route)}?${param.name}=A's → ${seen.body}`).toBe(none.status);
        // A cursor is bound to the filters it pages, so the two differ by construction; all else must not.
        const uncursored = (body: string) => body.replace(/"next_cursor":"[^"]*"/g, '"next_cursor":"…"');
        expect(uncursored(seen.body), `${label(route)}?${param.name}=A's`).toBe(uncursored(none.body));
        filterChecks++;
      }
    }
    expect(bodyChecks, 'reference fields in bodies').toBeGreaterThanOrEqual(2);
    expect(filterChecks, 'reference filters').toBeGreaterThanOrEqual(1);
    const contact = await b.live.call('POST', '/v1/contacts', { body: { list_id: (await make(api, a.live, '/v1/lists')).id } });
    expect(contact.status).toBe(404);
    expect(json(contact).detail).toBe('List not found');
    expect(await snapshot(api, a.live)).toBe(before);
  });
});

describe('agency keys', () => {
  const NOT_LINKED = 'Organization not linked to this agency key';

  /** The agency keys of `org` (live and test), made through the API. */
  async function agencyKeys(org: Org): Promise<Actor[]> {
    const out: Actor[] = [];
    for (const owner of [org.live, org.test]) {
      const reply = await owner.call('POST', '/auth/v1/api-keys', { body: { name: 'agency key', mode: owner.mode, is_agency: true } });
      expect(reply.status, reply.body).toBe(201);
      out.push(actor(app, `${owner.label} agency key`, org.orgId, owner.mode, json(reply).data.api_key_token));
    }
    return out;
  }

  it('refuses an agency key naming an organization not linked to it, on every route, revealing nothing', async () => {
    const [a, b, c] = [await freshOrg(app, 'A'), await freshOrg(app, 'B'), await freshOrg(app, 'C')];
    // A is a client, but of agency C (both modes), never of B.
    for (const owner of [a.live, a.test]) {
      const code = json(await owner.call('POST', '/auth/v1/agency-grants')).data.grant_code;
      const agencyOwner = owner.mode === 'live' ? c.live : c.test;
      expect((await agencyOwner.call('POST', '/v1/agency/clients/link', { body: { grant_code: code } })).status).toBe(201);
    }
    // B's own clients, so that B's keys are agency keys with links of their own.
    for (const owner of [b.live, b.test]) await make(api, owner, '/v1/agency/clients');
    for (const route of guarded(api)) await paramsFor(api, a.live, route);
    const before = await snapshot(api, a.live);
    const testBefore = await snapshot(api, a.test);
    const absentOrg = absentLike(a.orgId);
    for (const intruder of await agencyKeys(b)) {
      for (const route of guarded(api)) {
        const params = await paramsFor(api, a.live, route);
        const seen = await callRoute(api, intruder, route, params, { 'x-org-id': a.orgId });
        const none = await callRoute(api, intruder, route, params, { 'x-org-id': absentOrg });
        expect(seen.status, `${intruder.label} naming A on ${label(route)} → ${seen.body}`).toBe(403);
        expect(json(seen).detail, `${intruder.label} naming A on ${label(route)}`).toBe(NOT_LINKED);
        expect(seen.body, `${intruder.label} on ${label(route)}: A answers unlike an organization that does not exist`).toBe(none.body);
      }
    }
    expect(await snapshot(api, a.live), 'A\'s live data changed').toBe(before);
    expect(await snapshot(api, a.test), 'A\'s test data changed').toBe(testBefore);
  });

  it('lets an agency key act for a linked client only in its own mode, on every route', async () => {
    const [a, b] = [await freshOrg(app, 'A'), await freshOrg(app, 'B')];
    const code = json(await a.live.call('POST', '/auth/v1/agency-grants')).data.grant_code;
    expect((await b.live.call('POST', '/v1/agency/clients/link', { body: { grant_code: code } })).status).toBe(201);
    const [agencyLive, agencyTest] = await agencyKeys(b);
    for (const route of guarded(api)) await paramsFor(api, a.test, route);
    const testBefore = await snapshot(api, a.test);
    for (const route of guarded(api)) {
      const reply = await callRoute(api, agencyTest, route, await paramsFor(api, a.test, route), { 'x-org-id': a.orgId });
      expect(reply.status, `${label(route)} → ${reply.body}`).toBe(403);
      expect(json(reply).detail).toBe(NOT_LINKED);
    }
    expect(await snapshot(api, a.test)).toBe(testBefore);
    // Control: the live agency key reads what A's live key reads.
    for (const route of guarded(api).filter((r) => r.method === 'GET' && r.params.length === 0 && r.url.startsWith('/v1/') && !r.url.startsWith('/v1/agency/'))) {
      const own = await a.live.call('GET', route.url);
      const asAgency = await agencyLive.call('GET', route.url, { headers: { 'x-org-id': a.orgId } });
      expect(asAgency.status, `${label(route)} → ${asAgency.body}`).toBe(own.status);
      expect(asAgency.body, label(route)).toBe(own.body);
    }
  });
});
