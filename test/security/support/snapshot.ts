// What a tenant can see, as one string: every collection read (first 200 items and the exact
// totals) and every object the actor made, read back by id. Equal snapshots before and after a
// refused request mean the request changed nothing the tenant owns.
import { canonicalJson } from '../../../src/platform/canonical-json.ts';
import { accepts, answersJson, collectionReads, fill, guarded, type Api, type ApiRoute } from './api.ts';
import type { Actor } from './actors.ts';
import { routeFactoryKey } from './factories.ts';

/** Fields that change on reads by design: key use is stamped at authentication; a deal's time in its stage counts up. */
const VOLATILE = new Set(['last_used_at', 'seconds_in_stage']);
/** Reads that change in the background by design: workers attempt and retry webhook deliveries. */
const BACKGROUND = /\/deliveries$/;

function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !VOLATILE.has(k)).map(([k, v]) => [k, stable(v)]));
  }
  return value;
}

export async function snapshot(api: Api, actor: Actor): Promise<string> {
  // A download (text/csv) is compared as its text; errors are JSON whatever the route answers.
  const read = async (route: ApiRoute, url: string) => {
    const reply = await actor.call('GET', url);
    const json = answersJson(route) || reply.status >= 400;
    return [url, reply.status, json ? stable(JSON.parse(reply.body)) : reply.body];
  };
  const reads: Array<[ApiRoute, string]> = collectionReads(api).map((route) => [route, accepts(route, 'limit') ? `${route.url}?limit=200` : route.url]);
  const byId = guarded(api).filter((r) => r.method === 'GET' && r.params.length > 0);
  for (const [key, made] of actor.made) {
    const params = await made;
    for (const route of byId) if (routeFactoryKey(route) === key && !BACKGROUND.test(route.url)) reads.push([route, fill(route.url, params)]);
  }
  // Reads only, taken when no request of the tenant is in flight: sent together, kept in order.
  return canonicalJson(await Promise.all(reads.map(([route, url]) => read(route, url))));
}

/** Where two snapshots first differ, for failure messages. */
export function firstDifference(before: string, after: string): string {
  let i = 0;
  while (i < before.length && before[i] === after[i]) i++;
  if (i === before.length && i === after.length) return 'no difference';
  const from = Math.max(0, i - 200);
  return `before: …${before.slice(from, i + 200)}…\nafter:  …${after.slice(from, i + 200)}…`;
}
