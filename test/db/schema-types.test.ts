// The table types are generated from SQLite (src/db/schema-types.ts), which cannot tell a JSON column
// from text: the JSON columns are named there. PostgreSQL's catalog can, so on the PostgreSQL pass
// this checks the names, and that both stores have the same columns, each null or not alike.
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { JSON_COLUMNS, sqliteTables } from '../../src/db/schema-types.ts';
import { databaseUrl, isPostgres } from '../helpers/app.ts';

describe.runIf(isPostgres())('the generated table types against PostgreSQL\'s catalog', () => {
  it('names exactly the jsonb columns as JSON, and every column has the same nullability on both stores', async () => {
    const store = openDatabase(databaseUrl());
    afterAll(() => store.close());
    await migrateToLatest(store);
    const sqlite = openDatabase('sqlite::memory:');
    let tables;
    try {
      await migrateToLatest(sqlite);
      tables = await sqliteTables(sqlite);
    } finally {
      await sqlite.close();
    }
    const { rows } = await sql<{ table: string; column: string; type: string; nullable: string }>`
      select table_name as table, column_name as column, data_type as type, is_nullable as nullable
      from information_schema.columns where table_schema = current_schema() and table_name = any(${[...tables.keys()]})`.execute(store.db);

    const jsonb = rows.filter((r) => r.type === 'jsonb').map((r) => `${r.table}.${r.column}`).sort();
    const named = Object.entries(JSON_COLUMNS).flatMap(([table, columns]) => columns.map((c) => `${table}.${c}`)).sort();
    expect(named).toEqual(jsonb);

    // A JSON column is `unknown` (null or not); a primary key column counts as not null on both.
    const onPostgres = rows.filter((r) => r.type !== 'jsonb').map((r) => `${r.table}.${r.column} ${r.nullable === 'YES' ? 'null' : 'not null'}`).sort();
    const generated = [...tables].flatMap(([table, columns]) => columns.filter((c) => c.type !== 'unknown').map((c) => `${table}.${c.name} ${c.nullable ? 'null' : 'not null'}`)).sort();
    expect(generated).toEqual(onPostgres);
  });
});
