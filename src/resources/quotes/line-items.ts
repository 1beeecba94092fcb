// A quote's lines and totals, computed by the service on every write that touches them (lines,
// currency or tax rate); a client never sends an amount. Rounding, half to even, happens in exactly
// three places: each line's subtotal (quantity × unit_price) and total (after its discount), each
// from its exact value, and the tax on the sum of the line totals. Everything else is a sum.
import { badRequest, conflict, notFound, validationError, type FieldError } from '../../platform/errors.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { lineAmounts, taxOn, toScaled } from './money.ts';

export interface LineIn {
  product_id?: string;
  name?: string;
  description?: string | null;
  quantity?: number;
  unit_price?: number;
  discount_percent?: number;
}

export interface LineOut {
  product_id: string | null;
  name: string;
  description: string | null;
  quantity: number;
  unit_price: number;
  discount_percent: number;
  subtotal: number;
  discount: number;
  total: number;
}

export interface Totals {
  line_items: LineOut[];
  subtotal: number;
  discount_total: number;
  tax_total: number;
  total: number;
}

const decimalError = (loc: Array<string | number>): FieldError => ({ loc: ['body', ...loc.map(String)], msg: 'must have at most 4 decimal places', type: 'value_error.decimal' });

/** Ten-thousandths of a decimal given at `loc`, or a field error. */
function scaled(value: number, loc: Array<string | number>, errors: FieldError[]): bigint {
  const result = toScaled(value);
  if (result === null) errors.push(decimalError(loc));
  return result ?? 0n;
}

/**
 * The products the lines name, each checked: of the tenant (404; 409 for the quote's own lines,
 * `stored`, whose product was deleted since), active and in `currency` (400).
 */
async function productsOf(w: WriteContext, lines: LineIn[], currency: string, stored: boolean) {
  const ids = [...new Set(lines.flatMap((l) => (l.product_id ? [l.product_id] : [])))];
  const rows = ids.length === 0 ? [] : await selectIn(w.tx, 'products', w.scope).selectAll().where('id', 'in', ids).execute();
  const byId = new Map(rows.map((p) => [p.id, p]));
  for (const id of ids) {
    const product = byId.get(id);
    if (!product && stored) throw conflict(`Product ${id} of this quote's line items was deleted; give line_items to change the quote`);
    if (!product) throw notFound('Product not found');
    if (!product.active) throw badRequest(`Product ${id} is not active`);
    if (product.currency !== currency) throw badRequest(`Product ${id} is priced in ${product.currency}; the quote is in ${currency}`);
  }
  return byId;
}

/** The lines as stored and the quote's totals, or 400/404/409/422 naming what is wrong; `stored`: the quote's own lines, recomputed. */
export async function computeTotals(w: WriteContext, lines: LineIn[], currency: string, taxPercent: number, stored = false): Promise<Totals> {
  const products = await productsOf(w, lines, currency, stored);
  const errors: FieldError[] = [];
  const out: LineOut[] = [];
  let subtotal = 0n;
  let net = 0n;
  for (const [i, line] of lines.entries()) {
    const product = line.product_id ? products.get(line.product_id) : undefined;
    const name = line.name ?? product?.name;
    const unitPrice = line.unit_price ?? (product ? Number(product.unit_price) : undefined);
    if (name === undefined) throw badRequest(`line_items[${i}].name is required without a product_id`, `line_items.${i}.name`);
    if (unitPrice === undefined) throw badRequest(`line_items[${i}].unit_price is required without a product_id`, `line_items.${i}.unit_price`);
    const quantity = line.quantity ?? 1;
    const discount = line.discount_percent ?? 0;
    const amounts = lineAmounts(scaled(quantity, ['line_items', i, 'quantity'], errors), BigInt(unitPrice), scaled(discount, ['line_items', i, 'discount_percent'], errors));
    subtotal += amounts.subtotal;
    net += amounts.total;
    out.push({
      product_id: line.product_id ?? null, name, description: line.description !== undefined ? line.description : product?.description ?? null,
      quantity, unit_price: unitPrice, discount_percent: discount,
      subtotal: Number(amounts.subtotal), discount: Number(amounts.subtotal - amounts.total), total: Number(amounts.total),
    });
  }
  const tax = taxOn(net, scaled(taxPercent, ['tax_percent'], errors));
  if (errors.length > 0) throw validationError(errors);
  if (subtotal + tax > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw validationError([{ loc: ['body', 'line_items'], msg: `the quote's amounts exceed ${Number.MAX_SAFE_INTEGER} minor units`, type: 'value_error.number.too_large' }]);
  }
  return { line_items: out, subtotal: Number(subtotal), discount_total: Number(subtotal - net), tax_total: Number(tax), total: Number(net + tax) };
}

/** A stored line as the input that makes it again (its product's current values do not replace it). */
export const asInput = (line: LineOut): LineIn => ({
  ...(line.product_id ? { product_id: line.product_id } : {}),
  name: line.name, description: line.description, quantity: line.quantity, unit_price: line.unit_price, discount_percent: line.discount_percent,
});
