// API keys: created with a token shown once, stored as a hash, revoked by stamping revoked_at.
import type { Kysely } from 'kysely';
import type { DB, Mode } from '../../db/schema.ts';
import { newId, nowSeconds } from '../../platform/ids.ts';
import { generateToken } from '../../platform/tokens.ts';

export interface ApiKeyRecord {
  api_key_id: string;
  name: string;
  mode: Mode;
  is_agency: boolean;
  created_at: number;
  last_used_at: number | null;
}

type Row = DB['api_keys'];

export const toApiKey = (row: Pick<Row, 'id' | 'name' | 'mode' | 'is_agency' | 'created_at' | 'last_used_at'>): ApiKeyRecord => ({
  api_key_id: row.id,
  name: row.name,
  mode: row.mode,
  is_agency: Boolean(row.is_agency),
  created_at: row.created_at,
  last_used_at: row.last_used_at,
});

export async function createApiKey(db: Kysely<DB>, orgId: string, name: string, mode: Mode): Promise<ApiKeyRecord & { api_key_token: string }> {
  const { token, hash } = generateToken(mode);
  const row = { id: newId('key'), org_id: orgId, mode, name, token_hash: hash, is_agency: 0, created_at: nowSeconds(), last_used_at: null, revoked_at: null };
  await db.insertInto('api_keys').values(row).execute();
  return { ...toApiKey(row), api_key_token: token };
}

/** Keys of an organization, newest first; `mode` limits them to one mode. */
export async function listApiKeys(db: Kysely<DB>, orgId: string, mode?: Mode): Promise<ApiKeyRecord[]> {
  let q = db.selectFrom('api_keys').select(['id', 'name', 'mode', 'is_agency', 'created_at', 'last_used_at'])
    .where('org_id', '=', orgId).where('revoked_at', 'is', null);
  if (mode) q = q.where('mode', '=', mode);
  return (await q.orderBy('id', 'desc').execute()).map(toApiKey);
}

export async function findApiKey(db: Kysely<DB>, orgId: string, id: string, mode?: Mode) {
  let q = db.selectFrom('api_keys').selectAll().where('org_id', '=', orgId).where('id', '=', id).where('revoked_at', 'is', null);
  if (mode) q = q.where('mode', '=', mode);
  return q.executeTakeFirst();
}

/** Revokes a live key by id (any organization when orgId is omitted, for the CLI); true if it was live. */
export async function revokeApiKey(db: Kysely<DB>, id: string, orgId?: string): Promise<boolean> {
  let q = db.updateTable('api_keys').set({ revoked_at: nowSeconds() }).where('id', '=', id).where('revoked_at', 'is', null);
  if (orgId) q = q.where('org_id', '=', orgId);
  const result = await q.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The live key with this token hash, or undefined. */
export async function findKeyByHash(db: Kysely<DB>, hash: string) {
  return db.selectFrom('api_keys').select(['id', 'org_id', 'mode', 'is_agency', 'last_used_at'])
    .where('token_hash', '=', hash).where('revoked_at', 'is', null).executeTakeFirst();
}

export async function touchApiKey(db: Kysely<DB>, id: string, at: number): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}
