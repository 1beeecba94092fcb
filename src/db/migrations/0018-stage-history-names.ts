// A deal's stage history names each stage by its current name; a deleted stage's rows keep the name
// it had (`stage_name`, written when the stage is deleted), so a history or a timeline still says
// which stage a deal spent its time in.
import type { Kysely } from 'kysely';

export const stageHistoryNames = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('deal_stage_history').addColumn('stage_name', 'text').execute();
  },
};
