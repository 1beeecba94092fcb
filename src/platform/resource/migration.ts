// The kernel's migration helpers. A tenant table leads its primary key and every unique index with
// org_id (then mode), so the PostgreSQL schema can be distributed by organization (Citus:
// `create_distributed_table('<table>', 'org_id')`) without changing a query.
import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import type { Dialect } from '../../db/database.ts';

/** Column types that differ between the stores. */
export const columnTypes = (dialect: Dialect) => ({
  json: dialect === 'postgres' ? sql`jsonb` : sql`text`,
  big: dialect === 'postgres' ? ('bigint' as const) : ('integer' as const),
});

/**
 * Creates a tenant table: `org_id`, `mode`, `id`, the columns `build` adds, `created_at` and
 * `updated_at`, with the primary key (org_id, mode, id).
 */
export async function createTenantTable(db: Kysely<unknown>, dialect: Dialect, table: string, build: (t: CreateTableBuilder<string, never>) => CreateTableBuilder<string, never>): Promise<void> {
  const { big } = columnTypes(dialect);
  let t = db.schema.createTable(table)
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull());
  t = build(t as CreateTableBuilder<string, never>);
  await t.addColumn('created_at', big, (c) => c.notNull())
    .addColumn('updated_at', big, (c) => c.notNull())
    .addPrimaryKeyConstraint(`${table}_pk`, ['org_id', 'mode', 'id'] as never)
    .execute();
}

/** A unique index of a tenant table on (org_id, mode, …columns), leaving nulls of the last column out. */
export async function createTenantUnique(db: Kysely<unknown>, table: string, name: string, columns: string[]): Promise<void> {
  await db.schema.createIndex(name).unique().on(table).columns(['org_id', 'mode', ...columns])
    .where(sql.ref(columns[columns.length - 1]), 'is not', null).execute();
}
