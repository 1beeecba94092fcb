// What quotes do beyond the kernel's CRUD on their writes: the number (sequential per tenant), the
// lines and totals the service computes, edits and deletes of drafts only, and the expiry that
// follows the clock (a sent or viewed quote past `valid_until` reads as expired before the
// scheduled job records it).
import { sql, type SqlBool } from 'kysely';
import { normalizeCurrency } from '../../platform/currency.ts';
import { conflict } from '../../platform/errors.ts';
import { nowSeconds } from '../../platform/ids.ts';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { deleteIn } from '../../platform/resource/tenancy.ts';
import { bumpCounter, type WriteContext } from '../../platform/write.ts';
import { parseJson } from '../../db/sql.ts';
import { asInput, computeTotals, type LineIn, type LineOut } from './line-items.ts';
import type { QuoteState } from './quotes.schemas.ts';

/** States in which a quote waits for its recipient's answer (and can expire). */
export const AWAITING: readonly QuoteState[] = ['sent', 'viewed'];

/** The state of a quote now: stored, or `expired` once `valid_until` has passed while it waited. */
export function stateAt(status: string, validUntil: unknown, now: number): QuoteState {
  const due = validUntil !== null && validUntil !== undefined && Number(validUntil) < now;
  return (AWAITING.includes(status as QuoteState) && due ? 'expired' : status) as QuoteState;
}

export const asOf = (record: ApiRecord, now: number): void => {
  record.status = stateAt(String(record.status), record.valid_until, now);
};

/** The `status` filter, as of now: `expired` includes quotes past their date not yet recorded so. */
export function statusIs(table: string, value: string) {
  const status = sql.ref(`${table}.status`);
  const validUntil = sql.ref(`${table}.valid_until`);
  const now = nowSeconds();
  if (value === 'expired') return sql<SqlBool>`(${status} = 'expired' or (${status} in ('sent', 'viewed') and ${validUntil} < ${now}))`;
  if (AWAITING.includes(value as QuoteState)) return sql<SqlBool>`(${status} = ${value} and (${validUntil} is null or ${validUntil} >= ${now}))`;
  return sql<SqlBool>`${status} = ${value}`;
}

/** The next number of the tenant: `Q-0001`, … Taken under the tenant's write lock, rolled back with a failed write, so numbers have no gaps. */
async function nextNumber(w: WriteContext): Promise<string> {
  return `Q-${String(await bumpCounter(w.tx, w.dialect, w.scope, 'quote_numbers', 1)).padStart(4, '0')}`;
}

export const storedLines = (row: Row): LineOut[] => (parseJson(row.line_items) ?? []) as LineOut[];

const editOnlyDrafts = (row: Row, what: string) => {
  if (row.status !== 'draft') throw conflict(`Only draft quotes can be ${what}; this quote is ${row.status} (POST /v1/quotes/${row.id}/edit-as-draft makes it a draft again)`);
};

export async function beforeWrite(w: WriteContext, row: Record<string, unknown>, ctx: { before?: Row; input: Record<string, unknown> }): Promise<void> {
  const { before, input } = ctx;
  if (before) editOnlyDrafts(before, 'changed');
  normalizeCurrency(row);
  if (!before) row.number = await nextNumber(w);
  if (before && input.line_items === undefined && input.currency === undefined && input.tax_percent === undefined) return;
  const lines = (input.line_items as LineIn[] | undefined) ?? (before ? storedLines(before).map(asInput) : []);
  const currency = String(row.currency ?? before?.currency);
  const totals = await computeTotals(w, lines, currency, Number(row.tax_percent ?? before?.tax_percent ?? 0), input.line_items === undefined && before !== undefined);
  Object.assign(row, totals, { line_items: JSON.stringify(totals.line_items) });
}

export async function beforeDelete(w: WriteContext, row: Row): Promise<void> {
  editOnlyDrafts(row, 'deleted');
  await deleteIn(w.tx, 'quote_links', w.scope).where('quote_id', '=', row.id).execute();
}
