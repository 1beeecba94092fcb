// The states of a quote and the operations that move it: the seller sends, voids, duplicates and
// returns a quote to draft; the recipient views, accepts or declines it through its public link; the
// clock expires it. Each move is one write with its event, decided on the state as of now.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import type { EventType } from '../../platform/event-types.ts';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { createRecord, getRow, presentOne } from '../../platform/resource/store.ts';
import { deleteIn, selectIn, tenantOf, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { hashSecret } from '../../platform/tokens.ts';
import type { WriteContext } from '../../platform/write.ts';
import { contacts } from '../contacts/contacts.resource.ts';
import { asInput } from './line-items.ts';
import { quotes } from './quotes.resource.ts';
import type { QuoteState } from './quotes.schemas.ts';
import { AWAITING, stateAt, storedLines } from './quotes.store.ts';

/** 256 random bits, URL-safe: the public link cannot be guessed. */
const newToken = () => randomBytes(32).toString('base64url');

const stateOf = (w: WriteContext, row: Row) => stateAt(String(row.status), row.valid_until, w.now);

/** Changes the quote, records `type` with the fields it changed, and answers the quote. */
async function move(w: WriteContext, row: Row, type: EventType, changes: Record<string, unknown>): Promise<ApiRecord> {
  await updateIn(w.tx, 'quotes', w.scope).set({ ...changes, updated_at: w.now }).where('id', '=', row.id).execute();
  const record = await presentOne(quotes, w.tx, w.scope, { ...row, ...changes, updated_at: w.now });
  const previous = Object.fromEntries(Object.keys(changes).map((k) => [k, quotes.fields[k].fromRow(row[k])]));
  // The state the API answered before; for the expiry itself, the state it expired from.
  const before = stateOf(w, row) === changes.status ? row.status : stateOf(w, row);
  w.emit(type, record, { ...previous, status: before });
  return record;
}

const refuse = (state: QuoteState, action: string) => conflict(`A quote that is ${state} cannot be ${action}`);

export async function sendQuote(w: WriteContext, id: string): Promise<ApiRecord> {
  const row = await getRow(quotes, w.tx, w.dialect, w.scope, id);
  if (row.status !== 'draft') throw refuse(stateOf(w, row), 'sent');
  if (storedLines(row).length === 0) throw badRequest('A quote needs at least one line item to be sent');
  if (!row.contact_id) throw badRequest('A quote needs a contact_id to be sent');
  await getRow(contacts, w.tx, w.dialect, w.scope, String(row.contact_id));
  if (row.valid_until !== null && Number(row.valid_until) <= w.now) throw badRequest('valid_until has passed: set a later one before sending');
  const token = newToken();
  await w.tx.insertInto('quote_links').values({ token_hash: hashSecret(token), ...tenantOf(w.scope), quote_id: row.id, created_at: w.now }).execute();
  // The token is answered here once; the event, like the store, never holds it.
  const record = await move(w, row, 'quote.sent', { status: 'sent', sent_at: w.now });
  return { ...record, public_token: token };
}

export async function voidQuote(w: WriteContext, id: string): Promise<ApiRecord> {
  const row = await getRow(quotes, w.tx, w.dialect, w.scope, id);
  const state = stateOf(w, row);
  if (state !== 'draft' && !AWAITING.includes(state)) throw refuse(state, 'voided');
  return move(w, row, 'quote.voided', { status: 'void', voided_at: w.now });
}

/** Back to draft, one revision up; the public link of the revision before stops working. */
export async function editAsDraft(w: WriteContext, id: string): Promise<ApiRecord> {
  const row = await getRow(quotes, w.tx, w.dialect, w.scope, id);
  const state = stateOf(w, row);
  if (!['sent', 'viewed', 'declined', 'expired'].includes(state)) throw refuse(state, 'edited as a draft (duplicate it instead)');
  await deleteIn(w.tx, 'quote_links', w.scope).where('quote_id', '=', row.id).execute();
  return move(w, row, 'quote.returned_to_draft', {
    status: 'draft', revision: Number(row.revision) + 1, sent_at: null, viewed_at: null, declined_at: null, decline_reason: null,
  });
}

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
  if (stateOf(w, row) !== 'sent') return row;
  await move(w, row, 'quote.viewed', { status: 'viewed', viewed_at: w.now });
  return { ...row, status: 'viewed', viewed_at: w.now, updated_at: w.now };
}

async function answerable(w: WriteContext, link: Link, action: string): Promise<Row> {
  const row = await quoteByLink(w.tx, w.scope, link);
  const state = stateOf(w, row);
  if (!AWAITING.includes(state)) throw refuse(state, action);
  return row;
}

export async function acceptQuote(w: WriteContext, link: Link, name: string, ip: string): Promise<Row> {
  const signer = name.trim();
  if (signer === '') throw badRequest('name is required: the full name of the person accepting', 'name');
  const row = await answerable(w, link, 'accepted');
  const changes = { status: 'accepted', accepted_at: w.now, signer_name: signer, signer_ip: ip, viewed_at: row.viewed_at ?? w.now };
  await move(w, row, 'quote.accepted', changes);
  return { ...row, ...changes, updated_at: w.now };
}

export async function declineQuote(w: WriteContext, link: Link, reason: string | null | undefined): Promise<Row> {
  const row = await answerable(w, link, 'declined');
  const changes = { status: 'declined', declined_at: w.now, decline_reason: reason?.trim() || null, viewed_at: row.viewed_at ?? w.now };
  await move(w, row, 'quote.declined', changes);
  return { ...row, ...changes, updated_at: w.now };
}

/** Records the expiry of the tenant's quotes that passed their date unanswered (the scheduled job). */
export async function expireDue(w: WriteContext): Promise<number> {
  const due = await selectIn(w.tx, 'quotes', w.scope).selectAll().where('status', 'in', [...AWAITING]).where('valid_until', '<', w.now).execute();
  for (const row of due) await move(w, row as unknown as Row, 'quote.expired', { status: 'expired' });
  return due.length;
}
