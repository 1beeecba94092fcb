// Grants: access a client organization (the row's organization) offers an agency, as a single-use
// code valid for 24 hours, in the mode of the key that made it. Only the code's SHA-256 is kept.
// Revoking a grant removes the link it made, so the agency is refused from then on (within the
// two-second link cache on other processes).
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { notFound } from '../../platform/errors.ts';
import { newId, nowSeconds } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { deleteIn, selectIn, tenantOf, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { hashSecret } from '../../platform/tokens.ts';
import type { WriteContext } from '../../platform/write.ts';
import type { Grant } from './agency.schemas.ts';

export const GRANT_LIFETIME_S = 24 * 60 * 60;
const GRANT_NOT_FOUND = 'Agency grant not found';

/** Grants with the agency's name and whether the link they made still stands. */
function grantsOf(db: Kysely<DB>, scope: Scope) {
  return selectIn(db, 'agency_grants', scope)
    .leftJoin('organizations', 'organizations.id', 'agency_grants.agency_org_id')
    .leftJoin('agency_links', (join) => join.onRef('agency_links.org_id', '=', 'agency_grants.agency_org_id')
      .onRef('agency_links.mode', '=', 'agency_grants.mode').onRef('agency_links.client_org_id', '=', 'agency_grants.org_id')
      .onRef('agency_links.grant_id', '=', 'agency_grants.id'))
    .select(['agency_grants.id', 'agency_grants.mode', 'agency_grants.agency_org_id', 'organizations.name as agency_name', 'agency_grants.created_at',
      'agency_grants.expires_at', 'agency_grants.redeemed_at', 'agency_grants.revoked_at', sql<string | null>`agency_links.client_org_id`.as('linked')]);
}

type GrantRow = Awaited<ReturnType<ReturnType<typeof grantsOf>['executeTakeFirstOrThrow']>>;

const num = (v: number | string | null) => (v === null ? null : Number(v));

function statusOf(r: GrantRow): Grant['status'] {
  if (r.revoked_at !== null) return 'revoked';
  if (r.redeemed_at !== null) return r.linked !== null ? 'active' : 'unlinked';
  return Number(r.expires_at) <= nowSeconds() ? 'expired' : 'pending';
}

export const toGrant = (r: GrantRow): Grant => ({
  id: r.id, mode: r.mode, status: statusOf(r), agency_org_id: r.agency_org_id, agency_name: r.agency_name ?? null,
  created_at: Number(r.created_at), expires_at: Number(r.expires_at), redeemed_at: num(r.redeemed_at), revoked_at: num(r.revoked_at),
});

async function findGrant(db: Kysely<DB>, scope: Scope, id: string): Promise<Grant> {
  const row = await grantsOf(db, scope).where('agency_grants.id', '=', id).executeTakeFirst();
  if (!row) throw notFound(GRANT_NOT_FOUND);
  return toGrant(row);
}

export async function createGrant(w: WriteContext): Promise<Grant & { grant_code: string }> {
  const code = `agc_${randomBytes(32).toString('base64url')}`;
  const id = newId('agr');
  await w.tx.insertInto('agency_grants').values({
    ...tenantOf(w.scope), id, code_hash: hashSecret(code), agency_org_id: null,
    created_at: w.now, expires_at: w.now + GRANT_LIFETIME_S, redeemed_at: null, revoked_at: null,
  }).execute();
  const grant = await findGrant(w.tx, w.scope, id);
  w.emit('agency_grant.created', grant);
  return { ...grant, grant_code: code };
}

export function listGrants(db: Kysely<DB>, scope: Scope, page: PageRequest): Promise<GrantRow[]> {
  let q = grantsOf(db, scope);
  if (page.after !== undefined) q = q.where('agency_grants.id', '<', String(page.after));
  return q.orderBy('agency_grants.id', 'desc').limit(page.take).offset(page.offset).execute();
}

export async function countGrants(db: Kysely<DB>, scope: Scope): Promise<number> {
  const row = await selectIn(db, 'agency_grants', scope).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Revokes a grant and removes the link it made; a grant already revoked is answered as it is. */
export async function revokeGrant(w: WriteContext, id: string): Promise<Grant> {
  const before = await findGrant(w.tx, w.scope, id);
  if (before.status === 'revoked') return before;
  // The agency is read from the revoked row itself, so a redemption committed meanwhile is seen.
  const revoked = await updateIn(w.tx, 'agency_grants', w.scope).set({ revoked_at: w.now })
    .where('id', '=', id).where('revoked_at', 'is', null).returning('agency_org_id').executeTakeFirst();
  if (!revoked) return findGrant(w.tx, w.scope, id);
  if (revoked.agency_org_id !== null) {
    await deleteIn(w.tx, 'agency_links', { orgId: revoked.agency_org_id, mode: w.scope.mode })
      .where('client_org_id', '=', w.scope.orgId).where('grant_id', '=', id).execute();
  }
  const grant = await findGrant(w.tx, w.scope, id);
  w.emit('agency_grant.revoked', grant, { status: before.status, revoked_at: null });
  return grant;
}
