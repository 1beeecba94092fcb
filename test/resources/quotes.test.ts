// Quotes through HTTP: numbers sequential per tenant without gaps (also under concurrent creates),
// the totals the service computes (half-to-even rounding per line, exact decimals), product lines,
// drafts only editable, every seller operation and its 400/404/409, expiry on read and by each
// quote's scheduled job, the quotes of a contact and of a deal, filters, custom fields, search, isolation.
import { afterAll, describe, expect, it } from 'vitest';
import type { JobKind } from '../../src/platform/jobs/kinds.ts';
import { quoteExpiry } from '../../src/resources/quotes/quotes.jobs.ts';
import { JOB_KINDS } from '../../src/resources/job-kinds.ts';
import { clock, tenant, testApp, type Client } from '../helpers/app.ts';
import { jobRunners } from '../helpers/job-runners.ts';
import { contact, eventsOf, fails, ok, product, quote, sentQuote, sleep, type Json } from '../helpers/quotes.ts';

// High public limits too: the file's public reads (tests no longer wait for expiry) come within one second.
const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_SECOND: '100000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' } });
const runners = jobRunners(() => app);
afterAll(async () => {
  await runners.stopAll();
  await app.close();
});

const now = () => clock.seconds();
const line = (unit_price: number, quantity = 1, discount_percent = 0) => ({ name: 'Item', unit_price, quantity, discount_percent });
const totalsOf = (q: Json) => ({ subtotal: q.subtotal, discount_total: q.discount_total, tax_total: q.tax_total, total: q.total });
const ids = (page: Json) => page.data.map((x: Json) => x.id).sort();
/** Runs a quote's expiry job by hand (`job` as the queue gives it), as a worker that runs it again would. */
const runExpiry = (t: { org_id: string }, quote: Json) =>
  quoteExpiry.run({ quote_id: quote.id }, { database: app.services.database, log: app.log, job: { orgId: t.org_id, mode: 'live' } } as never);

/**
 * Sends quotes valid for ten more minutes, and moves the clock past that. Other processes on the
 * same PostgreSQL database, on the real clock, see their expiry jobs due only ten minutes later.
 */
async function expiringQuotes(c: Client, n: number): Promise<Json[]> {
  const until = now() + 600;
  const out = [];
  for (let i = 0; i < n; i++) out.push(await sentQuote(c, { valid_until: until }));
  clock.set(until + 1);
  return out;
}

describe('quote numbers', () => {
  it('numbers drafts Q-0001, Q-0002, … per tenant and mode; a failed create takes no number', async () => {
    const t = await tenant(app);
    const first = await quote(t.live);
    expect(first).toMatchObject({ number: 'Q-0001', status: 'draft', revision: 1, currency: 'USD', line_items: [], tax_percent: 0, subtotal: 0, total: 0, public_token: null, sent_at: null, custom_fields: {} });
    expect(first.id).toMatch(/^quo_/);
    await fails(t.live.post('/v1/quotes', { title: 'X', line_items: [{ product_id: 'prd_missing' }] }), 404, 'Product not found');
    expect((await quote(t.live)).number).toBe('Q-0002');
    expect((await quote(t.test)).number).not.toBe('Q-0003');
    expect((await quote((await tenant(app)).live)).number).toBe('Q-0001');
    await fails(t.live.post('/v1/quotes', { title: 'X', number: 'Q-9999' }), 422);
    await fails(t.live.post('/v1/quotes', {}), 400);
  });

  it('gives concurrent creates distinct numbers without gaps', async () => {
    const t = await tenant(app);
    const made = await Promise.all(Array.from({ length: 25 }, (_, i) => t.live.post('/v1/quotes', i % 5 === 4 ? { title: 'Bad', line_items: [{ name: 'X' }] } : { title: `Q${i}` })));
    expect(made.filter((r) => r.statusCode === 400)).toHaveLength(5);
    const numbers = made.filter((r) => r.statusCode === 201).map((r) => r.json().data.number).sort();
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => `Q-${String(i + 1).padStart(4, '0')}`));
  });
});

