// Sequences: ordered steps sent to each enrolled contact, one at a time, in a sending window. A step
// belongs to its sequence (`step_order` from 1, renumbered on every change); an enrollment is one
// contact's way through one sequence: where it is (`step_index`, the number of steps done), when its
// next step is due (`due_at`, the time of its keyed step job) and, once the first e-mail went, the
// Message-IDs later steps answer in the same thread. A contact is in a sequence at most once at a
// time: the unique index covers the enrollments not yet over. Contacts gain a time zone, read when a
// sequence sends in each contact's own hours.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createTenantTable } from '../migration-helpers.ts';

export function sequences(dialect: Dialect) {
  const { big, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'sequences', (t) => t
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('associated_list_id', 'text')
        .addColumn('finish_on_reply', 'integer', (c) => c.notNull())
        .addColumn('send_in_same_thread', 'integer', (c) => c.notNull())
        .addColumn('wait_for_new_contacts', 'integer', (c) => c.notNull())
        .addColumn('mailbox_ids', json, (c) => c.notNull())
        .addColumn('schedule', json, (c) => c.notNull())
        .addColumn('use_contact_timezone', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('launched_at', big)
        .addColumn('completed_at', big));
      await db.schema.createIndex('sequences_status').on('sequences').columns(['org_id', 'mode', 'status', 'id']).execute();
      await db.schema.createIndex('sequences_list').on('sequences').columns(['org_id', 'mode', 'associated_list_id', 'id']).execute();

      await createTenantTable(db, dialect, 'sequence_steps', (t) => t
        .addColumn('sequence_id', 'text', (c) => c.notNull())
        .addColumn('step_order', 'integer', (c) => c.notNull())
        .addColumn('step_type', 'text', (c) => c.notNull())
        .addColumn('input_type', 'text', (c) => c.notNull())
        .addColumn('time_interval', big, (c) => c.notNull())
        .addColumn('subject', 'text')
        .addColumn('body', 'text')
        .addColumn('variants', json, (c) => c.notNull()));
      await db.schema.createIndex('sequence_steps_order').on('sequence_steps').columns(['org_id', 'mode', 'sequence_id', 'step_order']).execute();

      await createTenantTable(db, dialect, 'sequence_enrollments', (t) => t
        .addColumn('sequence_id', 'text', (c) => c.notNull())
        .addColumn('contact_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('error', 'text')
        .addColumn('step_index', 'integer', (c) => c.notNull())
        .addColumn('due_at', big)
        .addColumn('mailbox_id', 'text')
        .addColumn('thread_message_ids', json, (c) => c.notNull())
        .addColumn('task_id', 'text')
        .addColumn('paused_until', big)
        .addColumn('last_sent_at', big)
        .addColumn('finished_at', big));
      await db.schema.createIndex('sequence_enrollments_current').unique().on('sequence_enrollments').columns(['org_id', 'mode', 'sequence_id', 'contact_id'])
        .where(sql.ref('status'), 'in', ['pending', 'active', 'paused']).execute();
      await db.schema.createIndex('sequence_enrollments_sequence').on('sequence_enrollments').columns(['org_id', 'mode', 'sequence_id', 'status', 'id']).execute();
      // The scheduler's read: what is due in a sequence, by time (the enrollments waiting for nothing have no due_at).
      await db.schema.createIndex('sequence_enrollments_due').on('sequence_enrollments').columns(['org_id', 'mode', 'sequence_id', 'due_at']).where(sql.ref('due_at'), 'is not', null).execute();
      await db.schema.createIndex('sequence_enrollments_contact').on('sequence_enrollments').columns(['org_id', 'mode', 'contact_id', 'id']).execute();
      await db.schema.createIndex('sequence_enrollments_task').on('sequence_enrollments').columns(['org_id', 'mode', 'task_id']).where(sql.ref('task_id'), 'is not', null).execute();

      await db.schema.alterTable('contacts').addColumn('timezone', 'text').execute();
    },
  };
}
