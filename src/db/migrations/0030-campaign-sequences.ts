// A launched campaign sends through a sequence of its own: the campaign names it (`sequence_id`) and
// the sequence its campaign (`campaign_id`, which makes the scheduler pay one credit per message).
// Campaigns launched before have none.
import type { Kysely } from 'kysely';

export function campaignSequences() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('campaigns').addColumn('sequence_id', 'text').execute();
      await db.schema.alterTable('sequences').addColumn('campaign_id', 'text').execute();
    },
  };
}