describe('quote totals', () => {
  it('rounds each line half to even from its exact value, and the tax once on the sum', async () => {
    const t = await tenant(app);
    // Halves go to the even neighbour: 0.5 → 0, 1.5 → 2, 2.5 → 2, 3.5 → 4.
    const halves = await quote(t.live, { line_items: [line(1, 0.5), line(1, 1.5), line(1, 2.5), line(1, 3.5)] });
    expect(halves.line_items.map((l: Json) => l.subtotal)).toEqual([0, 2, 2, 4]);
    expect(totalsOf(halves)).toEqual({ subtotal: 8, discount_total: 0, tax_total: 0, total: 8 });
    // Discounts: 1 × 50% = 0.5 → 0; 3 × 50% = 1.5 → 2; 5 × 50% = 2.5 → 2.
    const discounted = await quote(t.live, { line_items: [line(1, 1, 50), line(3, 1, 50), line(5, 1, 50)] });
    expect(discounted.line_items.map((l: Json) => [l.subtotal, l.discount, l.total])).toEqual([[1, 1, 0], [3, 1, 2], [5, 3, 2]]);
    expect(totalsOf(discounted)).toEqual({ subtotal: 9, discount_total: 5, tax_total: 0, total: 4 });
    // Tax on the line totals' sum: 10 × 25% = 2.5 → 2; 10 × 35% = 3.5 → 4.
    expect(totalsOf(await quote(t.live, { line_items: [line(10)], tax_percent: 25 }))).toEqual({ subtotal: 10, discount_total: 0, tax_total: 2, total: 12 });
    expect(totalsOf(await quote(t.live, { line_items: [line(10)], tax_percent: 35 }))).toEqual({ subtotal: 10, discount_total: 0, tax_total: 4, total: 14 });
  });

  it('computes decimals exactly (no binary fractions) and sums the rounded lines', async () => {
    const t = await tenant(app);
    // 1.1 × 333 = 366.3 → 366; × 0.875 = 320.5125 → 321. 0.1 × 3 = 0.3 → 0 (never 0.30000000000000004).
    // 2.675 × 100 = 267.5 → 268 (a double would make 267.49999…); tax 8.875% of 321 + 0 + 268 = 52.27 → 52.
    const q = await quote(t.live, { line_items: [line(333, 1.1, 12.5), line(3, 0.1), line(100, 2.675)], tax_percent: 8.875 });
    expect(q.line_items.map((l: Json) => [l.subtotal, l.discount, l.total])).toEqual([[366, 45, 321], [0, 0, 0], [268, 0, 268]]);
    expect(totalsOf(q)).toEqual({ subtotal: 634, discount_total: 45, tax_total: 52, total: 641 });
    expect(q.line_items[0]).toEqual({ product_id: null, name: 'Item', description: null, quantity: 1.1, unit_price: 333, discount_percent: 12.5, subtotal: 366, discount: 45, total: 321 });
    // Large amounts stay exact: 999,999.9999 × 10^9 minor units.
    const big = await quote(t.live, { line_items: [line(1_000_000_000, 999_999.9999)] });
    expect(big.total).toBe(999_999_999_900_000);
  });

  it('refuses amounts from the client, too many decimals, bad bounds and totals beyond safe integers', async () => {
    const t = await tenant(app);
    for (const body of [
      { title: 'X', total: 5 }, { title: 'X', subtotal: 5 }, { title: 'X', status: 'sent' },
      { title: 'X', line_items: [{ ...line(1), total: 1 }] }, { title: 'X', line_items: [line(1, 0)] }, { title: 'X', line_items: [line(1, -1)] },
      { title: 'X', line_items: [line(-1)] }, { title: 'X', line_items: [line(1.5)] }, { title: 'X', line_items: [line(1, 1, 101)] }, { title: 'X', tax_percent: 100.5 },
      { title: 'X', line_items: Array.from({ length: 101 }, () => line(1)) },
    ]) await fails(t.live.post('/v1/quotes', body), 422);
    const places = await fails(t.live.post('/v1/quotes', { title: 'X', line_items: [line(1, 1.00001)], tax_percent: 1.23456 }), 422);
    expect(places.detail).toEqual([
      { loc: ['body', 'line_items', '0', 'quantity'], msg: 'must have at most 4 decimal places', type: 'value_error.decimal' },
      { loc: ['body', 'tax_percent'], msg: 'must have at most 4 decimal places', type: 'value_error.decimal' },
    ]);
    const huge = await fails(t.live.post('/v1/quotes', { title: 'X', line_items: Array.from({ length: 10 }, () => line(1e12, 1_000_000)) }), 422);
    expect(huge.detail[0].loc).toEqual(['body', 'line_items']);
    expect((await t.live.get('/v1/quotes')).json().pagination.total).toBe(0);
  });
});

