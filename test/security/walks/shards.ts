// The route walks (hostile input, isolation, scopes) run in shards: one test file per suite and
// resource group, or per part of a group with many routes, so the pool runs them side by side and a
// group's cost stays its own (the cheap scopes walk: parts of the whole route table). The files are generated from the route table (generate.ts, checked by
// `npm run lint`); a group without its files fails the isolation suite's shard check by name.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bodySchema, guarded, type Api, type ApiRoute } from '../support/api.ts';

export const SUITES = ['hostile-input', 'isolation', 'scopes'] as const;
export type Suite = (typeof SUITES)[number];

export const SHARD_DIR = join(import.meta.dirname, '..', 'shards');

/** The resource group of a route: the segment after /v1 (`/v1/deals/:id` → deals); `auth` for /auth/v1. */
export const groupOf = (route: Pick<ApiRoute, 'url'>) => (route.url.startsWith('/auth/') ? 'auth' : route.url.split('/')[2]);

/**
 * How much one shard of a suite walks at most (a group with more is split in parts), so a shard
 * stays well under a minute on this machine; measured in `weight`s.
 */
export const WEIGHT_PER_SHARD: Record<Suite, number> = { 'hostile-input': 48, isolation: 24, scopes: 80 };

/**
 * What a suite walks of a route, about in proportion to its time (0: the suite does not walk it).
 * The hostile-input walk sends three sets of bodies to a route with one (enumerated, random, no
 * parser's), two sets of query strings to a read, and hostile ids to a route with ids.
 */
export function weight(api: Api, suite: Suite, route: ApiRoute): number {
  if (suite === 'hostile-input') return (bodySchema(api, route) ? 3 : 0) + (route.method === 'GET' ? 2 : 0) + (route.params.length > 0 ? 1 : 0);
  if (suite === 'isolation') return route.params.length > 0 ? 1 : 0;
  return 1;
}

/**
 * Suites whose walk of a route costs so little that a file per group would cost more to start than
 * to run: their shards are parts of the whole route table (`scopes.all.1of2.test.ts`).
 */
const WHOLE_TABLE: ReadonlySet<Suite> = new Set(['scopes']);
const ALL = 'all';

export interface Shard {
  suite: Suite;
  group: string;
  /** 1-based part of the group, and the number of parts. */
  part: number;
  parts: number;
}

export const shardFile = (s: Shard) => `${s.suite}.${s.group}${s.parts > 1 ? `.${s.part}of${s.parts}` : ''}.test.ts`;

/** The shards the route table asks for: each group's routes in parts of at most WEIGHT_PER_SHARD. */
export function shardsOf(api: Api): Shard[] {
  const out: Shard[] = [];
  for (const suite of SUITES) {
    const groups = new Map<string, number>();
    const key = (route: ApiRoute) => (WHOLE_TABLE.has(suite) ? ALL : groupOf(route));
    for (const route of guarded(api)) groups.set(key(route), (groups.get(key(route)) ?? 0) + weight(api, suite, route));
    for (const [group, total] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
      if (total === 0) continue;
      const parts = Math.ceil(total / WEIGHT_PER_SHARD[suite]);
      for (let part = 1; part <= parts; part++) out.push({ suite, group, part, parts });
    }
  }
  return out;
}

/** The shard files present. */
export const shardFiles = () => readdirSync(SHARD_DIR).filter((f) => f.endsWith('.test.ts')).sort();

/**
 * The routes of one shard: the group's routes the suite walks, in route-table order, dealt to the
 * parts by weight (a part's routes are consecutive) so each part walks about as much as the others.
 */
export function shardRoutes(api: Api, shard: Shard): ApiRoute[] {
  const routes = guarded(api).filter((r) => (shard.group === ALL || groupOf(r) === shard.group) && weight(api, shard.suite, r) > 0);
  const total = routes.reduce((sum, r) => sum + weight(api, shard.suite, r), 0);
  let before = 0;
  return routes.filter((r) => {
    const w = weight(api, shard.suite, r);
    const middle = before + w / 2;
    before += w;
    return Math.min(shard.parts, Math.floor((middle / total) * shard.parts) + 1) === shard.part;
  });
}
