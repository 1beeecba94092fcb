// Kysely dialect for the built-in `node:sqlite` module. Kysely's own SQLite driver expects the
// better-sqlite3 interface; this adapter provides it, caches prepared statements (preparing is the
// dominant cost of a point query), and starts transactions with BEGIN IMMEDIATE so that two
// processes writing one file wait for each other (busy_timeout) instead of failing on lock upgrade.
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
    const { stmt, reader } = this.prepare(compiled.sql);
    const params = compiled.parameters as never[];
    if (reader) return Promise.resolve({ rows: stmt.all(...params) as R[] });
    const { changes, lastInsertRowid } = stmt.run(...params);
    return Promise.resolve({
      rows: [],
      numAffectedRows: BigInt(changes),
      insertId: BigInt(lastInsertRowid),
    });
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

  constructor(options: NodeSqliteOptions) {
    this.#options = options;
  }

  async init(): Promise<void> {
    const db = new DatabaseSync(this.#options.path, { timeout: 10_000 });
    // WAL lets readers in other processes proceed during a write; FULL syncs the WAL on every
    // commit, so an acknowledged write survives a power cut, not only a process crash.
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = FULL');
    db.exec('PRAGMA foreign_keys = ON');
    db.exec('PRAGMA temp_store = MEMORY');
    db.exec('PRAGMA cache_size = -65536');
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

  constructor(options: NodeSqliteOptions) {
    this.#options = options;
  }

  createDriver(): Driver {
    return new NodeSqliteDriver(this.#options);
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