describe('product lines', () => {
  it('takes the product\'s name, description and price unless given; checks currency, activity and tenant', async () => {
    const t = await tenant(app);
    const seat = await product(t.live, { name: 'Seat', unit_price: 12_000, description: 'Per year' });
    const q = await quote(t.live, { line_items: [{ product_id: seat.id, quantity: 10 }, { product_id: seat.id, name: 'Seat (discounted)', unit_price: 10_000, description: null }] });
    expect(q.line_items).toEqual([
      { product_id: seat.id, name: 'Seat', description: 'Per year', quantity: 10, unit_price: 12_000, discount_percent: 0, subtotal: 120_000, discount: 0, total: 120_000 },
      { product_id: seat.id, name: 'Seat (discounted)', description: null, quantity: 1, unit_price: 10_000, discount_percent: 0, subtotal: 10_000, discount: 0, total: 10_000 },
    ]);
    // The quote keeps what its lines took when the product changes.
    await ok(t.live.patch(`/v1/products/${seat.id}`, { unit_price: 99_999 }));
    expect((await ok(t.live.get(`/v1/quotes/${q.id}`))).total).toBe(130_000);
    // Its product deleted, the draft still reads and edits; recomputing its own lines (a new currency)
    // is 409 naming the product, not a 404 that would say the quote is missing.
    const gone = await product(t.live, { name: 'Gone' });
    const orphan = await quote(t.live, { line_items: [{ product_id: gone.id }] });
    await ok(t.live.delete(`/v1/products/${gone.id}`));
    expect(await ok(t.live.patch(`/v1/quotes/${orphan.id}`, { title: 'Renamed' }))).toMatchObject({ title: 'Renamed', total: orphan.total });
    await fails(t.live.patch(`/v1/quotes/${orphan.id}`, { currency: 'EUR' }), 409, `Product ${gone.id} of this quote's line items was deleted; give line_items to change the quote`);
    expect(await ok(t.live.patch(`/v1/quotes/${orphan.id}`, { currency: 'EUR', line_items: [{ name: 'Gone', unit_price: 5 }] }))).toMatchObject({ currency: 'EUR', total: 5 });

    const euro = await product(t.live, { currency: 'EUR' });
    await fails(t.live.post('/v1/quotes', { title: 'X', line_items: [{ product_id: euro.id }] }), 400, `Product ${euro.id} is priced in EUR; the quote is in USD`);
    expect((await quote(t.live, { currency: 'eur', line_items: [{ product_id: euro.id }] })).currency).toBe('EUR');
    await fails(t.live.patch(`/v1/quotes/${q.id}`, { currency: 'EUR' }), 400, `Product ${seat.id} is priced in USD; the quote is in EUR`);
    const old = await product(t.live, { active: false });
    await fails(t.live.post('/v1/quotes', { title: 'X', line_items: [{ product_id: old.id }] }), 400, `Product ${old.id} is not active`);
    const foreign = await product((await tenant(app)).live);
    await fails(t.live.post('/v1/quotes', { title: 'X', line_items: [{ product_id: foreign.id }] }), 404, 'Product not found');
    await fails(t.test.post('/v1/quotes', { title: 'X', line_items: [{ product_id: seat.id }] }), 404, 'Product not found');
    await fails(t.live.post('/v1/quotes', { title: 'X', line_items: [{ unit_price: 1 }] }), 400, 'line_items[0].name is required without a product_id', { param: 'line_items.0.name' });
    await fails(t.live.post('/v1/quotes', { title: 'X', line_items: [line(1), { name: 'Free' }] }), 400, 'line_items[1].unit_price is required without a product_id', { param: 'line_items.1.unit_price' });
    await fails(t.live.post('/v1/quotes', { title: 'X', currency: 'XYZ' }), 422);
  });
});

