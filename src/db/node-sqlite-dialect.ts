// Kysely dialect for the built-in `node:sqlite` module. Kysely's own SQLite driver expects the
// better-sqlite3 interface; this adapter provides it, caches prepared statements (preparing is the
// dominant cost of a point query), and starts transactions with BEGIN IMMEDIATE so that two
// processes writing one file wait for each other (busy_timeout) instead of failing on lock upgrade.
// Hot statements may also run directly on the connection when no transaction is open (executeNow).
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';

const STATEMENT_CACHE_SIZE = 500;
// FULL syncs the log on every commit, so an acknowledged write survives a power cut.
const SYNCHRONOUS = 'FULL';
/** Leading comment of a statement whose own commit need not be synced (see execute). */
export const NOT_DURABLE = '/* not durable */ ';

export class NodeSqliteConnection implements DatabaseConnection {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, { stmt: StatementSync; reader: boolean }>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** A cached prepared statement; the cache is bounded so dynamic SQL cannot grow it forever. */
  prepare(sql: string): { stmt: StatementSync; reader: boolean } {
    let entry = this.#statements.get(sql);
    if (!entry) {
      const stmt = this.#db.prepare(sql);
      entry = { stmt, reader: stmt.columns().length > 0 };
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        this.#statements.delete(this.#statements.keys().next().value as string);
      }
      this.#statements.set(sql, entry);
    }
    return entry;
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    return Promise.resolve(this.execute<R>(compiled.sql, compiled.parameters));
  }

  execute<R>(sql: string, params: readonly unknown[]): QueryResult<R> {
    const { stmt, reader } = this.prepare(sql);
    // A statement marked NOT_DURABLE commits without syncing the log when it runs on its own: a
    // later synced commit makes it durable too (the log is written in order), and losing it in a
    // power cut loses nothing else.
    const relaxed = sql.startsWith(NOT_DURABLE) && !this.#db.isTransaction;
    if (relaxed) this.#db.exec('PRAGMA synchronous = NORMAL');
    try {
      if (reader) return { rows: stmt.all(...(params as never[])) as R[] };
      const { changes, lastInsertRowid } = stmt.run(...(params as never[]));
      return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
    } finally {
      if (relaxed) this.#db.exec(`PRAGMA synchronous = ${SYNCHRONOUS}`);
    }
  }

  /**
   * Runs a statement at once, unless a transaction is open on the connection (its writes are not
   * committed, and a statement now would join it; the caller then waits for it through the
   * driver). The statement runs to completion synchronously, so nothing else can interleave.
   */
  executeNow<R>(sql: string, params: readonly unknown[]): QueryResult<R> | undefined {
    if (this.#db.isTransaction) return undefined;
    return this.execute<R>(sql, params);
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const { stmt } = this.prepare(compiled.sql);
    for (const row of stmt.iterate(...(compiled.parameters as never[]))) yield { rows: [row as R] };
  }
}

export interface NodeSqliteOptions {
  /** File path or ':memory:'. */
  path: string;
}

class NodeSqliteDriver implements Driver {
  readonly #options: NodeSqliteOptions;
  #db?: DatabaseSync;
  #connection?: NodeSqliteConnection;

  /** The connection, once the driver has opened it. */
  get connection(): NodeSqliteConnection | undefined {
    return this.#db ? this.#connection : undefined;
  }

  constructor(options: NodeSqliteOptions) {
    this.#options = options;
  }

  async init(): Promise<void> {
    const db = new DatabaseSync(this.#options.path, { timeout: 10_000 });
    // WAL lets readers in other processes proceed during a write; FULL syncs the WAL on every
    // commit, so an acknowledged write survives a power cut, not only a process crash.
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${SYNCHRONOUS}`);
    db.exec('PRAGMA foreign_keys = ON');
    db.exec('PRAGMA temp_store = MEMORY');
    // 32 MiB of pages in process (the operating system caches the file too): the hot B-tree pages
    // stay here while the process stays well within its memory budget.
    db.exec('PRAGMA cache_size = -32768');
    this.#db = db;
    this.#connection = new NodeSqliteConnection(db);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.#connection!;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    this.#db?.close();
    this.#db = undefined;
  }
}

/** SQLite runs DDL inside transactions, so migrations are atomic and serialized by BEGIN IMMEDIATE. */
class NodeSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

export class NodeSqliteDialect implements Dialect {
  readonly #options: NodeSqliteOptions;
  #driver?: NodeSqliteDriver;

  constructor(options: NodeSqliteOptions) {
    this.#options = options;
  }

  createDriver(): Driver {
    this.#driver = new NodeSqliteDriver(this.#options);
    return this.#driver;
  }

  /**
   * A statement run directly on the connection, bypassing the query executor and its connection
   * lock; undefined when that is not possible now (not opened yet, or in a transaction).
   */
  executeNow<R>(sql: string, params: readonly unknown[]): QueryResult<R> | undefined {
    return this.#driver?.connection?.executeNow<R>(sql, params);
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new NodeSqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}
