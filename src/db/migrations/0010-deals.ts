// Deals, their pipelines and stages, the contacts on a deal, each deal's stage history, and the
// per-stage totals that answer the deals summary without reading the deals.
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createTenantTable, createTenantUnique } from '../migration-helpers.ts';

export function deals(dialect: Dialect) {
  const { big, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // is_default is 1 or null: the unique index (null left out) allows one default per tenant.
      await createTenantTable(db, dialect, 'deal_pipelines', (t) => t
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('is_default', 'integer'));
      await createTenantUnique(db, 'deal_pipelines', 'deal_pipelines_default', ['is_default']);

      await createTenantTable(db, dialect, 'deal_stages', (t) => t
        .addColumn('pipeline_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('probability', 'integer', (c) => c.notNull())
        .addColumn('stage_type', 'text', (c) => c.notNull())
        .addColumn('color', 'text')
        // Links to a stage checklist pipeline; kept unchecked until checklist pipelines exist.
        .addColumn('checklist_stage_id', 'text'));
      await db.schema.createIndex('deal_stages_pipeline').on('deal_stages').columns(['org_id', 'mode', 'pipeline_id', 'position']).execute();

      await createTenantTable(db, dialect, 'deals', (t) => t
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('amount', big)
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('pipeline_id', 'text', (c) => c.notNull())
        .addColumn('stage_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        // The deal's own probability; null follows its stage's.
        .addColumn('probability', 'integer')
        .addColumn('expected_close_date', 'text')
        .addColumn('closed_at', big)
        .addColumn('company_id', 'text')
        .addColumn('owner', 'text')
        .addColumn('source', 'text')
        .addColumn('tags', json, (c) => c.notNull())
        .addColumn('custom_fields', json));
      // The list filtered by pipeline and stage pages in id order on one index; so do status and owner.
      await db.schema.createIndex('deals_stage').on('deals').columns(['org_id', 'mode', 'pipeline_id', 'stage_id', 'id']).execute();
      await db.schema.createIndex('deals_status').on('deals').columns(['org_id', 'mode', 'status', 'id']).execute();
      await db.schema.createIndex('deals_company').on('deals').columns(['org_id', 'mode', 'company_id']).execute();
      await db.schema.createIndex('deals_owner').on('deals').columns(['org_id', 'mode', 'owner', 'id']).execute();

      await db.schema.createTable('deal_contacts')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('deal_id', 'text', (c) => c.notNull())
        .addColumn('contact_id', 'text', (c) => c.notNull())
        .addColumn('role', 'text')
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('deal_contacts_pk', ['org_id', 'mode', 'deal_id', 'contact_id'])
        .execute();
      // A contact's deals (GET /v1/contacts/{id}/deals, the contact_id filter, removal with the contact).
      await db.schema.createIndex('deal_contacts_contact').on('deal_contacts').columns(['org_id', 'mode', 'contact_id', 'deal_id']).execute();

      await createTenantTable(db, dialect, 'deal_stage_history', (t) => t
        .addColumn('deal_id', 'text', (c) => c.notNull())
        .addColumn('pipeline_id', 'text', (c) => c.notNull())
        .addColumn('stage_id', 'text', (c) => c.notNull())
        .addColumn('entered_at', big, (c) => c.notNull())
        .addColumn('left_at', big));
      await db.schema.createIndex('deal_stage_history_deal').on('deal_stage_history').columns(['org_id', 'mode', 'deal_id', 'id']).execute();

      // Maintained in each deal write's transaction: per stage and currency, the number of deals, the
      // sum of amounts, the sum of amount × own probability of deals that set one, and the sum of
      // amounts of deals that follow their stage's probability (weighted when read, so a stage's
      // new probability needs no recount).
      await db.schema.createTable('deal_stage_totals')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('stage_id', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('deal_count', big, (c) => c.notNull())
        .addColumn('amount', big, (c) => c.notNull())
        .addColumn('weighted_own', big, (c) => c.notNull())
        .addColumn('amount_following', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('deal_stage_totals_pk', ['org_id', 'mode', 'stage_id', 'currency'])
        .execute();
    },
  };
}
