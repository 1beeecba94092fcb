// Rubrics calls are graded against: criteria with weights, per organization and mode.
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createTenantTable } from '../migration-helpers.ts';

export function voiceRubrics(dialect: Dialect) {
  const { json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'voice_rubrics', (t) => t
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('criteria', json, (c) => c.notNull()));
    },
  };
}
