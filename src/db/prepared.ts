// Fixed statements for the hottest paths (reading one row per request). Building and compiling a
// query through Kysely costs more than running it on SQLite; a fixed statement is written once, run
// through the same connection handling (transactions, the SQLite connection lock, named prepared
// statements on PostgreSQL), and prepared once per connection by the drivers.
import { CompiledQuery, type Kysely } from 'kysely';
import type { Dialect } from './database.ts';
import type { DB } from './schema.ts';

export interface Statement<R> {
  /** Runs the statement with positional parameters; `?` in the text is the n-th one. */
  all(db: Kysely<DB>, dialect: Dialect, params: readonly unknown[]): Promise<R[]>;
  first(db: Kysely<DB>, dialect: Dialect, params: readonly unknown[]): Promise<R | undefined>;
}

/** `text` uses `?` placeholders (SQLite's); PostgreSQL gets `$1`, `$2`, … in the same order. */
export function statement<R>(text: string | { sqlite: string; postgres: string }): Statement<R> {
  const sqlite = typeof text === 'string' ? text : text.sqlite;
  let n = 0;
  const postgres = (typeof text === 'string' ? text : text.postgres).replace(/\?/g, () => `$${++n}`);
  const all = async (db: Kysely<DB>, dialect: Dialect, params: readonly unknown[]) =>
    (await db.executeQuery<R>(CompiledQuery.raw(dialect === 'postgres' ? postgres : sqlite, params as unknown[]))).rows;
  return { all, first: async (db, dialect, params) => (await all(db, dialect, params))[0] };
}
