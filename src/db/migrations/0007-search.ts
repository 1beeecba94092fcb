// Full-text search (`q` of POST /v1/search/<resource> and GET /v1/search) over the text fields of
// contacts and companies: an FTS5 table kept by triggers on SQLite, a GIN tsvector index on
// PostgreSQL (see platform/resource/search-index.ts). The columns are those the definitions declare in
// `search`; a change of them is a new migration, which test/resources/search.test.ts checks.
import type { Kysely } from 'kysely';
import { createSearchIndex } from '../migration-helpers.ts';
import type { Dialect } from '../database.ts';

export const SEARCH_COLUMNS = {
  contacts: ['name', 'first_name', 'last_name', 'title', 'company', 'work_email', 'personal_email'],
  companies: ['name', 'domain', 'industry', 'description'],
};

export function search(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const [table, columns] of Object.entries(SEARCH_COLUMNS)) await createSearchIndex(db, dialect, table, columns);
    },
  };
}
