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
    for (;;) {
      const rows = await links.selectFrom('quote_links').select('token_hash').where(sql<number>`length(token_hash)`, '<>', 64).limit(BATCH).execute();
      for (const { token_hash: token } of rows) {
        await links.updateTable('quote_links').set({ token_hash: sha256(token) }).where('token_hash', '=', token).execute();
      }
      if (rows.length < BATCH) break;
    }
    await db.schema.alterTable('quotes').dropColumn('public_token').execute();
  },
};
