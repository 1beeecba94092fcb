// Mailboxes: the addresses a tenant sends from, each through an e-mail connection (or the tenant's
// default one), with the limits its sends keep to (per rolling day and hour) and a warm-up that
// raises the daily limit step by step from `warmup_started_at`. The limits are counted from the
// outbox (outbox_messages_mailbox), under a lock on the mailbox's row.
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createTenantTable, createTenantUnique } from '../migration-helpers.ts';

export function mailboxes(dialect: Dialect) {
  const { big, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'mailboxes', (t) => t
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('display_name', 'text')
        .addColumn('connection_id', 'text')
        .addColumn('daily_limit', 'integer', (c) => c.notNull())
        .addColumn('hourly_limit', 'integer')
        .addColumn('warmup', json, (c) => c.notNull())
        .addColumn('warmup_started_at', big)
        .addColumn('signature', 'text')
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('owner_id', 'text'));
      await createTenantUnique(db, 'mailboxes', 'mailboxes_email', ['email']);
      await db.schema.createIndex('mailboxes_connection').on('mailboxes').columns(['org_id', 'mode', 'connection_id']).execute();
      await db.schema.createIndex('mailboxes_owner').on('mailboxes').columns(['org_id', 'mode', 'owner_id']).execute();
    },
  };
}
