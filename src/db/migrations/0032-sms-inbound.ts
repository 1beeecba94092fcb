// Inbound texts find what they answer without reading a tenant's whole outbox or inbox: the last
// text sent to a number (outbox by channel and recipients, whose stored form for one number is its
// JSON list) and the number's SMS thread.
import type { Kysely } from 'kysely';

export function smsInbound() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createIndex('outbox_messages_recipients').on('outbox_messages').columns(['org_id', 'mode', 'channel', 'to_addresses', 'id']).execute();
      await db.schema.createIndex('inbox_threads_sender').on('inbox_threads').columns(['org_id', 'mode', 'channel', 'from_address', 'id']).execute();
    },
  };
}
