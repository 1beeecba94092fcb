// Sequences are deleted softly: a deleted one keeps its row (stamped `deleted_at`, unix seconds),
// its steps and its enrollments, so the outbox's messages, analytics and enrollment history still
// name it, while the API no longer finds it. Its reads keep to the records not deleted by indexes
// that hold those only (`where deleted_at is null`): a tenant's deleted sequences never lengthen
// its pages, totals or filters. The unfiltered page and total walk `sequences_kept` (the primary key
// holds the deleted rows too); the filters' indexes are made again, partial.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes } from '../migration-helpers.ts';

export function deletedSequences(dialect: Dialect) {
  const { big } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('sequences').addColumn('deleted_at', big).execute();
      const kept = (name: string, columns: string[]) =>
        db.schema.createIndex(name).on('sequences').columns(['org_id', 'mode', ...columns, 'id']).where(sql.ref('deleted_at'), 'is', null).execute();
      await kept('sequences_kept', []);
      await db.schema.dropIndex('sequences_status').execute();
      await kept('sequences_status', ['status']);
      await db.schema.dropIndex('sequences_list').execute();
      await kept('sequences_list', ['associated_list_id']);
    },
  };
}
