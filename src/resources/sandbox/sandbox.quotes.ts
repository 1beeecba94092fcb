// The sandbox's products and quotes: a small catalog, and a quote of some of its products to a
// sandbox contact on a sandbox deal, sent (its link's token is shown to no one: edit it as a draft
// and send it again to open its page). Made through the kernel and the quote operations, so
// numbers, totals and events are what the API would have recorded.
import { createRecord } from '../../platform/resource/store.ts';
import type { WriteContext } from '../../platform/write.ts';
import { products } from '../products/products.resource.ts';
import { quotes } from '../quotes/quotes.resource.ts';
import { sendQuote } from '../quotes/transitions.ts';

// Name, SKU, unit price in cents, description, active.
const PRODUCTS: Array<[string, string, number, string, boolean]> = [
  ['Team plan, per seat per year', 'TEAM-SEAT-Y', 12_000, 'Collaboration features for teams up to 100 seats', true],
  ['Business plan, per seat per year', 'BIZ-SEAT-Y', 24_000, 'Single sign-on, audit log and priority support', true],
  ['Onboarding workshop', 'ONBOARD-WS', 150_000, 'Two half-days, remote', true],
  ['Data add-on, per year', 'DATA-ADDON-Y', 90_000, 'Enrichment and intent data', true],
  ['Legacy support plan', 'LEGACY-SUP', 50_000, 'No longer sold', false],
];

/** How many products and quotes the sandbox holds. */
export const SANDBOX_PRODUCTS = PRODUCTS.length;
export const SANDBOX_QUOTES = 1;

export async function seedSandboxQuotes(w: WriteContext, deal: { id: string; contactId: string; name: string }): Promise<void> {
  // The deal's insert is queued to the end of the write: run it now, the quote refers to it.
  await w.flush();
  const made = [];
  for (const [name, sku, unit_price, description, active] of PRODUCTS) {
    made.push(await createRecord(products, w, { name, sku, unit_price, currency: 'USD', description, active }));
  }
  const quote = await createRecord(quotes, w, {
    title: deal.name, deal_id: deal.id, contact_id: deal.contactId, currency: 'USD', tax_percent: 8.875,
    line_items: [{ product_id: made[0].id, quantity: 25 }, { product_id: made[2].id, quantity: 1, discount_percent: 50 }],
    valid_until: w.now + 30 * 86_400, terms: 'Payment within 30 days of invoice. Prices exclude applicable taxes unless shown.',
  });
  await sendQuote(w, quote.id);
}
