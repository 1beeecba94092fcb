// Opens the store named by DATABASE_URL: `sqlite:<path>`, `sqlite::memory:` or `postgres://…`.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresAdapter, PostgresDialect, sql, type QueryResult } from 'kysely';
import { NodeSqliteDialect } from './node-sqlite-dialect.ts';
import { createPgPool } from './pg-pool.ts';
import type { DB } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  close(): Promise<void>;
}

type DirectRunner = <R>(sql: string, params: readonly unknown[]) => QueryResult<R> | Promise<QueryResult<R>> | undefined;
const directRunners = new WeakMap<Kysely<DB>, DirectRunner>();

/**
 * Runs a fixed statement outside any transaction without the query builder's executor: on SQLite
 * directly on the connection when no transaction is open (see node-sqlite-dialect.ts), on
 * PostgreSQL as a named prepared statement on the pool (or its lane of point reads). Undefined
 * when the caller must go through `db` instead.
 */
export function executeNow<R>(db: Kysely<DB>, sql: string, params: readonly unknown[]): QueryResult<R> | Promise<QueryResult<R>> | undefined {
  return directRunners.get(db)?.<R>(sql, params);
}

/** The store a query builder runs on (the database's own, or one of its transactions). */
export const dialectOf = (db: Kysely<DB>): Dialect => (db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite');

export function sqlitePath(url: string): string {
  const path = url.slice('sqlite:'.length);
  if (!path) throw new Error('DATABASE_URL sqlite: needs a path, or :memory:');
  return path;
}

export interface OpenOptions {
  /** PostgreSQL connections. */
  poolSize?: number;
  /** PostgreSQL connections that slow reads may hold at once. */
  slowReads?: number;
  /** SQLite reader threads (0: every query on the event loop). */
  readers?: number;
}

export function openDatabase(url: string, options: OpenOptions = {}): Database {
  if (url.startsWith('sqlite:')) {
    const path = sqlitePath(url);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const dialect = new NodeSqliteDialect({ path, readers: options.readers });
    const db = new Kysely<DB>({ dialect });
    directRunners.set(db, (text, params) => dialect.executeNow(text, params));
    return { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  const { pool, query } = createPgPool(url, options.poolSize, options.slowReads);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  directRunners.set(db, async (text, params) => {
    const result = await query(text, params);
    return { rows: result.rows, numAffectedRows: BigInt(result.rowCount ?? 0) };
  });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

/** Throws when the store does not answer; used by /healthz. */
export async function ping(database: Database): Promise<void> {
  await sql`select 1`.execute(database.db);
}
