// The inbox: conversations (threads) of inbound mail and the replies sent from them. A thread holds
// its messages in order; a message is recorded once per tenant, by its RFC Message-ID (a message
// polled twice, or polled and posted, is one message). `imap_cursors` remembers, per connection,
// where its IMAP mailbox was read up to (UIDVALIDITY and the last UID). `inbound_links` are the
// URLs a mail provider posts raw messages to: found by the token's SHA-256 before the tenant is
// known (like `quote_links`), each with the signing secret its posts are verified with, sealed.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createTenantTable, createTenantUnique } from '../migration-helpers.ts';

export function inbox(dialect: Dialect) {
  const { big, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'inbox_threads', (t) => t
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('subject', 'text')
        .addColumn('normalized_subject', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('snoozed_until', big)
        .addColumn('assignee', 'text')
        .addColumn('tags', json, (c) => c.notNull())
        .addColumn('from_address', 'text')
        .addColumn('contact_id', 'text')
        .addColumn('sequence_id', 'text')
        .addColumn('mailbox_id', 'text')
        .addColumn('connection_id', 'text')
        .addColumn('last_message_at', big)
        .addColumn('message_count', 'integer', (c) => c.notNull())
        // The thread's answer as JSON text (stored-json.ts), null while a write has cleared it.
        .addColumn('doc', 'text'));
      await db.schema.createIndex('inbox_threads_doc_missing').on('inbox_threads').columns(['org_id', 'mode', 'id']).where(sql.ref('doc'), 'is', null).execute();
      // The list filters, each ending in `id` (see 0014-filter-indexes); threading by contact and subject.
      await db.schema.createIndex('inbox_threads_status').on('inbox_threads').columns(['org_id', 'mode', 'status', 'id']).execute();
      await db.schema.createIndex('inbox_threads_assignee').on('inbox_threads').columns(['org_id', 'mode', 'assignee', 'id']).execute();
      await db.schema.createIndex('inbox_threads_channel').on('inbox_threads').columns(['org_id', 'mode', 'channel', 'id']).execute();
      await db.schema.createIndex('inbox_threads_sequence').on('inbox_threads').columns(['org_id', 'mode', 'sequence_id', 'id']).execute();
      await db.schema.createIndex('inbox_threads_contact').on('inbox_threads').columns(['org_id', 'mode', 'contact_id', 'normalized_subject', 'id']).execute();

      await createTenantTable(db, dialect, 'inbox_messages', (t) => t
        .addColumn('thread_id', 'text', (c) => c.notNull())
        .addColumn('direction', 'text', (c) => c.notNull())
        .addColumn('message_id', 'text', (c) => c.notNull())
        .addColumn('in_reply_to', 'text')
        .addColumn('reference_ids', json, (c) => c.notNull())
        .addColumn('from_address', 'text')
        .addColumn('from_name', 'text')
        .addColumn('to_addresses', json, (c) => c.notNull())
        .addColumn('cc_addresses', json, (c) => c.notNull())
        .addColumn('reply_to', 'text')
        .addColumn('subject', 'text')
        .addColumn('text', 'text')
        .addColumn('html', 'text')
        .addColumn('date', big)
        .addColumn('is_auto_reply', 'integer', (c) => c.notNull())
        .addColumn('auto_reply_kind', 'text')
        .addColumn('outbox_id', 'text')
        .addColumn('connection_id', 'text')
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('raw_size', 'integer'));
      // Recorded once per tenant: a message polled again, or polled and posted, is found here.
      await createTenantUnique(db, 'inbox_messages', 'inbox_messages_message_id', ['message_id']);
      await db.schema.createIndex('inbox_messages_thread').on('inbox_messages').columns(['org_id', 'mode', 'thread_id', 'id']).execute();

      await createTenantTable(db, dialect, 'imap_cursors', (t) => t
        .addColumn('mailbox', 'text', (c) => c.notNull())
        .addColumn('uid_validity', 'text')
        .addColumn('last_uid', big, (c) => c.notNull())
        .addColumn('last_polled_at', big)
        .addColumn('last_error', 'text')
        .addColumn('last_error_at', big)
        .addColumn('messages_recorded', big, (c) => c.notNull()));

      await db.schema.createTable('inbound_links')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('connection_id', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .execute();
      // A connection's link is replaced by a new one; the sandbox reset clears a tenant's.
      await db.schema.createIndex('inbound_links_connection').on('inbound_links').columns(['org_id', 'mode', 'connection_id']).execute();
    },
  };
}
