// An export may select its records by a search (the body of `POST /v1/search/<object>`) instead of
// the list route's filters: the search is kept beside them, null for an export by filters.
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes } from '../migration-helpers.ts';

export function exportSearch(dialect: Dialect) {
  const { json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('exports').addColumn('search', json).execute();
    },
  };
}
