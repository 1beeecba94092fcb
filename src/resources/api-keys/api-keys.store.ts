// API keys: created with a token shown once, stored as a hash, revoked by stamping revoked_at.
// Scopes are kept as a JSON array (see platform/credentials.ts, which reads keys for authentication).
import type { Kysely } from 'kysely';
import type { DB, Mode } from '../../db/schema.ts';
import { ALL_SCOPES, parseScopes, serializeScopes } from '../../platform/credentials.ts';
import { newId, nowSeconds } from '../../platform/ids.ts';
import { generateToken } from '../../platform/tokens.ts';

export interface ApiKeyRecord {
  api_key_id: string;
  name: string;
  mode: Mode;
  is_agency: boolean;
  scopes: string[];
  expires_at: number | null;
  created_at: number;
  last_used_at: number | null;
}

type Row = DB['api_keys'];
const RECORD_COLUMNS = ['id', 'name', 'mode', 'is_agency', 'scopes', 'expires_at', 'created_at', 'last_used_at'] as const;

export const toApiKey = (row: Pick<Row, (typeof RECORD_COLUMNS)[number]>): ApiKeyRecord => ({
  api_key_id: row.id,
  name: row.name,
  mode: row.mode,
  is_agency: Boolean(row.is_agency),
  scopes: parseScopes(row.scopes),
  expires_at: row.expires_at === null ? null : Number(row.expires_at),
  created_at: Number(row.created_at),
  last_used_at: row.last_used_at === null ? null : Number(row.last_used_at),
});

export interface KeyOptions {
  isAgency?: boolean;
  scopes?: readonly string[];
  expiresAt?: number | null;
}

export async function createApiKey(db: Kysely<DB>, orgId: string, name: string, mode: Mode, options: KeyOptions = {}): Promise<ApiKeyRecord & { api_key_token: string }> {
  const { token, hash } = generateToken(mode);
  const row = {
    id: newId('key'), org_id: orgId, mode, name, token_hash: hash, is_agency: options.isAgency ? 1 : 0,
    scopes: serializeScopes(options.scopes ?? [ALL_SCOPES]), expires_at: options.expiresAt ?? null,
    created_at: nowSeconds(), last_used_at: null, revoked_at: null,
  };
  await db.insertInto('api_keys').values(row).execute();
  return { ...toApiKey(row), api_key_token: token };
}

/** Keys of an organization, newest first; `mode` limits them to one mode. */
export async function listApiKeys(db: Kysely<DB>, orgId: string, mode?: Mode): Promise<ApiKeyRecord[]> {
  let q = db.selectFrom('api_keys').select(RECORD_COLUMNS).where('org_id', '=', orgId).where('revoked_at', 'is', null);
  if (mode) q = q.where('mode', '=', mode);
  return (await q.orderBy('id', 'desc').execute()).map(toApiKey);
}

export async function findApiKey(db: Kysely<DB>, orgId: string, id: string, mode?: Mode) {
  let q = db.selectFrom('api_keys').selectAll().where('org_id', '=', orgId).where('id', '=', id).where('revoked_at', 'is', null);
  if (mode) q = q.where('mode', '=', mode);
  return q.executeTakeFirst();
}

/** Renames a key or replaces its scopes. */
export async function updateApiKey(db: Kysely<DB>, orgId: string, id: string, changes: { name?: string; scopes?: readonly string[] }): Promise<void> {
  await db.updateTable('api_keys')
    .set({ ...(changes.name === undefined ? {} : { name: changes.name }), ...(changes.scopes === undefined ? {} : { scopes: serializeScopes(changes.scopes) }) })
    .where('org_id', '=', orgId).where('id', '=', id).execute();
}

/** Revokes a live key by id (any organization when orgId is omitted, for the CLI); true if it was live. */
export async function revokeApiKey(db: Kysely<DB>, id: string, orgId?: string): Promise<boolean> {
  let q = db.updateTable('api_keys').set({ revoked_at: nowSeconds() }).where('id', '=', id).where('revoked_at', 'is', null);
  if (orgId) q = q.where('org_id', '=', orgId);
  const result = await q.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
