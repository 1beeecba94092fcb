// Key scopes of a shard's routes (shards.ts): every route refuses a key without the scope it needs
// (naming it, changing nothing) and admits a key holding just that scope. The scope each route
// needs is worked out here from its path and method, independently of the service's own derivation.
import { afterAll, describe, expect, it } from 'vitest';
import { capturedLogs, testApp } from '../../helpers/app.ts';
import { actor, freshOrg, type Actor } from '../support/actors.ts';
import { fill, guarded, loadApi, type Api, type ApiRoute } from '../support/api.ts';
import { bodyFor, paramsFor } from '../support/factories.ts';
import { json } from '../support/reply.ts';
import { expectNoSecretsInLogs } from '../support/secrets.ts';
import { snapshot } from '../support/snapshot.ts';
import { label, UNLIMITED } from './hostile-app.ts';
import { shardRoutes, type Shard } from './shards.ts';

/** The scope a route needs: `<first segment after /v1>:<read|write>` (a search: `<object>:read`); `*` for /auth/v1 (the catalog needs none). */
export function needed(route: ApiRoute): string | null {
  if (route.method === 'GET' && route.url === '/auth/v1/scopes') return null;
  if (route.url.startsWith('/auth/v1/')) return '*';
  // A search of one object reads that object.
  const searched = /^\/v1\/search\/([a-z_]+)$/.exec(route.url)?.[1];
  if (searched) return `${searched}:read`;
  const group = route.url.split('/')[2];
  return `${group}:${route.method === 'GET' ? 'read' : 'write'}`;
}

/**
 * Routes that act on the records of the object their body names, so the key needs that object's
 * scope as well (else `imports:write` alone would write contacts): an import writes them, an export
 * reads them.
 */
const OBJECT_SCOPE: Record<string, (body: { object: string }) => string> = {
  'POST /v1/imports': (body) => `${body.object}:write`,
  'POST /v1/exports': (body) => `${body.object}:read`,
};

/** The resource groups the route table serves under /v1. */
export const groupsOf = (api: Api) => [...new Set(guarded(api).filter((r) => r.url.startsWith('/v1/')).map((r) => r.url.split('/')[2]))].sort();
export const everyScope = (api: Api) => ['*', ...groupsOf(api).flatMap((g) => [`${g}:read`, `${g}:write`])];

/** Scopes that grant `scope`: itself, `*`, and for a read the group's write. */
const granting = (scope: string) => new Set(['*', scope, ...(scope.endsWith(':read') ? [scope.replace(/:read$/, ':write')] : [])]);

/** Defines the scopes walk of `shard`'s routes in the calling test file. */
export async function scopesWalk(shard: Shard): Promise<void> {
  const app = await testApp({ env: UNLIMITED });
  const api = await loadApi(app);
  afterAll(async () => {
    expectNoSecretsInLogs(capturedLogs);
    await app.close();
  });
  const routes = shardRoutes(api, shard);

  describe(`every route${shard.group === 'all' ? '' : ` of ${shard.group}`}${shard.parts > 1 ? ` (part ${shard.part} of ${shard.parts})` : ''}`, () => {
    it('refuses a key without its scope, naming the scope and changing nothing; admits a key with just that scope', async () => {
      const org = await freshOrg(app, 'S');
      const keys = new Map<string, Actor>();
      const keyWith = async (scopes: string[]): Promise<Actor> => {
        const id = scopes.join(' ');
        let key = keys.get(id);
        if (!key) {
          const reply = await org.live.call('POST', '/auth/v1/api-keys', { body: { name: 'restricted', scopes } });
          expect(reply.status, reply.body).toBe(201);
          expect(json(reply).data.scopes).toEqual([...scopes].sort());
          key = actor(app, `key with ${id}`, org.orgId, 'live', json(reply).data.api_key_token);
          keys.set(id, key);
        }
        return key;
      };
      const lacking = (scope: string | null) => everyScope(api).filter((s) => s !== '*' && (scope === null || !granting(scope).has(s)));
      // Objects and keys first: making them changes the snapshot (key listing, events).
      for (const route of routes) {
        await paramsFor(api, org.live, route);
        await bodyFor(api, org.live, route);
        await keyWith(lacking(needed(route)));
      }
      const before = await snapshot(api, org.live);
      let refusals = 0;
      for (const route of routes) {
        const scope = needed(route);
        const params = await paramsFor(api, org.live, route);
        const body = await bodyFor(api, org.live, route);
        const without = await keyWith(lacking(scope));
        const reply = await without.call(route.method, fill(route.url, params), { body });
        if (scope === null) {
          expect(reply.status, `${label(route)} → ${reply.body}`).toBe(200);
          continue;
        }
        expect(reply.status, `${label(route)} without ${scope} → ${reply.body}`).toBe(403);
        expect(json(reply).detail, label(route)).toBe(`API key lacks scope ${scope}`);
        refusals++;
      }
      // Every route but the catalog (which needs no scope) was refused.
      expect(refusals).toBe(routes.filter((r) => needed(r) !== null).length);
      expect(await snapshot(api, org.live), 'a refused request changed data').toBe(before);

      // Admitted with exactly the scope (and a write scope admits the group's reads), plus the scope
      // of the object the body names, without which it is refused naming that one.
      for (const route of routes) {
        const scope = needed(route);
        if (scope === null) continue;
        const holders = [[scope], ...(scope.endsWith(':read') ? [[scope.replace(/:read$/, ':write')]] : [])];
        for (const held of holders) {
          const call = async (scopes: string[]) => (await keyWith(scopes)).call(route.method, fill(route.url, await paramsFor(api, org.live, route)), { body: await bodyFor(api, org.live, route) });
          const objectScope = OBJECT_SCOPE[label(route)]?.(await bodyFor(api, org.live, route) as { object: string });
          if (objectScope) {
            const refused = await call(held);
            expect(refused.status, `${label(route)} with ${held} alone → ${refused.body}`).toBe(403);
            expect(json(refused).detail, label(route)).toBe(`API key lacks scope ${objectScope}`);
          }
          const reply = await call(objectScope ? [...held, objectScope] : held);
          expect(reply.status === 403 && json(reply).detail.startsWith('API key lacks scope'), `${label(route)} with ${held} ${objectScope ?? ''} → ${reply.status} ${reply.body}`).toBe(false);
        }
      }
    });
  });
}