describe('drafts', () => {
  it('edits a draft (lines replaced, totals recomputed, event with previous values) and deletes it', async () => {
    const t = await tenant(app);
    const q = await quote(t.live, { line_items: [line(1000, 2)] });
    const changed = await ok(t.live.patch(`/v1/quotes/${q.id}`, { line_items: [line(500, 3)], tax_percent: 10 }));
    expect(totalsOf(changed)).toEqual({ subtotal: 1500, discount_total: 0, tax_total: 150, total: 1650 });
    expect(changed.line_items).toHaveLength(1);
    const taxed = await ok(t.live.patch(`/v1/quotes/${q.id}`, { tax_percent: 20 }));
    expect(taxed.total).toBe(1800);
    const [event] = (await eventsOf(t.live, 'quote.updated')).filter((e) => e.data.object.tax_percent === 20);
    // The totals the new tax changed come with it.
    expect(event.previous_attributes).toEqual({ tax_percent: 10, tax_total: 150, total: 1650 });
    expect(await ok(t.live.patch(`/v1/quotes/${q.id}`, { title: 'Renamed', valid_until: null }))).toMatchObject({ title: 'Renamed', total: 1800 });
    await fails(t.live.patch(`/v1/quotes/${q.id}`, {}), 400, 'No fields to update');
    await fails(t.live.patch(`/v1/quotes/${q.id}`, { revision: 3 }), 422);
    expect(await ok(t.live.delete(`/v1/quotes/${q.id}`))).toEqual({ id: q.id, deleted: true });
    await fails(t.live.get(`/v1/quotes/${q.id}`), 404, 'Quote not found');
  });

  it('refuses edits and deletes of any quote that is not a draft (409)', async () => {
    const t = await tenant(app);
    const q = await sentQuote(t.live);
    const detail = `Only draft quotes can be changed; this quote is sent (POST /v1/quotes/${q.id}/edit-as-draft makes it a draft again)`;
    await fails(t.live.patch(`/v1/quotes/${q.id}`, { title: 'Late change' }), 409, detail);
    await fails(t.live.delete(`/v1/quotes/${q.id}`), 409, detail.replace('changed', 'deleted'));
    expect((await ok(t.live.get(`/v1/quotes/${q.id}`))).title).toBe('Team plan');
  });
});

