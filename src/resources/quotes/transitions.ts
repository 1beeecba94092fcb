// The moves of a quote taken other than by its action routes: the recipient's, through its public
// link (view, accept, decline), the clock's (expire), the sandbox's send; and the duplicate, which
// makes a new quote. The
// lifecycle itself (states, refusals, events) is declared in quotes.lifecycle.ts.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { performAction, runAction, stateNow } from '../../platform/resource/lifecycle.ts';
import { createRecord, getRow, presentOne } from '../../platform/resource/store.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { asInput } from './line-items.ts';
import { quotes } from './quotes.resource.ts';
import { storedLines } from './quotes.store.ts';

/** Sends a draft (the seller's action, also taken by the sandbox): its answer carries the public token, once. */
export const sendQuote = (w: WriteContext, id: string): Promise<ApiRecord> => runAction(quotes, w, id, 'send');

/** A new draft with the quote's contents (and the next number). */
export async function duplicateQuote(w: WriteContext, id: string): Promise<ApiRecord> {
  const row = await getRow(quotes, w.tx, w.dialect, w.scope, id);
  const source = await presentOne(quotes, w.tx, w.scope, row);
  return createRecord(quotes, w, {
    title: source.title, deal_id: source.deal_id, contact_id: source.contact_id, currency: source.currency,
    line_items: storedLines(row).map(asInput), tax_percent: source.tax_percent, valid_until: source.valid_until, terms: source.terms,
    ...(source.custom_fields ? { custom_fields: source.custom_fields } : {}),
  });
}

/** A public link: the quote it was minted for (a row of `quote_links`). */
export interface Link {
  quote_id: string;
}

/**
 * The quote a public link names. A link lives as long as its revision: edit-as-draft and the
 * quote's delete remove it in their own write.
 */
export async function quoteByLink(db: Kysely<DB>, scope: Scope, link: Link): Promise<Row> {
  const row = await selectIn(db, 'quotes', scope).selectAll().where('id', '=', link.quote_id).executeTakeFirst();
  if (!row) throw notFound('Quote not found');
  return row as unknown as Row;
}

/** The first view of a sent quote makes it viewed; later views change nothing. */
export async function viewQuote(w: WriteContext, link: Link): Promise<Row> {
  const row = await quoteByLink(w.tx, w.scope, link);
  if (stateNow(quotes, row, w.now) !== 'sent') return row;
  return (await performAction(quotes, w, row, 'view')).row;
}

export async function acceptQuote(w: WriteContext, link: Link, name: string, ip: string): Promise<Row> {
  if (name.trim() === '') throw badRequest('name is required: the full name of the person accepting', 'name');
  return (await performAction(quotes, w, await quoteByLink(w.tx, w.scope, link), 'accept', { name, ip })).row;
}

export async function declineQuote(w: WriteContext, link: Link, reason: string | null | undefined): Promise<Row> {
  return (await performAction(quotes, w, await quoteByLink(w.tx, w.scope, link), 'decline', { reason })).row;
}

/** Records the expiry of one quote (409 unless it is sent or viewed); its scheduled job is quotes.jobs.ts. */
export const expireQuote = (w: WriteContext, id: string): Promise<ApiRecord> => runAction(quotes, w, id, 'expire');
