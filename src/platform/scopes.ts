// Key scopes, derived from the route table so that a resource group added later gets its scopes
// with no hand-kept list. A route's group is the first path segment after its base
// (`/v1/contacts/:id` → contacts; sub-resources belong to their parent: `/v1/lists/:id/entries` →
// lists, `/v1/usage/transactions` → usage); its access is `read` for GET and HEAD, `write` for every
// other method. Key management and agency grants (`/auth/v1/…`) need the full scope `*`; the scope
// catalog itself (`GET /auth/v1/scopes`) is open to every key.
import type { RouteEntry } from './route-table.ts';
import { ALL_SCOPES } from './credentials.ts';

const DATA_BASE = '/v1/';
const KEY_BASE = '/auth/v1/';
/** Routes every authenticated key may call, whatever its scopes. */
const OPEN = new Set(['GET /auth/v1/scopes', 'HEAD /auth/v1/scopes']);

export type Access = 'read' | 'write';

export const accessOf = (method: string): Access => (method === 'GET' || method === 'HEAD' ? 'read' : 'write');

/** The resource group of a data route (`contacts`), or undefined outside the data API. */
export function groupOf(url: string): string | undefined {
  if (!url.startsWith(DATA_BASE)) return undefined;
  const segment = url.slice(DATA_BASE.length).split('/')[0];
  return segment && !segment.startsWith(':') && !segment.includes('.') ? segment : undefined;
}

const required = new Map<string, string | null>();

/** The scope a route needs: `<group>:<access>`, `*` for key management, null when none. */
export function requiredScope(method: string, url: string): string | null {
  const route = `${method} ${url}`;
  let scope = required.get(route);
  if (scope === undefined) {
    const group = groupOf(url);
    // A search of one object reads that object: POST /v1/search/contacts needs contacts:read.
    const searched = /^\/v1\/search\/([a-z_]+)$/.exec(url)?.[1];
    if (searched) scope = `${searched}:read`;
    else if (group) scope = `${group}:${accessOf(method)}`;
    else scope = url.startsWith(KEY_BASE) && !OPEN.has(route) ? ALL_SCOPES : null;
    required.set(route, scope);
  }
  return scope;
}

/** Whether `held` grants `scope`: `*` grants all, and `<group>:write` grants `<group>:read` too. */
export function grants(held: readonly string[], scope: string): boolean {
  if (held.includes(ALL_SCOPES) || held.includes(scope)) return true;
  return scope.endsWith(':read') && held.includes(`${scope.slice(0, -':read'.length)}:write`);
}

/** Every scope a key can hold, from the routes the app serves: `*`, then `<group>:read|write` by group. */
export function scopeCatalog(routes: readonly RouteEntry[]): string[] {
  const groups = new Set<string>();
  for (const route of routes) {
    const group = route.public ? undefined : groupOf(route.url);
    if (group) groups.add(group);
  }
  return [ALL_SCOPES, ...[...groups].sort().flatMap((g) => [`${g}:read`, `${g}:write`])];
}

/** The scopes named once each, sorted; `*` alone when it is among them (it holds every other). */
export function normalizeScopes(scopes: readonly string[]): string[] {
  return scopes.includes(ALL_SCOPES) ? [ALL_SCOPES] : [...new Set(scopes)].sort();
}
