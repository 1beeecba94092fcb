// A tenant's connections to providers, read with their credentials opened, for the drivers
// (registry.ts). The API group of connections (src/resources/connections) writes them; credentials
// are sealed there by the kernel (sealed-fields.ts) and opened only here.
import type { Kysely } from 'kysely';
import { parseJson } from '../../db/sql.ts';
import type { DB } from '../../db/schema.ts';
import { openSealed } from '../resource/sealed-fields.ts';
import { selectIn } from '../resource/tenancy.ts';
import type { Scope } from '../scope.ts';

export interface OpenConnection {
  id: string;
  kind: string;
  provider: string;
  settings: Record<string, unknown>;
  credentials: Record<string, unknown>;
}

type Row = { id: string; kind: string; provider: string; settings: unknown; credentials: string | null };

const opened = (secret: string, row: Row): OpenConnection => ({
  id: row.id, kind: row.kind, provider: row.provider,
  settings: parseJson<Record<string, unknown>>(row.settings) ?? {},
  credentials: openSealed<Record<string, unknown>>(secret, row.credentials) ?? {},
});

/** One connection of the tenant, its credentials opened; undefined when it does not exist. */
export async function openConnection(db: Kysely<DB>, scope: Scope, secret: string, id: string): Promise<OpenConnection | undefined> {
  const row = await selectIn(db, 'connections', scope).select(['id', 'kind', 'provider', 'settings', 'credentials']).where('id', '=', id).executeTakeFirst();
  return row && opened(secret, row as Row);
}

/** The tenant's connection of `kind` that calls go through: the one marked default, else the newest. */
export async function defaultConnection(db: Kysely<DB>, scope: Scope, secret: string, kind: string): Promise<OpenConnection | undefined> {
  const row = await selectIn(db, 'connections', scope).select(['id', 'kind', 'provider', 'settings', 'credentials'])
    .where('kind', '=', kind).orderBy('is_default', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
  return row && opened(secret, row as Row);
}
