// What a key may be created or changed into: known scopes only, an expiry in the future, agency
// keys only for agencies, and scopes that only ever narrow.
import type { FastifyInstance } from 'fastify';
import type { AuthedKey } from '../../platform/auth.ts';
import { badRequest, forbidden } from '../../platform/errors.ts';
import { nowSeconds } from '../../platform/ids.ts';
import { grants, normalizeScopes, requiredScope, scopeCatalog } from '../../platform/scopes.ts';

export interface CatalogEntry {
  scope: string;
  description: string;
  routes: string[];
}

const catalogs = new WeakMap<FastifyInstance, CatalogEntry[]>();

/** The scopes a key can hold and the routes each opens, from the app's route table (built once). */
export function catalogOf(app: FastifyInstance): CatalogEntry[] {
  let catalog = catalogs.get(app);
  if (catalog) return catalog;
  const routes = app.routeTable.filter((r) => !r.public);
  catalog = scopeCatalog(routes).map((scope) => {
    const opened = routes.filter((r) => requiredScope(r.method, r.url) === scope).map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`);
    if (scope === '*') return { scope, description: 'Everything, including key management and agency grants (/auth/v1)', routes: opened };
    const [group, access] = scope.split(':');
    const description = access === 'read'
      ? `Read ${group}`
      : `Create, change and delete ${group} (includes ${group}:read)`;
    return { scope, description, routes: opened };
  });
  catalogs.set(app, catalog);
  return catalog;
}

/** Known scopes, normalized; 400 naming the first unknown one. */
export function checkScopes(app: FastifyInstance, scopes: readonly string[]): string[] {
  const known = new Set(catalogOf(app).map((c) => c.scope));
  const unknown = scopes.find((s) => !known.has(s));
  if (unknown !== undefined) throw badRequest(`Unknown scope: ${unknown.slice(0, 100)}; GET /auth/v1/scopes lists the scopes`, 'scopes');
  return normalizeScopes(scopes);
}

export function checkExpiry(expiresAt: number | undefined): number | null {
  if (expiresAt === undefined) return null;
  if (expiresAt <= nowSeconds()) throw badRequest('expires_at must be in the future (unix seconds)', 'expires_at');
  return expiresAt;
}

export function checkAgency(caller: AuthedKey, isAgency: boolean | undefined): boolean {
  if (isAgency && !caller.orgIsAgency) throw forbidden('Only an agency organization can create agency keys');
  return isAgency === true;
}

/** Scopes only narrow: each new scope must be held by the key and by the caller. */
export function checkNarrowing(current: readonly string[], caller: readonly string[], next: readonly string[]): void {
  for (const scope of next) {
    if (!grants(current, scope) || !grants(caller, scope)) {
      throw forbidden(`Scopes can only be narrowed: ${scope} is not within the key's current scopes; create a new key instead`);
    }
  }
}
