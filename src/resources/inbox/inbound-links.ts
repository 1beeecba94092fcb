// Inbound URLs: where a mail provider (or a relay of the organization's own) posts the raw messages
// a mailbox receives, one per e-mail connection. The URL's token is shown once and only its SHA-256
// is kept (link-tokens.ts); each post is signed with the link's secret (Standard Webhooks), which is
// kept sealed, since the service needs it again to check every post. A new URL replaces the old one.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { notFound } from '../../platform/errors.ts';
import { findLink, newLinkToken } from '../../platform/public/link-tokens.ts';
import { deleteIn, selectIn, tenantOf } from '../../platform/resource/tenancy.ts';
import { seal, unseal } from '../../platform/sealing.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';

export const CONNECTION_NOT_FOUND = 'Connection not found';
export const INBOUND_URL_NOT_FOUND = 'Inbound URL not found';
export const inboundPath = (token: string) => `/public/inbound/${token}`;

/** The tenant's e-mail connection `id`: 404 for one that does not exist or is of another kind. */
export async function emailConnection(db: Kysely<DB>, scope: Scope, id: string): Promise<{ id: string; provider: string }> {
  const row = await selectIn(db, 'connections', scope).select(['id', 'kind', 'provider']).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(CONNECTION_NOT_FOUND);
  if (row.kind !== 'email') throw notFound(CONNECTION_NOT_FOUND);
  return row;
}

/** Mints the connection's inbound URL token and signing secret (answered once), replacing any earlier one. */
export async function mintInboundLink(w: WriteContext, secret: string, connectionId: string): Promise<{ token: string; secret: string }> {
  await emailConnection(w.tx, w.scope, connectionId);
  await deleteIn(w.tx, 'inbound_links', w.scope).where('connection_id', '=', connectionId).execute();
  const { token, hash } = newLinkToken();
  const signing = `whsec_${randomBytes(24).toString('base64')}`;
  await w.tx.insertInto('inbound_links').values({ token_hash: hash, ...tenantOf(w.scope), connection_id: connectionId, secret: seal(secret, signing), created_at: w.now }).execute();
  return { token, secret: signing };
}

/** The link of a token: its tenant, connection and signing secret; 404 for a token no link has. */
export async function openInboundLink(db: Kysely<DB>, secret: string, token: string): Promise<{ scope: Scope; connectionId: string; signing: string }> {
  const found = await findLink(db, 'inbound_links', token);
  if (!found) throw notFound(INBOUND_URL_NOT_FOUND);
  return { scope: found.scope, connectionId: found.row.connection_id, signing: unseal(secret, found.row.secret) };
}
