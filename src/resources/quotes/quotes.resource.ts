// Quotes: numbered offers of lines (products of the catalog or free lines) to a contact, often on a
// deal, with totals the service computes. A draft is edited freely; sending it freezes it and mints a
// public link where the recipient views, accepts or declines it (quotes.lifecycle.ts, public.routes.ts).
import { Type } from 'typebox';
import { defineResource } from '../../platform/resource/define.ts';
import { decimal, int, json, money, ref, text, timestamp } from '../../platform/resource/fields.ts';
import { Nullable, StringEnum } from '../../platform/schemas.ts';
import { LinesInput, LinesOutput, QUOTE_STATES } from './quotes.schemas.ts';
import { QUOTE_LIFECYCLE } from './quotes.lifecycle.ts';
import { asOf, beforeDelete, beforeWrite, statusIs } from './quotes.store.ts';

const computed = (description: string, example: number) => money({ readOnly: true, nullable: false, default: 0, description: `${description}; computed by the service, read-only`, example });
const stamp = (description: string) => timestamp({ readOnly: true, description: `${description}, unix seconds; read-only`, example: 1767225600 });

export const quotes = defineResource({
  name: 'quote', plural: 'quotes', prefix: 'quo', table: 'quotes', notFound: 'Quote not found',
  tag: 'Quotes', tagDescription: 'Quotes of products and prices to contacts, sent as a public link to accept or decline',
  fields: {
    title: text({ required: true, min: 1, description: 'Title of the quote, shown to its recipient', example: 'Team plan for Analytical Engines' }),
    number: text({ readOnly: true, unique: true, nullable: false, description: 'Sequential per organization and mode, without gaps: `Q-0001`, `Q-0002`, …; kept by revisions, new for a duplicate; read-only', example: 'Q-0001' }),
    deal_id: ref('deals', { onDelete: 'set null', prefix: 'dea', description: 'The deal the quote is for; null once that deal is deleted' }),
    contact_id: ref('contacts', { onDelete: 'set null', prefix: 'con', description: 'The contact the quote is addressed to; needed to send it' }),
    currency: text({ nullable: false, default: 'USD', min: 3, max: 3, description: 'ISO 4217 currency code of every amount, stored upper-case; `USD` when omitted. Product lines must be in it', example: 'USD' }),
    line_items: json({ nullable: false, default: [], input: LinesInput, output: LinesOutput, description: 'The lines; when given, they replace all lines' }),
    tax_percent: decimal({ nullable: false, default: 0, max: 100, description: 'Tax rate in percent (at most 4 decimal places) applied to the sum of the line totals; 0 when omitted', example: 20 }),
    subtotal: computed('Sum of the lines\' subtotals (quantity × unit_price, each rounded half to even)', 450_000),
    discount_total: computed('Sum of the lines\' discounts', 45_000),
    tax_total: computed('Tax: (subtotal − discount_total) × tax_percent / 100, rounded half to even', 81_000),
    total: computed('subtotal − discount_total + tax_total', 486_000),
    valid_until: timestamp({ description: 'Last moment the quote can be accepted, unix seconds; a sent or viewed quote past it is `expired`. Null: no limit', example: 1767225600 }),
    terms: text({ max: 10_000, description: 'Terms of the offer, shown to the recipient', example: 'Payment within 30 days of invoice' }),
    revision: int({ readOnly: true, nullable: false, default: 1, description: 'Starts at 1; each edit-as-draft adds one (and retires the public link of the revision before); read-only', example: 1 }),
    sent_at: stamp('When the quote was sent'),
    viewed_at: stamp('When its recipient first opened it'),
    accepted_at: stamp('When it was accepted'),
    signer_name: text({ readOnly: true, description: 'The full name the recipient gave when accepting; read-only', example: 'Ada Lovelace' }),
    signer_ip: text({ readOnly: true, description: 'The client address the acceptance came from; read-only', example: '203.0.113.7' }),
    declined_at: stamp('When it was declined'),
    decline_reason: text({ readOnly: true, max: 2000, description: 'The reason the recipient gave when declining; read-only', example: 'Over budget this quarter' }),
    voided_at: stamp('When the seller voided it'),
  },
  computed: {
    // Only the token's hash is stored (quote_links), so a copy of the database opens no quote.
    public_token: Nullable(Type.String({
      description: 'The token of the public link (`/q/{public_token}` for people, `/v1/public/quotes/{public_token}` as JSON), in the answer of `POST /v1/quotes/{id}/send` only: only its hash is stored, so every other answer, listing and event has null; read-only',
      examples: ['Xq3v0sQx2kH1n8bTqR6yWc4dZp7fLm9aJ0eUuVtYiOs'],
    })),
  },
  filters: {
    status: { op: 'where', where: statusIs, schema: StringEnum(QUOTE_STATES, { description: 'Only quotes in this state now (`expired` includes quotes past their date)', examples: ['sent'] }) },
    deal_id: { op: 'eq', description: 'Only quotes for this deal' },
    contact_id: { op: 'eq', description: 'Only quotes to this contact' },
    number: { op: 'eq', description: 'The quote of this number, exactly' },
    title: { op: 'contains', description: 'Title contains this text, case-insensitively' },
  },
  search: ['number', 'title', 'terms'],
  counter: 'quotes',
  customFields: true,
  // A sent quote expires with time (applied on every read by `asOf`), so answers are never kept.
  readsClock: true,
  hooks: { beforeWrite, beforeDelete, asOf },
  lifecycle: QUOTE_LIFECYCLE,
  eventDocs: {
    created: 'A draft quote was created (also by `POST /v1/quotes/{id}/duplicate`)',
    updated: 'A draft quote was changed; `previous_attributes` holds the earlier values',
    deleted: 'A draft quote was deleted; the object is the quote as it was',
  },
  routes: {
    docs: {
      list: { description: 'Lists quotes, newest first, with an exact `total`. Filters combine: `status` (as of now: a quote past `valid_until` is `expired`), `deal_id`, `contact_id`, `number`, `title` (contains, case-insensitive).' },
      create: { description: 'Creates a draft quote with the next number of the organization (`Q-0001`, …). Lines take a product\'s name, description and price unless given; a product of another currency or an inactive product is 400, an unknown one 404; a free line needs `name` and `unit_price` (400). Amounts are computed by the service (integer minor units; each line rounded half to even). Quantities and percentages have at most 4 decimal places (422).' },
      update: { description: 'Changes the fields given of a draft; any other state is 409. Lines, currency and tax rate recompute the totals. An empty body is 400 `No fields to update`.' },
      delete: { description: 'Deletes a draft quote; any other state is 409 (void it instead). Reading it afterwards is 404.' },
    },
    errors: { create: [404, 409], update: [404, 409], delete: [409] },
  },
});
