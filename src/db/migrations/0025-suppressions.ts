// Suppressions: the addresses never to be sent to again, per organization, mode and channel (an
// unsubscribe, a hard bounce, a complaint, or an entry made by hand), and the unsubscribe links put
// in messages. `unsubscribe_links` is found by its token before the tenant is known (like
// `quote_links`): its key is the token's SHA-256, and its row names the tenant and the recipient.
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createTenantTable, createTenantUnique } from '../migration-helpers.ts';

export function suppressions(dialect: Dialect) {
  const { big } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'suppressions', (t) => t
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('contact_id', 'text')
        .addColumn('message_id', 'text')
        .addColumn('detail', 'text'));
      // The one check before every send reads this index: one address of one channel.
      await createTenantUnique(db, 'suppressions', 'suppressions_address', ['channel', 'address']);
      // The list filters, each ending in `id` (see 0014-filter-indexes).
      await db.schema.createIndex('suppressions_by_address').on('suppressions').columns(['org_id', 'mode', 'address', 'id']).execute();
      await db.schema.createIndex('suppressions_by_reason').on('suppressions').columns(['org_id', 'mode', 'reason', 'id']).execute();
      await db.schema.createIndex('suppressions_by_channel').on('suppressions').columns(['org_id', 'mode', 'channel', 'id']).execute();

      await db.schema.createTable('unsubscribe_links')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('contact_id', 'text')
        .addColumn('message_id', 'text')
        .addColumn('created_at', big, (c) => c.notNull())
        .execute();
      // The sandbox reset clears a tenant's links.
      await db.schema.createIndex('unsubscribe_links_tenant').on('unsubscribe_links').columns(['org_id', 'mode', 'created_at']).execute();
    },
  };
}
