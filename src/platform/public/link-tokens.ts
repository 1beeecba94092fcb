// Tokens in links (a quote's page; next an unsubscribe link, a booking page): 256 random bits, shown
// once, stored only as their SHA-256 (tokens.ts), each scoped to one record. A link table is a small
// routing table read before any tenant is known: its key is the token's hash, its row names the
// tenant (org_id, mode) and the record.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Scope } from '../scope.ts';
import { hashSecret } from '../tokens.ts';

/** The tables of links: those keyed by `token_hash`. */
export type LinkTable = { [T in keyof DB]: DB[T] extends { token_hash: string; org_id: string; mode: string } ? T : never }[keyof DB];

/** A new link token (URL-safe, 43 characters) and the hash to store in its place. */
export function newLinkToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashSecret(token) };
}

/** The link row of `token` in `table`, with the tenant it belongs to; undefined when no link has it. */
export async function findLink<T extends LinkTable>(db: Kysely<DB>, table: T, token: string): Promise<{ scope: Scope; row: DB[T] } | undefined> {
  const row = await db.selectFrom(table as LinkTable).selectAll().where('token_hash', '=', hashSecret(token)).executeTakeFirst() as DB[T] | undefined;
  return row && { scope: { orgId: row.org_id, mode: row.mode }, row };
}
