// Schemas of quotes: the states, a line item as sent and as answered, the public form of a quote and
// the bodies of the public answers.
import { Type } from 'typebox';
import { Nullable, Str, StringEnum } from '../../platform/schemas.ts';

export const QUOTE_STATES = ['draft', 'sent', 'viewed', 'accepted', 'declined', 'expired', 'void'] as const;
export type QuoteState = (typeof QUOTE_STATES)[number];

/** Most lines on one quote. */
export const MAX_LINES = 100;

const percent = (description: string, example: number) => Type.Number({ minimum: 0, maximum: 100, description, examples: [example] });
const amount = (description: string, example: number) => Type.Integer({ description, examples: [example] });

export const LineInput = Type.Object({
  product_id: Type.Optional(Str({ description: 'A product of the catalog: the line takes its name, description and unit price unless given here. It must be active and priced in the quote\'s currency (else 400)', maxLength: 64, examples: ['prd_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  name: Type.Optional(Str({ description: 'What is sold; required without `product_id`', minLength: 1, maxLength: 200, examples: ['Onboarding workshop'] })),
  description: Type.Optional(Nullable(Str({ description: 'Detail shown under the name', maxLength: 2000, examples: ['Two half-days, remote'] }))),
  quantity: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'How many units: a positive decimal of at most 4 decimal places (1.5 hours); 1 when omitted', examples: [3] })),
  unit_price: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e12, description: 'Price of one unit in integer minor units of the quote\'s currency; required without `product_id`', examples: [150_000] })),
  discount_percent: Type.Optional(percent('Discount on the line in percent, at most 4 decimal places; 0 when omitted', 10)),
}, { additionalProperties: false, description: 'A line of a quote: a product of the catalog or a free line' });

export const LineOutput = Type.Object({
  product_id: Nullable(Type.String({ description: 'The product the line was made from; null for a free line', examples: ['prd_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  name: Type.String({ description: 'What is sold', examples: ['Onboarding workshop'] }),
  description: Nullable(Type.String({ description: 'Detail shown under the name', examples: ['Two half-days, remote'] })),
  quantity: Type.Number({ description: 'How many units', examples: [3] }),
  unit_price: amount('Price of one unit in minor units', 150_000),
  discount_percent: Type.Number({ description: 'Discount on the line in percent', examples: [10] }),
  subtotal: amount('quantity × unit_price, rounded half to even to a minor unit', 450_000),
  discount: amount('subtotal − total', 45_000),
  total: amount('quantity × unit_price × (1 − discount_percent/100), rounded half to even to a minor unit', 405_000),
}, { description: 'A line of a quote with its computed amounts' });

export const LinesInput = Type.Array(LineInput, { maxItems: MAX_LINES, description: `The lines, at most ${MAX_LINES}, replacing all lines when given`, examples: [[{ name: 'Onboarding workshop', quantity: 1, unit_price: 150_000 }]] });
export const LinesOutput = Type.Array(LineOutput, { description: 'The lines with their computed amounts' });

export const TokenParams = Type.Object({
  token: Str({ description: 'The public token of a sent quote (from its `public_token`)', minLength: 1, maxLength: 100, examples: ['Xq3v0sQx2kH1n8bTqR6yWc4dZp7fLm9aJ0eUuVtYiOs'] }),
});

export const AcceptBody = Type.Object({
  name: Str({ description: 'Full name of the person accepting, recorded as the signer', minLength: 1, maxLength: 200, examples: ['Ada Lovelace'] }),
}, { additionalProperties: false, description: 'Acceptance of a quote' });

export const DeclineBody = Type.Object({
  reason: Type.Optional(Nullable(Str({ description: 'Why the quote is declined, for the seller', maxLength: 2000, examples: ['Over budget this quarter'] }))),
}, { additionalProperties: false, description: 'Refusal of a quote' });

export const PublicQuoteSchema = Type.Object({
  number: Type.String({ description: 'The quote\'s number', examples: ['Q-0001'] }),
  revision: Type.Integer({ description: 'The revision of the quote this link shows', examples: [1] }),
  title: Type.String({ description: 'Title of the quote', examples: ['Team plan for Analytical Engines'] }),
  seller: Type.String({ description: 'Name of the organization that sent the quote', examples: ['Acme Corp'] }),
  status: StringEnum(QUOTE_STATES, { description: 'Where the quote stands (never `draft` here)', examples: ['viewed'] }),
  currency: Type.String({ description: 'ISO 4217 currency of every amount', examples: ['USD'] }),
  line_items: Type.Array(Type.Omit(LineOutput, ['product_id']), { description: 'The lines with their amounts' }),
  subtotal: amount('Sum of the lines\' subtotals', 450_000),
  discount_total: amount('Sum of the lines\' discounts', 45_000),
  tax_percent: Type.Number({ description: 'Tax rate in percent', examples: [20] }),
  tax_total: amount('Tax on (subtotal − discount_total), rounded half to even', 81_000),
  total: amount('subtotal − discount_total + tax_total', 486_000),
  valid_until: Nullable(Type.Integer({ description: 'Last moment the quote can be accepted, unix seconds; null: no limit', examples: [1767225600] })),
  terms: Nullable(Type.String({ description: 'Terms of the offer', examples: ['Payment within 30 days of invoice'] })),
  sent_at: Nullable(Type.Integer({ description: 'When the quote was sent, unix seconds', examples: [1767225600] })),
  accepted_at: Nullable(Type.Integer({ description: 'When it was accepted, unix seconds', examples: [1767225600] })),
  signer_name: Nullable(Type.String({ description: 'Who accepted it', examples: ['Ada Lovelace'] })),
  declined_at: Nullable(Type.Integer({ description: 'When it was declined, unix seconds', examples: [1767225600] })),
}, { title: 'PublicQuote', description: 'A sent quote as its recipient sees it' });
