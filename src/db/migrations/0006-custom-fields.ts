// Custom fields. `fields` holds a tenant's definitions per object; each opted-in record table gets a
// `custom_fields` column with the record's `{name: value}`; `field_values` holds one row per record
// and set field, written in the record's transaction, so filters (and the search engine) read an
// index instead of the JSON, and the unique index on `unique_value` makes `unique` hold under
// concurrency. Numbers, currencies, dates (unix seconds at UTC midnight), datetimes and booleans
// (0/1) go to `value_num`; text, enum, email and url to `value_text`; a multi_enum is one text
// `|a|b|` of its sorted values.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createTenantTable, createTenantUnique } from '../migration-helpers.ts';

/** The record tables of the resources that opt in to custom fields. */
export const CUSTOM_FIELD_TABLES = ['contacts', 'companies'];

export function customFields(dialect: Dialect) {
  const { json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'fields', (t) => t
        .addColumn('object', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('data_type', 'text', (c) => c.notNull())
        .addColumn('options', json)
        .addColumn('required', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('unique', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('description', 'text')
        .addColumn('list_id', 'text'));
      await createTenantUnique(db, 'fields', 'fields_object_name', ['object', 'name']);

      await db.schema.createTable('field_values')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('field_id', 'text', (c) => c.notNull())
        .addColumn('record_id', 'text', (c) => c.notNull())
        .addColumn('value_text', 'text')
        .addColumn('value_num', sql`double precision`)
        .addColumn('unique_value', 'text')
        .addPrimaryKeyConstraint('field_values_pk', ['org_id', 'mode', 'field_id', 'record_id'])
        .execute();
      await db.schema.createIndex('field_values_text').on('field_values').columns(['org_id', 'mode', 'field_id', 'value_text', 'record_id']).execute();
      await db.schema.createIndex('field_values_num').on('field_values').columns(['org_id', 'mode', 'field_id', 'value_num', 'record_id']).execute();
      await createTenantUnique(db, 'field_values', 'field_values_unique', ['field_id', 'unique_value']);
      // Deleting a record drops its values: found by record, not by field.
      await db.schema.createIndex('field_values_record').on('field_values').columns(['org_id', 'mode', 'record_id']).execute();

      // Assert matches contacts by LinkedIn URL after the work e-mail (already indexed): an index
      // read, not a scan of the tenant.
      await db.schema.createIndex('contacts_linkedin').on('contacts').columns(['org_id', 'mode', 'linkedin_url']).execute();

      for (const table of CUSTOM_FIELD_TABLES) {
        await db.schema.alterTable(table).addColumn('custom_fields', json).execute();
      }
    },
  };
}