describe('seller operations', () => {
  it('sends a draft with a line and a contact: a public token, sent_at and quote.sent; refuses what cannot be sent', async () => {
    const t = await tenant(app);
    const to = await contact(t.live);
    const empty = await quote(t.live, { contact_id: to.id });
    await fails(t.live.post(`/v1/quotes/${empty.id}/send`), 400, 'A quote needs at least one line item to be sent');
    const nobody = await quote(t.live, { line_items: [line(100)] });
    await fails(t.live.post(`/v1/quotes/${nobody.id}/send`), 400, 'A quote needs a contact_id to be sent');
    const late = await quote(t.live, { contact_id: to.id, line_items: [line(100)], valid_until: now() - 60 });
    await fails(t.live.post(`/v1/quotes/${late.id}/send`), 400, 'valid_until has passed: set a later one before sending');
    await fails(t.live.post('/v1/quotes/quo_missing/send'), 404, 'Quote not found');
    await fails(t.live.post(`/v1/quotes/${empty.id}/send`, { now: true }), 422);

    const ready = await quote(t.live, { contact_id: to.id, line_items: [line(100)] });
    const sent = await ok(t.live.post(`/v1/quotes/${ready.id}/send`));
    expect(sent).toMatchObject({ status: 'sent', revision: 1 });
    expect(sent.public_token).toMatch(/^[\w-]{43}$/);
    expect(sent.sent_at).toBeGreaterThanOrEqual(now() - 5);
    const [event] = await eventsOf(t.live, 'quote.sent');
    // The token is answered by the send only: the event, like every read, never holds it.
    expect(event.data.object).toEqual({ ...sent, public_token: null });
    expect(event.previous_attributes).toEqual({ status: 'draft', sent_at: null });
    await fails(t.live.post(`/v1/quotes/${sent.id}/send`), 409, 'A quote that is sent cannot be sent');
    // A contact deleted before sending leaves the quote without one.
    const gone = await contact(t.live);
    const orphan = await quote(t.live, { contact_id: gone.id, line_items: [line(1)] });
    await ok(t.live.delete(`/v1/contacts/${gone.id}`));
    expect((await ok(t.live.get(`/v1/quotes/${orphan.id}`))).contact_id).toBeNull();
    await fails(t.live.post(`/v1/quotes/${orphan.id}/send`), 400, 'A quote needs a contact_id to be sent');
  });

  it('voids draft, sent and viewed quotes; refuses the others', async () => {
    const t = await tenant(app);
    const draft = await quote(t.live);
    expect(await ok(t.live.post(`/v1/quotes/${draft.id}/void`))).toMatchObject({ status: 'void' });
    const sent = await sentQuote(t.live);
    const voided = await ok(t.live.post(`/v1/quotes/${sent.id}/void`));
    expect(voided.status).toBe('void');
    expect(voided.voided_at).toBeGreaterThan(0);
    const viewed = await sentQuote(t.live);
    await ok(app.inject({ method: 'GET', url: `/v1/public/quotes/${viewed.public_token}` }) as never);
    expect(await ok(t.live.post(`/v1/quotes/${viewed.id}/void`))).toMatchObject({ status: 'void' });
    await fails(t.live.post(`/v1/quotes/${sent.id}/void`), 409, 'A quote that is void cannot be voided');
    await fails(t.live.post(`/v1/quotes/${sent.id}/edit-as-draft`), 409, 'A quote that is void cannot be edited as a draft (duplicate it instead)');
    await fails(t.live.post(`/v1/quotes/${sent.id}/send`), 409, 'A quote that is void cannot be sent');
    const events = await eventsOf(t.live, 'quote.voided');
    expect(events).toHaveLength(3);
    expect(events.find((e) => e.data.object.id === viewed.id)!.previous_attributes).toMatchObject({ status: 'viewed', voided_at: null });
  });

  it('duplicates any quote into a new numbered draft with the same contents', async () => {
    const t = await tenant(app);
    await ok(t.live.post('/v1/fields', { object: 'quotes', name: 'region', data_type: 'text' }), 201);
    const sent = await sentQuote(t.live, { tax_percent: 20, terms: 'Net 30', custom_fields: { region: 'EMEA' } });
    await ok(t.live.post(`/v1/quotes/${sent.id}/void`));
    const copy = await ok(t.live.post(`/v1/quotes/${sent.id}/duplicate`), 201);
    expect(copy).toMatchObject({ number: 'Q-0002', status: 'draft', revision: 1, public_token: null, sent_at: null, title: sent.title, contact_id: sent.contact_id, terms: 'Net 30', custom_fields: { region: 'EMEA' } });
    expect(copy.id).not.toBe(sent.id);
    expect(copy.line_items).toEqual(sent.line_items);
    expect(totalsOf(copy)).toEqual(totalsOf(sent));
    expect((await eventsOf(t.live, 'quote.created')).some((e) => e.data.object.id === copy.id)).toBe(true);
    await fails(t.live.post('/v1/quotes/quo_missing/duplicate'), 404, 'Quote not found');
  });

  it('edits a sent quote as a draft: revision + 1, token retired, sendable again with a new link', async () => {
    const t = await tenant(app);
    const sent = await sentQuote(t.live);
    await fails(t.live.post(`/v1/quotes/${(await quote(t.live)).id}/edit-as-draft`), 409, 'A quote that is draft cannot be edited as a draft (duplicate it instead)');
    const draft = await ok(t.live.post(`/v1/quotes/${sent.id}/edit-as-draft`));
    expect(draft).toMatchObject({ status: 'draft', revision: 2, public_token: null, sent_at: null, number: sent.number });
    const [event] = await eventsOf(t.live, 'quote.returned_to_draft');
    expect(event.previous_attributes).toMatchObject({ status: 'sent', revision: 1 });
    expect(JSON.stringify(event)).not.toContain(sent.public_token);
    expect((await app.inject({ method: 'GET', url: `/v1/public/quotes/${sent.public_token}` })).statusCode).toBe(404);
    const edited = await ok(t.live.patch(`/v1/quotes/${sent.id}`, { line_items: [line(999)] }));
    expect(edited.total).toBe(999);
    const again = await ok(t.live.post(`/v1/quotes/${sent.id}/send`));
    expect(again.public_token).not.toBe(sent.public_token);
    expect((await app.inject({ method: 'GET', url: `/v1/public/quotes/${sent.public_token}` })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: `/v1/public/quotes/${again.public_token}` })).json().data).toMatchObject({ revision: 2, total: 999 });
  });
});

