// Stage checklist pipelines (sales methodologies): their stages with the evidence each requires, the
// organization's own evidence keys beside the built-in library, and the evidence recorded on deals.
// Deals become searchable by full text (see platform/resource/search-index.ts).
import type { Kysely } from 'kysely';
import { columnTypes, createSearchIndex, createTenantTable, createTenantUnique } from '../migration-helpers.ts';
import type { Dialect } from '../database.ts';

/** The full-text columns of deals, as their definition declares them in `search`. */
export const DEAL_SEARCH_COLUMNS = ['name', 'owner', 'source'];

export function checklists(dialect: Dialect) {
  const { big, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'checklist_pipelines', (t) => t
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('template', 'text'));

      await createTenantTable(db, dialect, 'checklist_stages', (t) => t
        .addColumn('pipeline_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('stage_type', 'text', (c) => c.notNull())
        .addColumn('required_elements', json, (c) => c.notNull())
        .addColumn('recommended_elements', json, (c) => c.notNull())
        .addColumn('channel_scripts', json, (c) => c.notNull())
        .addColumn('exit_criteria', 'text'));
      await db.schema.createIndex('checklist_stages_pipeline').on('checklist_stages').columns(['org_id', 'mode', 'pipeline_id', 'position']).execute();

      // The organization's own evidence keys (the built-in library is code, not rows).
      await createTenantTable(db, dialect, 'evidence_keys', (t) => t
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text'));
      await createTenantUnique(db, 'evidence_keys', 'evidence_keys_key', ['key']);

      await db.schema.createTable('deal_evidence')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('deal_id', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('note', 'text')
        .addColumn('source', 'text')
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('deal_evidence_pk', ['org_id', 'mode', 'deal_id', 'key'])
        .execute();

      // Deal stages are found by the checklist stage they link (deleting one refuses while linked).
      await db.schema.createIndex('deal_stages_checklist').on('deal_stages').columns(['org_id', 'mode', 'checklist_stage_id']).execute();

      await createSearchIndex(db, dialect, 'deals', DEAL_SEARCH_COLUMNS);
    },
  };
}
