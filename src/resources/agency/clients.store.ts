// An agency's client organizations: links from the agency (the row's organization) to clients, in
// one mode each, like all data. A link comes from creating the client or from redeeming a grant
// the client made (grants.store.ts); unlinking leaves the client and its data as they are.
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { DB } from '../../db/schema.ts';
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import { nowSeconds } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { deleteIn, selectIn, tenantOf } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { hashSecret } from '../../platform/tokens.ts';
import type { WriteContext } from '../../platform/write.ts';
import { insertOrganization } from '../../orgs/orgs.ts';
import { currentPeriod } from '../usage/usage.store.ts';
import type { Client } from './agency.schemas.ts';

export const CLIENT_NOT_FOUND = 'Client not found';
const GRANT_CODE = /^agc_[A-Za-z0-9_-]{43}$/;
const INVALID_CODE = 'Invalid grant code: it is unknown, expired, revoked or already used';

function linksWithOrg(db: Kysely<DB>, scope: Scope) {
  return selectIn(db, 'agency_links', scope).innerJoin('organizations', 'organizations.id', 'agency_links.client_org_id')
    .select(['agency_links.client_org_id', 'agency_links.linked_at', 'organizations.name', 'organizations.created_at']);
}

type ClientRow = { client_org_id: string; linked_at: number; name: string; created_at: number };
export const toClient = (r: ClientRow): Client => ({ org_id: r.client_org_id, name: r.name, created_at: Number(r.created_at), linked_at: Number(r.linked_at) });

export function listClients(db: Kysely<DB>, scope: Scope, page: PageRequest): Promise<ClientRow[]> {
  let q = linksWithOrg(db, scope);
  if (page.after !== undefined) q = q.where('agency_links.client_org_id', '<', String(page.after));
  return q.orderBy('agency_links.client_org_id', 'desc').limit(page.take).offset(page.offset).execute();
}

export async function countClients(db: Kysely<DB>, scope: Scope): Promise<number> {
  const row = await selectIn(db, 'agency_links', scope).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findClient(db: Kysely<DB>, scope: Scope, clientOrgId: string): Promise<Client> {
  const row = await linksWithOrg(db, scope).where('agency_links.client_org_id', '=', clientOrgId).executeTakeFirst();
  if (!row) throw notFound(CLIENT_NOT_FOUND);
  return toClient(row);
}

async function link(w: WriteContext, clientOrgId: string, grantId: string | null): Promise<Client> {
  await w.tx.insertInto('agency_links').values({ ...tenantOf(w.scope), client_org_id: clientOrgId, grant_id: grantId, linked_at: w.now }).execute();
  return findClient(w.tx, w.scope, clientOrgId);
}

/** A new organization (credits, sandbox data, no keys) linked to the agency in the key's mode. */
export async function createClient(w: WriteContext, config: Pick<Config, 'defaultCredits'>, name: string): Promise<Client> {
  const org = await insertOrganization(w.tx, w.dialect, config, name);
  const client = await link(w, org.id, null);
  w.emit('agency_client.created', { id: client.org_id, ...client });
  return client;
}

/** Redeems a client's grant code: single use, unexpired, unrevoked, made in the key's mode. */
export async function redeemGrant(w: WriteContext, code: string): Promise<Client> {
  if (!GRANT_CODE.test(code)) throw badRequest(INVALID_CODE);
  const now = nowSeconds();
  // Found by its code's hash alone: the code is what names the client organization.
  const grant = await w.tx.selectFrom('agency_grants').select(['org_id', 'mode', 'id'])
    .where('code_hash', '=', hashSecret(code)).where('redeemed_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now)
    .executeTakeFirst();
  if (!grant) throw badRequest(INVALID_CODE);
  if (grant.mode !== w.scope.mode) throw badRequest(`This grant code links ${grant.mode} mode; redeem it with a ${grant.mode} key`);
  if (grant.org_id === w.scope.orgId) throw badRequest('An organization cannot be its own client');
  const existing = await selectIn(w.tx, 'agency_links', w.scope).select('client_org_id').where('client_org_id', '=', grant.org_id).executeTakeFirst();
  if (existing) throw conflict('Organization already linked to this agency');
  const taken = await w.tx.updateTable('agency_grants').set({ redeemed_at: now, agency_org_id: w.scope.orgId })
    .where('org_id', '=', grant.org_id).where('mode', '=', grant.mode).where('id', '=', grant.id)
    .where('redeemed_at', 'is', null).where('revoked_at', 'is', null).executeTakeFirst();
  if (taken.numUpdatedRows !== 1n) throw badRequest(INVALID_CODE);
  const client = await link(w, grant.org_id, grant.id);
  w.emit('agency_client.linked', { id: client.org_id, ...client });
  return client;
}

export async function unlinkClient(w: WriteContext, clientOrgId: string): Promise<{ org_id: string; unlinked: true }> {
  const client = await findClient(w.tx, w.scope, clientOrgId);
  await deleteIn(w.tx, 'agency_links', w.scope).where('client_org_id', '=', clientOrgId).execute();
  w.emit('agency_client.unlinked', { id: client.org_id, ...client });
  return { org_id: clientOrgId, unlinked: true };
}

/**
 * What the agency's keys debited in each client's ledger this month, in the key's mode. It reads
 * other organizations' ledgers, but only the rows the agency's own keys made (`actor_org_id`).
 */
export async function agencyUsage(db: Kysely<DB>, scope: Scope) {
  const { start, end } = currentPeriod();
  const rows = await db.selectFrom('usage_transactions').innerJoin('organizations', 'organizations.id', 'usage_transactions.org_id')
    .select((eb) => ['usage_transactions.org_id', 'organizations.name', eb.fn.sum<number>('usage_transactions.amount').as('debited'), eb.fn.countAll<number>().as('n')])
    .where('usage_transactions.actor_org_id', '=', scope.orgId).where('usage_transactions.mode', '=', scope.mode)
    .where('usage_transactions.org_id', '<>', scope.orgId).where('usage_transactions.type', '=', 'debit')
    .where('usage_transactions.created_at', '>=', start).where('usage_transactions.created_at', '<', end)
    .groupBy(['usage_transactions.org_id', 'organizations.name']).execute();
  const clients = rows.map((r) => ({ org_id: r.org_id, name: r.name, debited: Number(r.debited), transactions: Number(r.n) }))
    .sort((a, b) => b.debited - a.debited || (a.org_id < b.org_id ? -1 : 1));
  return { period_start: start, period_end: end, debited: clients.reduce((n, c) => n + c.debited, 0), clients };
}
