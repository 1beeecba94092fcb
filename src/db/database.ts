// Opens the store named by DATABASE_URL: `sqlite:<path>`, `sqlite::memory:` or `postgres://…`.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { NodeSqliteDialect } from './node-sqlite-dialect.ts';
import { createPgPool } from './pg-pool.ts';
import type { DB } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  close(): Promise<void>;
}

export function sqlitePath(url: string): string {
  const path = url.slice('sqlite:'.length);
  if (!path) throw new Error('DATABASE_URL sqlite: needs a path, or :memory:');
  return path;
}

export function openDatabase(url: string, options: { poolSize?: number } = {}): Database {
  if (url.startsWith('sqlite:')) {
    const path = sqlitePath(url);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const db = new Kysely<DB>({ dialect: new NodeSqliteDialect({ path }) });
    return { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  const { pool } = createPgPool(url, options.poolSize ?? 10);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

/** Throws when the store does not answer; used by /healthz. */
export async function ping(database: Database): Promise<void> {
  await sql`select 1`.execute(database.db);
}
