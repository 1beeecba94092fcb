// Statements that skip Kysely's builder on the hottest paths, because building and compiling a query
// costs more than running it on SQLite: fixed SQL (`statement`: a read per request, the idempotency
// claim) and builder queries compiled once per shape (`shaped`: a record's insert, a write's events).
// Both run through the same connection handling (transactions, the SQLite transaction lock and
// reader threads, named prepared statements on PostgreSQL) and are prepared once per connection by
// the drivers. Outside a transaction they skip the query builder's executor (executeNow): on SQLite
// a write or a cheap point read runs directly on the connection and other reads on a reader thread,
// on PostgreSQL everything goes straight to the pool.
import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';
import { executeNow, type Dialect } from './database.ts';
import { NOT_DURABLE } from './node-sqlite-dialect.ts';
import { BOUNDED } from './read-costs.ts';
import type { DB } from './schema.ts';

export interface Statement<R> {
  /** Runs the statement with positional parameters; `?` in the text is the n-th one. */
  all(db: Kysely<DB>, dialect: Dialect, params: readonly unknown[]): Promise<R[]>;
  first(db: Kysely<DB>, dialect: Dialect, params: readonly unknown[]): Promise<R | undefined>;
  /** Runs a writing statement; resolves to the number of rows it changed. */
  run(db: Kysely<DB>, dialect: Dialect, params: readonly unknown[]): Promise<number>;
}

export interface StatementOptions {
  /**
   * False for a write whose own commit need not survive a power cut (its commit is not synced; the
   * next synced commit covers it). Only for records whose loss is harmless. Its text reads its
   * values from UNSYNCED (see there).
   */
  durable?: boolean;
  /**
   * A read that touches a handful of rows whatever the store's size (see BOUNDED): on SQLite it runs
   * on the connection while its runs stay cheap, as point reads do, not on a reader thread.
   */
  bounded?: boolean;
}

const marked = (text: string, options: StatementOptions) => (options.bounded ? BOUNDED : '') + text;

/**
 * The one-row source a statement that is not durable reads from (`insert … select … from UNSYNCED
 * where true`, `update … from UNSYNCED`). On PostgreSQL it turns `synchronous_commit` off for the
 * transaction of a statement run on its own, which is the statement's alone (setting it otherwise
 * takes a transaction around the statement: two more round trips); in a transaction it is a plain
 * row, so the transaction's commit stays synced. On SQLite it is a plain row, and the driver skips
 * the sync of a statement run on its own (NOT_DURABLE).
 */
export const UNSYNCED = '{unsynced}';
const PLAIN_ROW = '(select 1) as unsynced';
const UNSYNCED_ROW = "(select set_config('synchronous_commit', 'off', true)) as unsynced";

/** `text` uses `?` placeholders (SQLite's); PostgreSQL gets `$1`, `$2`, … in the same order. */
export function statement<R = never>(text: string | { sqlite: string; postgres: string }, options: StatementOptions = {}): Statement<R> {
  const texts = typeof text === 'string' ? { sqlite: text, postgres: text } : text;
  const durable = options.durable !== false;
  if (!durable && !(texts.sqlite.includes(UNSYNCED) && texts.postgres.includes(UNSYNCED))) throw new Error('A statement that is not durable reads from UNSYNCED');
  const sqlite = (durable ? '' : NOT_DURABLE) + marked(texts.sqlite, options).replace(UNSYNCED, PLAIN_ROW);
  let n = 0;
  const postgres = marked(texts.postgres, options).replace(/\?/g, () => `$${++n}`);
  const inTransaction = postgres.replace(UNSYNCED, PLAIN_ROW);
  const onItsOwn = postgres.replace(UNSYNCED, durable ? PLAIN_ROW : UNSYNCED_ROW);
  const execute = async (db: Kysely<DB>, dialect: Dialect, params: readonly unknown[]): Promise<QueryResult<R>> => {
    // executeNow runs a statement only outside any transaction; in one, the builder's executor does.
    if (dialect === 'sqlite') return (await executeNow<R>(db, sqlite, params)) ?? db.executeQuery<R>(CompiledQuery.raw(sqlite, params as unknown[]));
    return (await executeNow<R>(db, onItsOwn, params)) ?? db.executeQuery<R>(CompiledQuery.raw(inTransaction, params as unknown[]));
  };
  return {
    all: async (db, dialect, params) => (await execute(db, dialect, params)).rows,
    first: async (db, dialect, params) => (await execute(db, dialect, params)).rows[0],
    run: async (db, dialect, params) => Number((await execute(db, dialect, params)).numAffectedRows ?? 0),
  };
}

/**
 * The texts built, by shape. Lists make a shape per combination of filters, so a client could make
 * many: past SHAPES_KEPT the text used least recently goes. Until then nothing is reordered, so a
 * run costs one lookup; once full, each run moves its text to the back of the map.
 */
const shapes = new Map<string, string>();
const SHAPES_KEPT = 1000;

function keptText(key: string): string | undefined {
  const text = shapes.get(key);
  if (text !== undefined && shapes.size >= SHAPES_KEPT) {
    shapes.delete(key);
    shapes.set(key, text);
  }
  return text;
}

function keep(key: string, text: string): void {
  if (shapes.size >= SHAPES_KEPT) shapes.delete(shapes.keys().next().value!);
  shapes.set(key, text);
}

/**
 * A query whose SQL text depends only on its shape (the table, the columns given, how many values
 * an `in` list holds): Kysely builds and compiles it once per shape, and later runs reuse the text
 * with their own parameters; building and compiling a small statement costs more than running it
 * on SQLite. `params` are the query's parameters in the order its text takes them: the first build
 * of each shape checks that, so a wrong order fails at once rather than binding a value to the
 * wrong column. Its `compile` gives the same text, for a statement that holds it (a write's final
 * statement on PostgreSQL, write.ts).
 */
export function shaped<R>(db: Kysely<DB>, dialect: Dialect, shape: string, params: readonly unknown[], build: () => Compilable<R>, options: Pick<StatementOptions, 'bounded'> = {}) {
  const text = () => {
    const key = `${dialect} ${shape}`;
    let text = keptText(key);
    if (text === undefined) {
      const compiled = build().compile();
      if (compiled.parameters.length !== params.length || compiled.parameters.some((p, i) => p !== params[i])) {
        throw new Error(`The parameters given for ${shape} are not those of its query`);
      }
      text = marked(compiled.sql, options);
      keep(key, text);
    }
    return text;
  };
  return {
    /** Its text and parameters, built only for the first statement of its shape. */
    compile: () => CompiledQuery.raw(text(), params as unknown[]),
    async execute(): Promise<QueryResult<R>> {
      const sql = text();
      return (await executeNow<R>(db, sql, params)) ?? db.executeQuery<R>(CompiledQuery.raw(sql, params as unknown[]));
    },
  };
}
