// What the platform reads and writes about credentials: the key behind a token (with its scopes,
// expiry and its organization's agency flag), its last use, and whether an agency may act for a
// client organization. The api-keys and agency groups build on these; the platform depends on no
// resource group.
import type { Kysely } from 'kysely';
import type { DB, Mode } from '../db/schema.ts';
import { selectIn } from './resource/tenancy.ts';

/** Every scope: what a key without restrictions holds. */
export const ALL_SCOPES = '*';

export interface KeyRow {
  id: string;
  org_id: string;
  mode: Mode;
  is_agency: number;
  org_is_agency: number;
  scopes: string;
  expires_at: number | null;
  last_used_at: number | null;
}

/** The active (not revoked) key with this token hash, with its organization's agency flag. */
export async function findKeyByHash(db: Kysely<DB>, hash: string): Promise<KeyRow | undefined> {
  return db.selectFrom('api_keys').innerJoin('organizations', 'organizations.id', 'api_keys.org_id')
    .select(['api_keys.id', 'api_keys.org_id', 'api_keys.mode', 'api_keys.is_agency', 'organizations.is_agency as org_is_agency',
      'api_keys.scopes', 'api_keys.expires_at', 'api_keys.last_used_at'])
    .where('api_keys.token_hash', '=', hash).where('api_keys.revoked_at', 'is', null).executeTakeFirst();
}

export async function touchApiKey(db: Kysely<DB>, id: string, at: number): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}

/** The scopes column (a JSON array) as a list. */
export function parseScopes(column: string): string[] {
  const parsed = JSON.parse(column) as unknown;
  return Array.isArray(parsed) ? parsed.filter((s): s is string => typeof s === 'string') : [];
}

export const serializeScopes = (scopes: readonly string[]): string => JSON.stringify(scopes);

/** Whether `agencyOrgId` is linked to `clientOrgId` in `mode`. */
export async function isLinked(db: Kysely<DB>, agencyOrgId: string, mode: Mode, clientOrgId: string): Promise<boolean> {
  const row = await selectIn(db, 'agency_links', { orgId: agencyOrgId, mode }).select('client_org_id')
    .where('client_org_id', '=', clientOrgId).executeTakeFirst();
  return row !== undefined;
}
