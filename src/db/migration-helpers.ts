// The migrations' own helpers, frozen: a migration that has been released must build the same
// schema on a fresh store forever, so nothing here may change once a migration uses it. Migrations
// import nothing from src/platform/ or src/resources/ (eslint.config.js enforces it): a kernel helper
// changed for today's code would otherwise rewrite history for every store created afterwards. A
// migration that needs something else adds a new helper here (or writes its SQL out).
//
// A tenant table leads its primary key and every unique index with org_id (then mode), so the
// PostgreSQL schema can be distributed by organization (Citus: `create_distributed_table('<table>',
// 'org_id')`) without changing a query.
import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import type { Dialect } from './database.ts';

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

/**
 * Creates the full-text index `<table>_search` of `table` over `columns`. SQLite: an FTS5 table
 * (external content, keyed by the row's rowid) kept in step by triggers. PostgreSQL: a GIN index on
 * the `simple` tsvector of the fields; the queries of src/platform/resource/search-index.ts name the
 * same expression, so the planner uses it.
 */
export async function createSearchIndex(db: Kysely<unknown>, dialect: Dialect, table: string, columns: string[]): Promise<void> {
  const fts = `${table}_search`;
  if (dialect === 'postgres') {
    // Index expressions name columns bare; the same expression with qualified names matches it.
    const bare = sql.join(columns.map((c) => sql`coalesce(${sql.ref(c)}, '')`), sql` || ' ' || `);
    await sql`create index ${sql.id(fts)} on ${sql.table(table)} using gin (to_tsvector('simple'::regconfig, regexp_replace(${bare}, '[^[:alnum:]]+', ' ', 'g')))`.execute(db);
    return;
  }
  const cols = sql.join(columns.map((c) => sql.id(c)));
  const news = sql.join(columns.map((c) => sql.ref(`new.${c}`)));
  const olds = sql.join(columns.map((c) => sql.ref(`old.${c}`)));
  await sql`create virtual table ${sql.id(fts)} using fts5(${cols}, content=${sql.lit(table)}, content_rowid='rowid', tokenize='unicode61 remove_diacritics 0', prefix='2 3')`.execute(db);
  await sql`insert into ${sql.id(fts)}(${sql.id(fts)}) values('rebuild')`.execute(db);
  await sql`create trigger ${sql.id(`${fts}_insert`)} after insert on ${sql.table(table)} begin
    insert into ${sql.id(fts)}(rowid, ${cols}) values (new.rowid, ${news});
  end`.execute(db);
  await sql`create trigger ${sql.id(`${fts}_delete`)} after delete on ${sql.table(table)} begin
    insert into ${sql.id(fts)}(${sql.id(fts)}, rowid, ${cols}) values ('delete', old.rowid, ${olds});
  end`.execute(db);
  await sql`create trigger ${sql.id(`${fts}_update`)} after update of ${cols} on ${sql.table(table)} begin
    insert into ${sql.id(fts)}(${sql.id(fts)}, rowid, ${cols}) values ('delete', old.rowid, ${olds});
    insert into ${sql.id(fts)}(rowid, ${cols}) values (new.rowid, ${news});
  end`.execute(db);
}
