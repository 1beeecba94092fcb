// Provider connections and the outbox. A connection is a tenant's account at a provider of one kind
// (an SMTP server for e-mail, an IMAP server for inbound mail …): its settings, and its credentials
// sealed with a key derived from SECRET_KEY. The outbox holds every message the service made: what
// the `local` driver recorded, and, in live mode, what was sent. A send is recorded before its
// provider call with a deterministic Message-ID and the key it was asked with (`send_key`, unique),
// so asking twice, or a worker killed mid-send, never makes a second message.
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createTenantTable, createTenantUnique } from '../migration-helpers.ts';

export function connectionsOutbox(dialect: Dialect) {
  const { big, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'connections', (t) => t
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('settings', json, (c) => c.notNull())
        .addColumn('credentials', 'text')
        .addColumn('is_default', 'integer', (c) => c.notNull()));
      await db.schema.createIndex('connections_kind').on('connections').columns(['org_id', 'mode', 'kind', 'id']).execute();

      await createTenantTable(db, dialect, 'outbox_messages', (t) => t
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('connection_id', 'text')
        .addColumn('mailbox_id', 'text')
        .addColumn('send_key', 'text', (c) => c.notNull())
        .addColumn('message_id', 'text')
        .addColumn('from_address', 'text')
        .addColumn('to_addresses', json, (c) => c.notNull())
        .addColumn('subject', 'text')
        .addColumn('text', 'text')
        .addColumn('html', 'text')
        .addColumn('headers', json, (c) => c.notNull())
        .addColumn('record_type', 'text')
        .addColumn('record_id', 'text')
        .addColumn('step_id', 'text')
        .addColumn('contact_id', 'text')
        .addColumn('thread_id', 'text')
        .addColumn('provider_answer', json)
        .addColumn('error', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('attempted_at', big)
        .addColumn('sent_at', big)
        .addColumn('delivered_at', big)
        .addColumn('opened_at', big)
        .addColumn('clicked_at', big)
        .addColumn('replied_at', big)
        .addColumn('bounced_at', big));
      await createTenantUnique(db, 'outbox_messages', 'outbox_messages_send_key', ['send_key']);
      // Replies and bounces find the message they answer by its Message-ID.
      await createTenantUnique(db, 'outbox_messages', 'outbox_messages_message_id', ['message_id']);
      await db.schema.createIndex('outbox_messages_record').on('outbox_messages').columns(['org_id', 'mode', 'record_id', 'id']).execute();
      await db.schema.createIndex('outbox_messages_status').on('outbox_messages').columns(['org_id', 'mode', 'status', 'id']).execute();
      // A mailbox's sends of the last day and hour (its limits), counted from any process.
      await db.schema.createIndex('outbox_messages_mailbox').on('outbox_messages').columns(['org_id', 'mode', 'mailbox_id', 'attempted_at']).execute();
    },
  };
}
