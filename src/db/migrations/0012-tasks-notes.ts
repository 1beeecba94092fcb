// Tasks and notes, the associations of records with contacts, companies and deals (shared by every
// group that associates its records: tasks, notes, later quotes), their full-text indexes, and the
// indexes that page a record's timeline (its events and its campaign enrollments, newest first).
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createSearchIndex, createTenantTable, createTenantUnique } from '../migration-helpers.ts';

export const TASK_NOTE_SEARCH_COLUMNS = {
  tasks: ['title', 'description'],
  notes: ['content'],
};

export function tasksNotes(dialect: Dialect) {
  const { big, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // One row per (record, associated contact|company|deal); target is the associated record's table.
      await db.schema.createTable('record_associations')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('record_id', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('target_id', 'text', (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('record_associations_pk', ['org_id', 'mode', 'record_id', 'target_id'])
        .execute();
      // A record's tasks and notes (the contact_id filters, timelines), and removal with the record.
      await db.schema.createIndex('record_associations_target').on('record_associations').columns(['org_id', 'mode', 'target_id', 'record_id']).execute();

      await createTenantTable(db, dialect, 'tasks', (t) => t
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('priority', 'integer', (c) => c.notNull())
        .addColumn('due_at', big)
        .addColumn('completed_at', big)
        .addColumn('assignee', 'text')
        .addColumn('external_key', 'text')
        .addColumn('custom_fields', json));
      // Open tasks by due time answer `status=overdue` and `due_before`; assignees page in id order.
      await db.schema.createIndex('tasks_status_due').on('tasks').columns(['org_id', 'mode', 'status', 'due_at']).execute();
      await db.schema.createIndex('tasks_assignee').on('tasks').columns(['org_id', 'mode', 'assignee', 'id']).execute();
      await createTenantUnique(db, 'tasks', 'tasks_external_key', ['external_key']);

      await createTenantTable(db, dialect, 'notes', (t) => t
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text')
        .addColumn('pinned', 'integer', (c) => c.notNull())
        .addColumn('external_key', 'text')
        .addColumn('custom_fields', json));
      await createTenantUnique(db, 'notes', 'notes_external_key', ['external_key']);

      for (const [table, columns] of Object.entries(TASK_NOTE_SEARCH_COLUMNS)) await createSearchIndex(db, dialect, table, columns);

      await db.schema.createIndex('events_object').on('events').columns(['org_id', 'mode', 'object_id', 'created_at']).execute();
      await db.schema.createIndex('campaign_enrollments_contact').on('campaign_enrollments').columns(['org_id', 'mode', 'contact_id', 'created_at']).execute();
    },
  };
}
