// Sending domains: a tenant's domain it sends e-mail from, with the DKIM key pair the service made
// for it (the private key sealed with a key derived from SECRET_KEY), the DNS records to publish
// and what the last check of each found. One row per domain in each organization and mode.
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createTenantTable, createTenantUnique } from '../migration-helpers.ts';

export function sendingDomains(dialect: Dialect) {
  const { big, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'sending_domains', (t) => t
        .addColumn('domain', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('dkim_selector', 'text', (c) => c.notNull())
        .addColumn('dkim_public_key', 'text', (c) => c.notNull())
        .addColumn('dkim_private_key', 'text', (c) => c.notNull())
        .addColumn('records', json, (c) => c.notNull())
        .addColumn('verified_at', big)
        .addColumn('last_checked_at', big));
      await createTenantUnique(db, 'sending_domains', 'sending_domains_domain', ['domain']);
    },
  };
}
