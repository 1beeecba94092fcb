// Agencies and restricted keys: organizations may be agencies; keys carry scopes and an expiry;
// agencies link client organizations (per mode, like all data) directly or through a client's
// single-use grant; events and ledger rows record who acted (key and organization).
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../database.ts';

export function agencyScopes(dialect: Dialect) {
  const big = dialect === 'postgres' ? 'bigint' : 'integer';

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await s.alterTable('organizations').addColumn('is_agency', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await s.alterTable('api_keys').addColumn('scopes', 'text', (c) => c.notNull().defaultTo(sql`'["*"]'`)).execute();
      await s.alterTable('api_keys').addColumn('expires_at', big).execute();

      // Which clients an agency may act for, in which mode. The agency is the row's organization.
      await s.createTable('agency_links')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('client_org_id', 'text', (c) => c.notNull())
        .addColumn('grant_id', 'text')
        .addColumn('linked_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('agency_links_pk', ['org_id', 'mode', 'client_org_id'])
        .execute();
      await s.createIndex('agency_links_client').on('agency_links').columns(['client_org_id', 'mode']).execute();

      // Access a client organization offers to an agency. The client is the row's organization;
      // only the SHA-256 of the code is kept (looked up through a non-unique index: codes are random).
      await s.createTable('agency_grants')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('agency_org_id', 'text')
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('expires_at', big, (c) => c.notNull())
        .addColumn('redeemed_at', big)
        .addColumn('revoked_at', big)
        .addPrimaryKeyConstraint('agency_grants_pk', ['org_id', 'mode', 'id'])
        .execute();
      await s.createIndex('agency_grants_code').on('agency_grants').column('code_hash').execute();

      for (const table of ['events', 'usage_transactions']) {
        await s.alterTable(table).addColumn('actor_key_id', 'text').execute();
        await s.alterTable(table).addColumn('actor_org_id', 'text').execute();
      }
      await s.createIndex('events_actor').on('events').columns(['org_id', 'mode', 'actor_org_id', 'seq']).execute();
      // What an agency's keys spent in its clients' ledgers (GET /v1/agency/usage).
      await s.createIndex('usage_transactions_actor').on('usage_transactions').columns(['actor_org_id', 'mode', 'created_at']).execute();
    },
  };
}
