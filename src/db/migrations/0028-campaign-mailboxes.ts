// The mailboxes a campaign sends its e-mail steps from: a list of mailbox ids on the campaign (the
// launch preflight weighs their limits against the audience and checks their sending domains).
// Existing campaigns name none.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes } from '../migration-helpers.ts';

export function campaignMailboxes(dialect: Dialect) {
  const { json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('campaigns').addColumn('mailbox_ids', json, (c) => c.notNull().defaultTo(sql`'[]'`)).execute();
    },
  };
}
