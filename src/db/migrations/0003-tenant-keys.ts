// Tenant tables lead their primary key and unique indexes with org_id, so the PostgreSQL schema can
// be distributed by organization (see docs/operations.md, "Running on Citus"). SQLite keeps the keys
// it has: it is never distributed, and rebuilding its tables would rewrite every row for no gain. The
// per-tenant `*_scope` indexes become redundant with the new keys and go.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../database.ts';

const KEYED = ['lists', 'list_entries', 'companies', 'contacts', 'campaigns', 'events', 'usage_transactions'];

export function tenantKeys(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // A list's entries are unique per list; the list belongs to one tenant, so this is the same rule.
      await db.schema.dropIndex('list_entries_list_value').execute();
      await db.schema.createIndex('list_entries_list_value').unique().on('list_entries').columns(['org_id', 'mode', 'list_id', 'value']).execute();
      if (dialect !== 'postgres') return;
      for (const table of KEYED) {
        await sql`alter table ${sql.table(table)} drop constraint ${sql.id(`${table}_pkey`)}, add constraint ${sql.id(`${table}_pk`)} primary key (org_id, mode, id)`.execute(db);
      }
      await sql`alter table campaign_enrollments drop constraint campaign_enrollments_pk, add constraint campaign_enrollments_pk primary key (org_id, mode, campaign_id, contact_id)`.execute(db);
      for (const table of ['lists', 'companies', 'contacts', 'campaigns', 'usage_transactions']) await db.schema.dropIndex(`${table}_scope`).ifExists().execute();
    },
  };
}