describe('expiry', () => {
  it('reads a sent or viewed quote past valid_until as expired, then the scheduled job records it once', async () => {
    expect(JOB_KINDS).toContain(quoteExpiry);
    // The file's app runs no jobs from here on: the reads below come before the expiry is recorded.
    await app.services.workers?.stop();
    const t = await tenant(app);
    const fresh = await sentQuote(t.live, { valid_until: now() + 3600 });
    const [a, b] = await expiringQuotes(t.live, 2);
    expect(await ok(t.live.get(`/v1/quotes/${a.id}`))).toMatchObject({ status: 'expired', valid_until: a.valid_until });
    expect(ids((await t.live.get('/v1/quotes?status=expired')).json())).toEqual([a.id, b.id].sort());
    expect(ids((await t.live.get('/v1/quotes?status=sent')).json())).toEqual([fresh.id]);
    expect((await t.live.get(`/v1/contacts/${a.contact_id}/quotes`)).json().data[0].status).toBe('expired');
    await fails(t.live.post(`/v1/quotes/${a.id}/void`), 409, 'A quote that is expired cannot be voided');
    expect((await app.inject({ method: 'GET', url: `/v1/public/quotes/${a.public_token}` })).json().data.status).toBe('expired');
    expect(await eventsOf(t.live, 'quote.expired')).toEqual([]);

    runners.start([quoteExpiry as JobKind<never>]);
    let events: Json[] = [];
    for (const deadline = Date.now() + 10_000; events.length < 2 && Date.now() < deadline; await sleep(25)) events = await eventsOf(t.live, 'quote.expired');
    expect(events.map((e) => e.data.object.id).sort()).toEqual([a.id, b.id].sort());
    expect(events[0].previous_attributes).toMatchObject({ status: 'sent' });
    expect(events[0].data.object.status).toBe('expired');
    await runExpiry(t, a);
    expect(await eventsOf(t.live, 'quote.expired')).toHaveLength(2);
    expect((await ok(t.live.get(`/v1/quotes/${fresh.id}`))).status).toBe('sent');
    // An expired quote can be revised and sent again with a later date.
    await ok(t.live.post(`/v1/quotes/${b.id}/edit-as-draft`));
    await ok(t.live.patch(`/v1/quotes/${b.id}`, { valid_until: now() + 3600 }));
    expect((await ok(t.live.post(`/v1/quotes/${b.id}/send`))).status).toBe('sent');
  }, 60_000);
});

