// Deals keep their answer as JSON text (`doc`, stored-json.ts): a page joins the stored texts. A
// partial index finds the records whose text a write cleared, for the job that writes them again.
import { sql, type Kysely } from 'kysely';

export const storedJson = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('deals').addColumn('doc', 'text').execute();
    await db.schema.createIndex('deals_doc_missing').on('deals').columns(['org_id', 'mode', 'id']).where(sql.ref('doc'), 'is', null).execute();
  },
};
