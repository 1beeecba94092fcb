// Tenant isolation of a shard's routes (shards.ts): every route that takes an id is called on
// another tenant's real objects with every kind of wrong credential, and must answer exactly as for
// an id that does not exist, leaving the owner's data unchanged. The checks that are not about one
// route (credentials, X-Org-Id, cursors, idempotency keys, ids in bodies, agency keys) are in
// isolation.test.ts.
import { afterAll, describe, expect, it } from 'vitest';
import { capturedLogs, isPostgres, testApp } from '../../helpers/app.ts';
import { freshOrg, type Actor, type Org, type Params } from '../support/actors.ts';
import { absentLike, fillRoute, loadApi, type Api, type ApiRoute } from '../support/api.ts';
import { bodyFor, factoryFor, ORG_WIDE_FOR_LIVE_KEYS, paramsFor } from '../support/factories.ts';
import { reportFigures } from '../support/figures.ts';
import { providerNotConfigured, type Reply } from '../support/reply.ts';
import { expectNoSecretsInLogs } from '../support/secrets.ts';
import { snapshot } from '../support/snapshot.ts';
import { label, UNLIMITED } from './hostile-app.ts';
import { shardFile, shardRoutes, type Shard } from './shards.ts';

/** Calls `route` as `actor` with these params and a valid body of the actor's own. */
export async function callRoute(api: Api, actor: Actor, route: ApiRoute, params: Params, headers?: Record<string, string>): Promise<Reply> {
  return actor.call(route.method, fillRoute(route, params), { body: await bodyFor(api, actor, route, params), headers });
}

const absent = (params: Params): Params => Object.fromEntries(Object.entries(params).map(([k, v]) => [k, absentLike(v)]));

const orgWide = (route: ApiRoute) => ORG_WIDE_FOR_LIVE_KEYS.some((prefix) => route.url.startsWith(prefix));

/** Everyone who must not reach `owner`'s objects through `route`. */
function intruders(route: ApiRoute, owner: Actor, a: Org, b: Org): Actor[] {
  const sameOrgOtherMode = owner.mode === 'live' ? a.test : a.live;
  const out = [b.live, b.test];
  if (!(orgWide(route) && sameOrgOtherMode.mode === 'live')) out.push(sameOrgOtherMode);
  return out;
}

/** Every proper, non-empty subset of the route's params (the mixed-ownership cases). */
function mixes(names: string[]): string[][] {
  const out: string[][] = [];
  for (let mask = 1; mask < (1 << names.length) - 1; mask++) out.push(names.filter((_, i) => mask & (1 << i)));
  return out;
}

/** Defines the isolation walk of `shard`'s routes in the calling test file. */
export async function isolationWalk(shard: Shard): Promise<void> {
  const app = await testApp({ env: UNLIMITED });
  const api = await loadApi(app);
  afterAll(async () => {
    reportFigures(shardFile(shard), isPostgres() ? 'postgres' : 'sqlite');
    expectNoSecretsInLogs(capturedLogs);
    await app.close();
  });

  async function expectLikeAbsent(intruder: Actor, route: ApiRoute, foreign: Params, missing: Params, what: string): Promise<void> {
    const seen = await callRoute(api, intruder, route, foreign);
    const none = await callRoute(api, intruder, route, missing);
    // A test helper refuses a live key before it looks at the ids (403, the same for both).
    expect(seen.status, `${intruder.label}: ${label(route)} on ${what} → ${seen.body}`).toBe(route.testOnly && intruder.mode === 'live' ? 403 : 404);
    expect(seen.body, `${intruder.label}: ${label(route)} on ${what} differs from an absent id`).toBe(none.body);
  }

  describe('another tenant\'s ids answer exactly like ids that do not exist', () => {
    for (const route of shardRoutes(api, shard)) {
      it(label(route), async () => {
        factoryFor(route);
        const [a, b] = [await freshOrg(app, 'A'), await freshOrg(app, 'B')];
        for (const owner of [a.live, a.test]) {
          const owned = await paramsFor(api, owner, route);
          const before = await snapshot(api, owner);
          for (const intruder of intruders(route, owner, a, b)) {
            await expectLikeAbsent(intruder, route, owned, absent(owned), `${owner.label}'s object`);
            if (route.params.length > 1) {
              const own = await paramsFor(api, intruder, route);
              for (const foreignNames of mixes(route.params)) {
                const pick = (from: Params) => Object.fromEntries(route.params.map((p) => [p, foreignNames.includes(p) ? from[p] : own[p]]));
                await expectLikeAbsent(intruder, route, pick(owned), pick(absent(owned)), `${owner.label}'s ${foreignNames.join('+')} with its own other params`);
              }
            }
          }
          expect(await snapshot(api, owner), `${owner.label}'s data changed`).toBe(before);
        }
        // Control: the owner's own request on a fresh object is served (not refused for its id).
        for (const owner of [a.live, a.test]) {
          const reply = await callRoute(api, owner, route, await paramsFor(api, owner, route, { fresh: true }));
          // Served: done (or queued), or refused for what it asks (credits, a state), or for a provider the service lacks
          // (503 provider_not_configured); a test helper refuses a live key whatever it names.
          const served = route.testOnly && owner.mode === 'live' ? reply.status === 403 : [200, 201, 202, 402, 409].includes(reply.status) || providerNotConfigured(reply);
          expect(served, `control ${owner.label} ${label(route)} → ${reply.status} ${reply.body}`).toBe(true);
        }
      });
    }
  });
}
