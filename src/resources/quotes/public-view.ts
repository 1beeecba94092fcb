// A sent quote as its recipient sees it, through its public link: the offer, its amounts and where it
// stands as of now; nothing internal (ids of records, custom fields, the signer's address).
import type { Static } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { notFound } from '../../platform/errors.ts';
import { findLink } from '../../platform/public/link-tokens.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { Scope } from '../../platform/scope.ts';
import type { PublicQuoteSchema } from './quotes.schemas.ts';
import { stateAt, storedLines } from './quotes.store.ts';
import type { Link } from './transitions.ts';

export type PublicQuote = Static<typeof PublicQuoteSchema>;

/** The link of a token (found by its hash), with the tenant it belongs to: looked up before any tenant is known. */
export async function findQuoteLink(db: Kysely<DB>, token: string): Promise<{ scope: Scope; link: Link }> {
  const found = await findLink(db, 'quote_links', token);
  if (!found) throw notFound('Quote not found');
  return { scope: found.scope, link: { quote_id: found.row.quote_id } };
}

export async function sellerName(db: Kysely<DB>, scope: Scope): Promise<string> {
  const org = await db.selectFrom('organizations').select('name').where('id', '=', scope.orgId).executeTakeFirst();
  return org?.name ?? '';
}

const orNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export function publicView(row: Row, seller: string, now: number): PublicQuote {
  return {
    number: String(row.number), revision: Number(row.revision), title: String(row.title), seller,
    status: stateAt(String(row.status), row.valid_until, now), currency: String(row.currency),
    line_items: storedLines(row).map(({ product_id: _product, ...line }) => line),
    subtotal: Number(row.subtotal), discount_total: Number(row.discount_total), tax_percent: Number(row.tax_percent),
    tax_total: Number(row.tax_total), total: Number(row.total), valid_until: orNull(row.valid_until), terms: (row.terms as string | null) ?? null,
    sent_at: orNull(row.sent_at), accepted_at: orNull(row.accepted_at), signer_name: (row.signer_name as string | null) ?? null, declined_at: orNull(row.declined_at),
  };
}
