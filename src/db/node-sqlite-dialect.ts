// Kysely dialect for the built-in `node:sqlite` module. Kysely's own SQLite driver expects the
// better-sqlite3 interface; this adapter provides it, caches prepared statements (preparing is the
// dominant cost of a point query), and starts transactions with BEGIN IMMEDIATE so that two
// processes writing one file wait for each other (busy_timeout) instead of failing on lock upgrade.
// Hot statements may also run directly on the connection when no transaction is open (executeNow).
// Reads outside a transaction run on reader threads (sqlite-readers.ts), except statements that
// have proved cheap: those run at once on the connection, where a B-tree lookup costs less than
// handing it to a thread. The one connection writes; its transactions take turns (#lock).
import { rmSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { isCheapOrBounded, pageRows, ran, ReadCosts, type Read } from './read-costs.ts';
import { Checkpoints } from './sqlite-checkpoints.ts';
import { ReaderPool, rowObjects } from './sqlite-readers.ts';
import { Turns } from './turns.ts';

const STATEMENT_CACHE_SIZE = 500;
/** Leading comment of a statement whose own commit need not be synced (see execute). */
export const NOT_DURABLE = '/* not durable */ ';
/** A point read whose recent runs all took less than this (ms of CPU) runs on the connection. */
const CHEAP_MS = 1;
/**
 * A page that walks one index runs on the connection while it reads at most PAGE_ROWS rows (limit
 * and offset) and its recent runs took less than PAGE_MS of CPU: a page of 50 takes about 0.5 ms,
 * and a young-generation collection during it can add 3 ms to its measure.
 */
const PAGE_ROWS = 250;
const PAGE_MS = 5;
/** The index a plan searches, with the columns it constrains: `SEARCH t USING INDEX i (a=? AND b<?)`. */
const INDEX_SEARCH = /^SEARCH \S+ USING (?:(?:COVERING )?INDEX \S+|PRIMARY KEY) \((.+)\)$/;

/** CPU time of this thread, ms. */
function cpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

/**
 * What a statement cost this thread since it started (its CPU time and the time, ms): its CPU time
 * (whatever else the machine runs), never more than the time that passed. Linux counts a thread's
 * CPU time in scheduler ticks (4 ms at 250 Hz): a 20 µs read that a tick lands in measured 4 ms,
 * and a GET of one contact was then sent to the reader threads as a slow read for its next runs.
 */
const spentSince = (cpu: number, at: number) => Math.min(cpuMs() - cpu, performance.now() - at);

export class NodeSqliteConnection {
  readonly #db: DatabaseSync;
  readonly #synchronous: string;
  readonly #readers: ReaderPool | undefined;
  readonly #checkpoints: Checkpoints | undefined;
  readonly #statements = new Map<string, Prepared>();
  readonly #reads = new ReadCosts();

  constructor(db: DatabaseSync, synchronous: string, readers?: ReaderPool, checkpoints?: Checkpoints) {
    this.#db = db;
    this.#synchronous = synchronous;
    this.#readers = readers;
    this.#checkpoints = checkpoints;
  }

  /** True when a transaction is open on the connection. */
  get inTransaction(): boolean {
    return this.#db.isTransaction;
  }

  /**
   * Runs `sql` outside any transaction when it only reads: on a reader thread, or at once on the
   * connection when it is a point read whose recent runs were cheap, every one of them answering
   * at most one row, or a cheap read marked bounded. A statement whose cost depends on its values (a
   * page, a count) always goes to a thread: one run on the connection could hold the event loop for
   * as long as it takes.
   * Undefined when `sql` writes, when there are no reader threads, or for a cheap point read while
   * a transaction is open on the connection (there it would see the transaction's uncommitted
   * rows): the caller then runs it through the driver, after the transaction.
   */
  read<R>(sql: string, params: readonly unknown[]): QueryResult<R> | Promise<QueryResult<R>> | undefined {
    if (!this.#readers) return undefined;
    const read = this.#reads.of(sql);
    if (read === false) return undefined;
    if (isCheapOrBounded(read, CHEAP_MS) || this.#cheapPage(read, sql, params)) {
      // In a transaction, the caller waits for its end (milliseconds) and runs the read here then,
      // rather than queue it behind slow reads on the threads.
      if (this.#db.isTransaction) return undefined;
      const cpu = cpuMs();
      const at = performance.now();
      const result = this.execute<R>(sql, params);
      ran(read, spentSince(cpu, at), result.rows.length);
      return result;
    }
    return this.#readers.read(sql, params, read.cost, read.point).then(({ rows, ms }) => {
      ran(read, ms, rows.length);
      return { rows: rows as R[] };
    });
  }

  /**
   * A page whose recent runs were cheap, reading few rows (limit and offset) on a plan that walks one
   * index holding all of its conditions in the page's order: its work is bounded by those rows,
   * whatever the values, so it runs on the connection as a cheap point read does. Handing a page to
   * a thread costs more than reading it: on one core a page of 50 deals cost 1,807 µs of CPU through
   * the thread against 1,074 µs on the connection (the copy, the thread's turn, and the collections
   * of what requests hold while they wait).
   */
  #cheapPage(read: Read, sql: string, params: readonly unknown[]): boolean {
    if (!read.page || read.cost >= PAGE_MS || pageRows(read, params) > PAGE_ROWS) return false;
    read.walksIndex ??= this.#walksIndex(read.page.columns, sql, params);
    return read.walksIndex;
  }

  /** True when the plan of `sql` is one search of an index constraining every column of `columns`. */
  #walksIndex(columns: string[], sql: string, params: readonly unknown[]): boolean {
    try {
      const plan = this.#db.prepare(`explain query plan ${sql}`).all(...(params as never[])) as Array<{ detail: string }>;
      const searched = plan.length === 1 ? INDEX_SEARCH.exec(plan[0].detail)?.[1] : undefined;
      if (searched === undefined) return false;
      const constrained = new Set(searched.split(' AND ').map((term) => /^\w+/.exec(term)?.[0]));
      return columns.every((column) => constrained.has(column));
    } catch {
      return false;
    }
  }

  /** A cached prepared statement; the cache is bounded so dynamic SQL cannot grow it forever. */
  prepare(sql: string): Prepared {
    let entry = this.#statements.get(sql);
    if (!entry) {
      const stmt = this.#db.prepare(sql);
      const columns = stmt.columns().map((c) => c.name);
      // Rows as arrays, made objects here: cheaper than the driver's objects (see rowObjects).
      if (columns.length > 0) stmt.setReturnArrays(true);
      entry = { stmt, columns: columns.length > 0 ? columns : undefined };
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        this.#statements.delete(this.#statements.keys().next().value as string);
      }
      this.#statements.set(sql, entry);
    }
    return entry;
  }

  execute<R>(sql: string, params: readonly unknown[]): QueryResult<R> {
    const { stmt, columns } = this.prepare(sql);
    // A statement marked NOT_DURABLE commits without syncing the log when it runs on its own: a
    // later synced commit makes it durable too (the log is written in order), and losing it in a
    // power cut loses nothing else.
    const relaxed = sql.startsWith(NOT_DURABLE) && !this.#db.isTransaction;
    if (relaxed) this.#db.exec('PRAGMA synchronous = NORMAL');
    try {
      if (columns) return { rows: rowObjects(columns, stmt.all(...(params as never[])) as unknown as unknown[][]) as R[] };
      const { changes, lastInsertRowid } = stmt.run(...(params as never[]));
      return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
    } finally {
      if (relaxed) this.#db.exec(`PRAGMA synchronous = ${this.#synchronous}`);
      // A commit, or a write on its own (its own commit); reads and the statements of an open transaction are neither.
      if (this.#checkpoints && !this.#db.isTransaction && !sql.startsWith('select')) this.#checkpoints.committed();
    }
  }

  /**
   * Runs a statement outside any transaction without waiting for the driver: a read as `read`
   * does; anything else at once, unless a transaction is open on the connection (its writes are
   * not committed, and a statement now would join it; the caller then waits for it through the
   * driver). A statement on the connection runs to completion synchronously: nothing interleaves.
   */
  executeNow<R>(sql: string, params: readonly unknown[]): QueryResult<R> | Promise<QueryResult<R>> | undefined {
    const read = this.read<R>(sql, params);
    if (read !== undefined) return read;
    if (this.#db.isTransaction) return undefined;
    return this.execute<R>(sql, params);
  }

  *iterate<R>(compiled: CompiledQuery): IterableIterator<QueryResult<R>> {
    const { stmt, columns } = this.prepare(compiled.sql);
    for (const row of stmt.iterate(...(compiled.parameters as never[]))) yield { rows: rowObjects(columns ?? [], [row as unknown as unknown[]]) as R[] };
  }
}

/** A prepared statement, with the names of the columns it answers (undefined when it answers none). */
interface Prepared {
  stmt: StatementSync;
  columns: string[] | undefined;
}

/** One use of the connection by Kysely: a transaction, or a statement on its own. */
class ConnectionUse implements DatabaseConnection {
  readonly connection: NodeSqliteConnection;
  readonly lock: Turns;
  inTransaction = false;

  constructor(connection: NodeSqliteConnection, lock: Turns) {
    this.connection = connection;
    this.lock = lock;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction) return this.connection.execute<R>(compiled.sql, compiled.parameters);
    const read = this.connection.read<R>(compiled.sql, compiled.parameters);
    if (read !== undefined) return read;
    await this.lock.take();
    try {
      return this.connection.execute<R>(compiled.sql, compiled.parameters);
    } finally {
      this.lock.release();
    }
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (this.inTransaction) {
      yield* this.connection.iterate<R>(compiled);
      return;
    }
    await this.lock.take();
    try {
      yield* this.connection.iterate<R>(compiled);
    } finally {
      this.lock.release();
    }
  }
}

