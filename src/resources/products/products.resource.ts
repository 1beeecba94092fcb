// Products: what quotes are made of. A quote line that names a product takes its name, description
// and unit price (each may be overridden on the line) and must be in the quote's currency.
import { defineResource } from '../../platform/resource/define.ts';
import { boolean, money, text } from '../../platform/resource/fields.ts';
import { normalizeCurrency } from '../../platform/currency.ts';

export const products = defineResource({
  name: 'product', plural: 'products', prefix: 'prd', table: 'products', notFound: 'Product not found',
  tag: 'Products', tagDescription: 'The catalog of products and prices that quotes are made of',
  fields: {
    name: text({ required: true, min: 1, description: 'Name of the product, shown on quotes', example: 'Team plan, per seat per year' }),
    sku: text({ unique: true, min: 1, max: 100, description: 'Stock-keeping unit: your own code of the product, unique within the organization and mode (a second holder is 409); `PUT /v1/products/assert` matches on it', example: 'TEAM-SEAT-Y' }),
    unit_price: money({ required: true, description: 'Price of one unit in integer minor units of `currency` (cents for USD)', example: 12_000 }),
    currency: text({ nullable: false, default: 'USD', min: 3, max: 3, description: 'ISO 4217 currency code of `unit_price`, stored upper-case; `USD` when omitted. Only quotes in this currency can use the product', example: 'USD' }),
    description: text({ max: 2000, description: 'Description shown under the product\'s name on quotes', example: 'Collaboration features for teams up to 100 seats' }),
    active: boolean({ nullable: false, default: true, description: 'Whether new quote lines may use the product (`GET /v1/quotes/quotable-products` lists the active ones); true when omitted', example: true }),
  },
  filters: {
    active: { op: 'eq', description: 'Only active (true) or inactive (false) products', normalize: (v: boolean) => (v ? 1 : 0) },
    currency: { op: 'eq', description: 'Only products priced in this currency (upper-case)', normalize: (v: string) => v.toUpperCase() },
    sku: { op: 'eq', description: 'The product of this SKU, exactly' },
    name: { op: 'contains', description: 'Name contains this text, case-insensitively' },
  },
  search: ['name', 'sku', 'description'],
  counter: 'products',
  customFields: true,
  assert: { keys: [{ field: 'sku' }] },
  hooks: { beforeWrite: async (_w, row) => normalizeCurrency(row) },
  routes: {
    docs: {
      create: { description: 'Creates a product. A `sku` that another product of the organization already has is 409 naming that product; a currency that is not ISO 4217 is 422.' },
      update: { description: 'Changes the fields given; quotes already made keep the name, description and price their lines took. An empty body is 400 `No fields to update`.' },
      delete: { description: 'Deletes a product; quote lines that used it keep their name, description and price. Reading it afterwards is 404.' },
    },
    errors: { create: [409], update: [409] },
  },
});
