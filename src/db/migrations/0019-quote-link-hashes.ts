// Public quote links are stored as the SHA-256 of their token (hex), as API keys are, so a copy of
// the database opens no quote: `quote_links.token` becomes `token_hash` and each stored token is
// hashed in place, and quotes no longer keep the token of their link (`quotes.public_token`). The
// token is answered once, by the send that mints it.
// SQLite has no SHA-256 function, so the hashes are computed here, a batch of rows at a time. A
// token is 43 characters (32 random bytes, base64url) and a hash 64, so each batch reads rows not
// hashed yet: those of another length.
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

const BATCH = 500;
const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

interface Links {
  quote_links: { token_hash: string };
}

export const quoteLinkHashes = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('quote_links').renameColumn('token', 'token_hash').execute();
    const links = db as unknown as Kysely<Links>;
    // In key order from the last token hashed, so each batch reads on from the one before.
    for (let after = ''; ;) {
      const rows = await links.selectFrom('quote_links').select('token_hash').where('token_hash', '>', after)
        .where(sql<number>`length(token_hash)`, '<>', 64).orderBy('token_hash').limit(BATCH).execute();
      if (rows.length === 0) break;
      after = rows[rows.length - 1].token_hash;
      // One statement per batch (a VALUES list names its columns column1, column2 on both stores).
      const pairs = sql.join(rows.map(({ token_hash: token }) => sql`(${token}, ${sha256(token)})`));
      await sql`update quote_links set token_hash = v.column2 from (values ${pairs}) as v where quote_links.token_hash = v.column1`.execute(db);
      if (rows.length < BATCH) break;
    }
    await db.schema.alterTable('quotes').dropColumn('public_token').execute();
  },
};