export interface NodeSqliteOptions {
  /** File path or ':memory:'. */
  path: string;
  /**
   * Reader threads (0: every query runs on the connection). With readers, ':memory:' is a
   * temporary file of this process, removed at close: threads cannot share a memory database.
   */
  readers?: number;
}

let temporaryFiles = 0;

class NodeSqliteDriver implements Driver {
  readonly #options: NodeSqliteOptions;
  /**
   * The turns of the connection's transactions. Kysely's own lock would also hold every read outside
   * a transaction for as long as it runs, on a thread or not; this one is held by a transaction from
   * its begin to its end, and taken briefly by the statements outside transactions that must not
   * join one (writes, and reads when there are no reader threads).
   */
  readonly #lock = new Turns(1);
  #db?: DatabaseSync;
  #connection?: NodeSqliteConnection;
  #readers?: ReaderPool;
  #checkpoints?: Checkpoints;
  #temporary?: string;

  /** The connection, once the driver has opened it. */
  get connection(): NodeSqliteConnection | undefined {
    return this.#db ? this.#connection : undefined;
  }

  constructor(options: NodeSqliteOptions) {
    this.#options = options;
  }

  async init(): Promise<void> {
    const readers = this.#options.readers ?? 0;
    let path = this.#options.path;
    // WAL lets readers proceed during a write; FULL syncs the WAL on every commit, so an
    // acknowledged write survives a power cut, not only a process crash. A temporary file standing
    // for a memory database is never synced: it does not outlive the process.
    let synchronous = 'FULL';
    if (path === ':memory:' && readers > 0) {
      path = this.#temporary = join(tmpdir(), `revenue-data-${process.pid}-${++temporaryFiles}-${Date.now()}.db`);
      synchronous = 'OFF';
    }
    const db = new DatabaseSync(path, { timeout: 10_000 });
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${synchronous}`);
    db.exec('PRAGMA foreign_keys = ON');
    db.exec('PRAGMA temp_store = MEMORY');
    // 16 MiB of pages in process (the operating system caches the file too): the hot B-tree pages
    // stay here. At a million contacts the leaves of a random read miss 32 MiB as often as 16; the
    // 16 MiB more (in the process's RSS once filled) bought no read speed measured in turn.
    db.exec('PRAGMA cache_size = -16384');
    this.#db = db;
    if (readers > 0) this.#readers = new ReaderPool(path, readers);
    // A file's WAL is checkpointed by a thread of its own; a memory database has no WAL.
    if (path !== ':memory:') this.#checkpoints = new Checkpoints(db, path);
    this.#connection = new NodeSqliteConnection(db, synchronous, this.#readers, this.#checkpoints);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new ConnectionUse(this.#connection!, this.#lock);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const use = connection as ConnectionUse;
    await this.#lock.take();
    try {
      use.connection.execute('begin immediate', []);
    } catch (error) {
      this.#lock.release();
      throw error;
    }
    use.inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // A commit that fails leaves the transaction to Kysely's rollback, which ends its turn.
    (connection as ConnectionUse).connection.execute('commit', []);
    this.#end(connection as ConnectionUse);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const use = connection as ConnectionUse;
    try {
      if (use.connection.inTransaction) use.connection.execute('rollback', []);
    } finally {
      this.#end(use);
    }
  }

  #end(use: ConnectionUse): void {
    if (!use.inTransaction) return;
    use.inTransaction = false;
    this.#lock.release();
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    await this.#readers?.close();
    await this.#checkpoints?.close();
    this.#db?.close();
    this.#db = undefined;
    if (this.#temporary) for (const suffix of ['', '-wal', '-shm']) rmSync(this.#temporary + suffix, { force: true });
  }
}

/**
 * SQLite runs DDL inside transactions, so migrations are atomic and serialized by BEGIN IMMEDIATE.
 * The driver orders its transactions itself (its #lock), so Kysely need not lock the
 * connection around every statement.
 */
class NodeSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }

  override get supportsMultipleConnections(): boolean {
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
   * A statement run without the query executor: directly on the connection, or on a reader thread
   * (see NodeSqliteConnection.executeNow); undefined when that is not possible now (not opened yet,
   * or a transaction is open that the statement would have to wait for).
   */
  executeNow<R>(sql: string, params: readonly unknown[]): QueryResult<R> | Promise<QueryResult<R>> | undefined {
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