describe('lists of quotes', () => {
  it('lists a contact\'s and a deal\'s quotes, filters by status, deal, contact, number and title, with exact totals', async () => {
    const t = await tenant(app);
    const deal = await ok(t.live.post('/v1/deals', { name: 'Big deal' }), 201);
    const to = await contact(t.live);
    const q1 = await quote(t.live, { title: 'Alpha plan', deal_id: deal.id, contact_id: to.id, line_items: [line(1)] });
    const q2 = await quote(t.live, { title: 'Beta plan', deal_id: deal.id });
    const q3 = await quote(t.live, { title: 'Gamma', contact_id: to.id });
    await ok(t.live.post(`/v1/quotes/${q1.id}/send`));
    const page = async (url: string) => (await t.live.get(url)).json();
    expect(ids(await page(`/v1/contacts/${to.id}/quotes`))).toEqual([q1.id, q3.id].sort());
    expect(ids(await page(`/v1/deals/${deal.id}/quotes`))).toEqual([q1.id, q2.id].sort());
    const first = await page(`/v1/deals/${deal.id}/quotes?limit=1`);
    expect(first.pagination).toMatchObject({ total: 2, has_next: true });
    expect((await page(`/v1/deals/${deal.id}/quotes?limit=1&cursor=${first.next_cursor}`)).data[0].id).toBe(q1.id);
    await fails(t.live.get('/v1/contacts/con_missing/quotes'), 404, 'Contact not found');
    await fails(t.live.get('/v1/deals/dea_missing/quotes'), 404, 'Deal not found');
    await fails((await tenant(app)).live.get(`/v1/deals/${deal.id}/quotes`), 404, 'Deal not found');
    expect(ids(await page('/v1/quotes?status=sent'))).toEqual([q1.id]);
    expect((await page('/v1/quotes?status=draft')).pagination.total).toBe(2);
    expect(ids(await page(`/v1/quotes?deal_id=${deal.id}&contact_id=${to.id}`))).toEqual([q1.id]);
    expect(ids(await page('/v1/quotes?number=Q-0003'))).toEqual([q3.id]);
    expect(ids(await page('/v1/quotes?title=PLAN'))).toEqual([q1.id, q2.id].sort());
    await fails(t.live.get('/v1/quotes?status=pending'), 400, 'Invalid status: must be one of draft, sent, viewed, accepted, declined, expired, void', { param: 'status' });
    // Deleting the deal leaves its quotes without one.
    await ok(t.live.delete(`/v1/deals/${deal.id}`));
    expect((await ok(t.live.get(`/v1/quotes/${q2.id}`))).deal_id).toBeNull();
  });

  it('carries custom fields and is found by full-text search', async () => {
    const t = await tenant(app);
    await ok(t.live.post('/v1/fields', { object: 'quotes', name: 'po_number', data_type: 'text' }), 201);
    const q = await quote(t.live, { title: 'Renewal for Analytical Engines', terms: 'Net 45', custom_fields: { po_number: 'PO-7' } });
    await quote(t.live, { title: 'Other' });
    expect(ids((await t.live.get('/v1/quotes?custom_fields.po_number=PO-7')).json())).toEqual([q.id]);
    expect(ids((await t.live.post('/v1/search/quotes', { q: 'analytical renew' })).json())).toEqual([q.id]);
    expect(ids((await t.live.post('/v1/search/quotes', { q: 'Q 0001' })).json())).toEqual([q.id]);
    expect((await (await tenant(app)).live.post('/v1/search/quotes', { q: 'analytical' })).json().pagination.total).toBe(0);
  });
});

describe('isolation', () => {
  it('answers another tenant\'s and the other mode\'s quotes like missing ones, on every operation', async () => {
    const t = await tenant(app);
    const u = await tenant(app);
    const mine = await sentQuote(t.live);
    const draft = await quote(t.live);
    for (const other of [u.live, u.test, t.test]) {
      for (const [method, url] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/send'], ['POST', '/void'], ['POST', '/duplicate'], ['POST', '/edit-as-draft']] as const) {
        for (const id of [mine.id, draft.id]) await fails(other(method, `/v1/quotes/${id}${url}`, method === 'PATCH' ? { title: 'X' } : method === 'POST' ? {} : undefined), 404, 'Quote not found');
      }
      await fails(other.post('/v1/quotes', { title: 'X', contact_id: mine.contact_id }), 404, 'Contact not found');
      await fails(other.get(`/v1/contacts/${mine.contact_id}/quotes`), 404, 'Contact not found');
      expect((await other.get('/v1/quotes')).json().data.some((x: Json) => x.id === mine.id)).toBe(false);
    }
    expect(await ok(t.live.get(`/v1/quotes/${mine.id}`))).toEqual({ ...mine, public_token: null });
  });
});

describe('the sandbox', () => {
  it('holds products and a sent quote on a deal, whose link a new send makes known', async () => {
    const t = await tenant(app);
    expect((await t.test.get('/v1/products')).json().pagination.total).toBe(5);
    expect((await t.test.get('/v1/quotes/quotable-products')).json().pagination.total).toBe(4);
    const [q] = (await t.test.get('/v1/quotes')).json().data;
    expect(q).toMatchObject({ number: 'Q-0001', status: 'sent', tax_percent: 8.875 });
    expect(q.deal_id).toMatch(/^dea_/);
    expect(q.total).toBe(q.subtotal - q.discount_total + q.tax_total);
    // Its token was shown to no one (only its hash is stored): sending it again mints one to open.
    expect(q.public_token).toBeNull();
    await ok(t.test.post(`/v1/quotes/${q.id}/edit-as-draft`));
    const resent = await ok(t.test.post(`/v1/quotes/${q.id}/send`));
    expect((await app.inject({ method: 'GET', url: `/v1/public/quotes/${resent.public_token}` })).statusCode).toBe(200);
    expect((await t.live.get('/v1/quotes')).json().pagination.total).toBe(0);
    expect((await quote(t.test)).number).toBe('Q-0002');
  });
});
