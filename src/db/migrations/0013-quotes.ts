// Products, quotes and the public links of sent quotes. A quote keeps its line items as JSON in its
// own row (written and read whole, always with the totals computed from them). `quote_links` is looked
// up by token before any organization is known (like API keys by their hash): its key is the token.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createSearchIndex, createTenantTable, createTenantUnique } from '../migration-helpers.ts';

/** The full-text fields of products and quotes (their definitions' `search`). */
export const QUOTE_SEARCH_COLUMNS = {
  products: ['name', 'sku', 'description'],
  quotes: ['number', 'title', 'terms'],
};

export function quotes(dialect: Dialect) {
  const { big, json } = columnTypes(dialect);
  const double = dialect === 'postgres' ? sql`double precision` : sql`real`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'products', (t) => t
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('sku', 'text')
        .addColumn('unit_price', big, (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('custom_fields', json));
      await createTenantUnique(db, 'products', 'products_sku', ['sku']);
      await db.schema.createIndex('products_active').on('products').columns(['org_id', 'mode', 'active', 'id']).execute();

      await createTenantTable(db, dialect, 'quotes', (t) => t
        .addColumn('number', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('deal_id', 'text')
        .addColumn('contact_id', 'text')
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('line_items', json, (c) => c.notNull())
        .addColumn('tax_percent', double, (c) => c.notNull())
        .addColumn('subtotal', big, (c) => c.notNull())
        .addColumn('discount_total', big, (c) => c.notNull())
        .addColumn('tax_total', big, (c) => c.notNull())
        .addColumn('total', big, (c) => c.notNull())
        .addColumn('valid_until', big)
        .addColumn('terms', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('revision', 'integer', (c) => c.notNull())
        .addColumn('public_token', 'text')
        .addColumn('sent_at', big)
        .addColumn('viewed_at', big)
        .addColumn('accepted_at', big)
        .addColumn('signer_name', 'text')
        .addColumn('signer_ip', 'text')
        .addColumn('declined_at', big)
        .addColumn('decline_reason', 'text')
        .addColumn('voided_at', big)
        .addColumn('custom_fields', json));
      await createTenantUnique(db, 'quotes', 'quotes_number', ['number']);
      await db.schema.createIndex('quotes_contact').on('quotes').columns(['org_id', 'mode', 'contact_id', 'id']).execute();
      await db.schema.createIndex('quotes_deal').on('quotes').columns(['org_id', 'mode', 'deal_id', 'id']).execute();
      await db.schema.createIndex('quotes_status').on('quotes').columns(['org_id', 'mode', 'status', 'id']).execute();
      // The expiry job's scan across tenants: open quotes by date.
      await db.schema.createIndex('quotes_expiry').on('quotes').columns(['status', 'valid_until']).execute();

      await db.schema.createTable('quote_links')
        .addColumn('token', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('quote_id', 'text', (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('quote_links_quote').on('quote_links').columns(['org_id', 'mode', 'quote_id']).execute();

      for (const [table, columns] of Object.entries(QUOTE_SEARCH_COLUMNS)) await createSearchIndex(db, dialect, table, columns);
    },
  };
}
