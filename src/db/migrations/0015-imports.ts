// CSV imports and exports: the jobs' records, the errors of imported rows, and the files themselves,
// kept in the store as chunks of about 1 MiB so that any process's worker can read an upload and any
// process can stream an export (see docs/architecture.md, Imports and exports).
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createTenantTable } from '../migration-helpers.ts';

export function imports(dialect: Dialect) {
  const { big, json } = columnTypes(dialect);
  const bytes = dialect === 'postgres' ? sql`bytea` : sql`blob`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'imports', (t) => t
        .addColumn('object', 'text', (c) => c.notNull())
        .addColumn('write_mode', 'text', (c) => c.notNull())
        .addColumn('list_id', 'text')
        .addColumn('mapping', json, (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('filename', 'text')
        .addColumn('size_bytes', big, (c) => c.notNull())
        .addColumn('delimiter', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('rows_total', big, (c) => c.notNull())
        .addColumn('rows_processed', big, (c) => c.notNull())
        .addColumn('rows_created', big, (c) => c.notNull())
        .addColumn('rows_updated', big, (c) => c.notNull())
        .addColumn('rows_skipped', big, (c) => c.notNull())
        .addColumn('rows_failed', big, (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('started_at', big)
        .addColumn('finished_at', big));

      // Several errors of one row are numbered `n`; pages read them in row order.
      await db.schema.createTable('import_errors')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('import_id', 'text', (c) => c.notNull())
        .addColumn('row', big, (c) => c.notNull())
        .addColumn('n', 'integer', (c) => c.notNull())
        .addColumn('column_name', 'text')
        .addColumn('message', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('import_errors_pk', ['org_id', 'mode', 'import_id', 'row', 'n'])
        .execute();

      // An uploaded or exported file: its bytes in order of `seq`.
      await db.schema.createTable('file_chunks')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('file_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('data', bytes, (c) => c.notNull())
        .addPrimaryKeyConstraint('file_chunks_pk', ['org_id', 'mode', 'file_id', 'seq'])
        .execute();

      await createTenantTable(db, dialect, 'exports', (t) => t
        .addColumn('object', 'text', (c) => c.notNull())
        .addColumn('filters', json, (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('rows_total', big)
        .addColumn('rows_processed', big, (c) => c.notNull())
        .addColumn('size_bytes', big, (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('started_at', big)
        .addColumn('finished_at', big));
    },
  };
}
