// Lists of type companies or deals hold their records as members.
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes } from '../migration-helpers.ts';

export function listMembers(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createTable('list_members')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('list_id', 'text', (c) => c.notNull())
        .addColumn('record_id', 'text', (c) => c.notNull())
        .addColumn('created_at', columnTypes(dialect).big, (c) => c.notNull())
        .addPrimaryKeyConstraint('list_members_pk', ['org_id', 'mode', 'list_id', 'record_id'])
        .execute();
      // A record's memberships: the `list_id` filter and removal when the record is deleted.
      await db.schema.createIndex('list_members_record').on('list_members').columns(['org_id', 'mode', 'record_id']).execute();
    },
  };
}
