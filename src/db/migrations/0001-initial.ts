// The initial schema. Types differ only where the stores differ: JSON is jsonb on PostgreSQL and
// text on SQLite; whole numbers that can pass 2^31 are bigint.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../database.ts';

export function initial(dialect: Dialect) {
  const json = dialect === 'postgres' ? sql`jsonb` : sql`text`;
  const big = dialect === 'postgres' ? 'bigint' : 'integer';

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;

      await s.createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();

      await s.createTable('organizations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .execute();

      await s.createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('is_agency', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('last_used_at', big)
        .addColumn('revoked_at', big)
        .execute();
      await s.createIndex('api_keys_org').on('api_keys').columns(['org_id', 'id']).execute();

      await s.createTable('counters')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('value', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('counters_pk', ['org_id', 'mode', 'name'])
        .execute();

      await s.createTable('idempotency_keys')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('status', 'integer')
        .addColumn('body', 'text')
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('locked_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['org_id', 'mode', 'key'])
        .execute();
      await s.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();

      await s.createTable('lists')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('member_count', big, (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .execute();
      await s.createIndex('lists_scope').on('lists').columns(['org_id', 'mode', 'id']).execute();
      await s.createIndex('lists_type').on('lists').columns(['org_id', 'mode', 'type', 'id']).execute();

      await s.createTable('list_entries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('list_id', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .execute();
      await s.createIndex('list_entries_list_value').unique().on('list_entries').columns(['list_id', 'value']).execute();
      await s.createIndex('list_entries_list').on('list_entries').columns(['list_id', 'id']).execute();
      await s.createIndex('list_entries_value').on('list_entries').columns(['org_id', 'mode', 'value']).execute();

      await s.createTable('companies')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('domain', 'text')
        .addColumn('industry', 'text')
        .addColumn('employee_count', big)
        .addColumn('annual_revenue', big)
        .addColumn('city', 'text')
        .addColumn('country', 'text')
        .addColumn('linkedin_url', 'text')
        .addColumn('description', 'text')
        .addColumn('tags', json, (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .execute();
      await s.createIndex('companies_scope').on('companies').columns(['org_id', 'mode', 'id']).execute();
      await s.createIndex('companies_domain').unique().on('companies').columns(['org_id', 'mode', 'domain'])
        .where(sql.ref('domain'), 'is not', null).execute();

      await s.createTable('contacts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('list_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('first_name', 'text')
        .addColumn('last_name', 'text')
        .addColumn('title', 'text')
        .addColumn('company', 'text')
        .addColumn('company_id', 'text')
        .addColumn('work_email', 'text')
        .addColumn('email_domain', 'text')
        .addColumn('personal_email', 'text')
        .addColumn('phone', 'text')
        .addColumn('linkedin_url', 'text')
        .addColumn('city', 'text')
        .addColumn('country', 'text')
        .addColumn('seniority', 'text')
        .addColumn('department', 'text')
        .addColumn('tags', json, (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .execute();
      await s.createIndex('contacts_scope').on('contacts').columns(['org_id', 'mode', 'id']).execute();
      await s.createIndex('contacts_list').on('contacts').columns(['org_id', 'mode', 'list_id', 'id']).execute();
      await s.createIndex('contacts_company_id').on('contacts').columns(['org_id', 'mode', 'company_id']).execute();
      await s.createIndex('contacts_domain').on('contacts').columns(['org_id', 'mode', 'email_domain']).execute();
      await s.createIndex('contacts_email').on('contacts').columns(['org_id', 'mode', 'work_email']).execute();
      await s.createIndex('contacts_company').on('contacts').columns(['org_id', 'mode', 'company', 'id']).execute();
      await s.createIndex('contacts_created').on('contacts').columns(['org_id', 'mode', 'created_at']).execute();

      await s.createTable('campaigns')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('channels', json, (c) => c.notNull())
        .addColumn('list_id', 'text')
        .addColumn('steps', json, (c) => c.notNull())
        .addColumn('schedule', json)
        .addColumn('audience_count', big, (c) => c.notNull().defaultTo(0))
        .addColumn('launched_at', big)
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .execute();
      await s.createIndex('campaigns_scope').on('campaigns').columns(['org_id', 'mode', 'id']).execute();
      await s.createIndex('campaigns_list').on('campaigns').columns(['org_id', 'mode', 'list_id']).execute();

      await s.createTable('campaign_enrollments')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('campaign_id', 'text', (c) => c.notNull())
        .addColumn('contact_id', 'text', (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('campaign_enrollments_pk', ['campaign_id', 'contact_id'])
        .execute();

      await s.createTable('events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('seq', big, (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('object_id', 'text', (c) => c.notNull())
        .addColumn('data', json, (c) => c.notNull())
        .addColumn('previous_attributes', json)
        .addColumn('created_at', big, (c) => c.notNull())
        .execute();
      await s.createIndex('events_seq').unique().on('events').columns(['org_id', 'mode', 'seq']).execute();
      await s.createIndex('events_type').on('events').columns(['org_id', 'mode', 'type', 'seq']).execute();
      await s.createIndex('events_created').on('events').columns(['org_id', 'mode', 'created_at']).execute();

      await s.createTable('usage_transactions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('amount', big, (c) => c.notNull())
        .addColumn('balance_after', big, (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('resource_id', 'text')
        .addColumn('description', 'text')
        .addColumn('created_at', big, (c) => c.notNull())
        .execute();
      await s.createIndex('usage_transactions_scope').on('usage_transactions').columns(['org_id', 'mode', 'id']).execute();
      await s.createIndex('usage_transactions_created').on('usage_transactions').columns(['org_id', 'mode', 'created_at']).execute();
    },
  };
}
