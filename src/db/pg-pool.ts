// A `pg` pool for Kysely that runs every data query as a named prepared statement: PostgreSQL then
// parses and plans each distinct statement once per connection instead of on every call (measured
// 2.6x faster for point queries). Names are given per distinct SQL text, up to a bound, so dynamic
// SQL cannot grow the server's per-connection statement cache without limit.
//
// Cheap point reads have a lane of their own: a few connections they take when every connection of
// the pool is busy, so that a GET of one record never queues behind slow lists for a connection. A
// statement is cheap when its text looks up single rows and its recent runs were quick
// (read-costs.ts). Kysely's connections take their real connection at their first statement, so a
// read through the query builder finds its lane too; a transaction begins on the pool.
//
// Slow reads (a count over a large tenant, a search: a read that is no point read and whose recent
// runs took 5 ms or more, or that has not run yet) take turns for a few of the pool's connections
// (DATABASE_SLOW_READS) while point reads are being served: a burst of them cannot take every
// connection from the writes and quick reads, nor keep more of the server's backends busy than its
// cores can serve while a GET waits. With no point reads to protect, they may use the whole pool.
import pg from 'pg';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { isCheap, ran, ReadCosts, type Read } from './read-costs.ts';
import { Turns } from './turns.ts';

const MAX_NAMED_STATEMENTS = 1000;
const names = new Map<string, string>();
/** Connections of the point-read lane, beyond the pool's. */
const LANE_SIZE = 2;
/** A point read whose recent runs all took less than this (ms, on its connection) may take the lane; a read that took this or more is slow. */
const CHEAP_MS = 5;
/**
 * Point reads a second (over the last second) from which slow reads are held to their few turns.
 * Fewer are the service's own upkeep (an API key read again every 2 s), not readers to protect.
 */
const PROTECTED_RATE = 5;

/**
 * A statement that matches a pattern (LIKE, ILIKE) runs unnamed: PostgreSQL plans it for its values
 * on every run. A named statement gets a generic plan after five runs, and a generic plan takes any
 * pattern to select 0.5% of the rows. For contacts whose title contains `sales` (11% of a tenant) it
 * read every match and sorted them for a page of 51 (26 ms), where the plan for the value walks the
 * newest contacts until it has 51 (0.4 ms); it counted them with the `created_at` index as well,
 * which the value's plan leaves out when the range holds most of the tenant (2 ms of 15).
 */
const plannedPerRun = (sql: string) => /\bi?like\b/i.test(sql);

/** The name under which `sql` runs as a prepared statement, or undefined (a pattern's, or past the bound). */
export function statementName(sql: string): string | undefined {
  if (plannedPerRun(sql)) return undefined;
  let name = names.get(sql);
  // Leading comments (a read marked bounded) do not make a statement any less a data query.
  if (name === undefined && names.size < MAX_NAMED_STATEMENTS && /^(\s*\/\*.*?\*\/)*\s*(select|insert|update|delete|with)\b/is.test(sql)) {
    name = `s${names.size}`;
    names.set(sql, name);
  }
  return name;
}

// int8 (counts, unix seconds) fits a JS number for every value this service stores.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export interface PgPools {
  /** For Kysely. */
  pool: PostgresPool;
  /** Runs one statement outside any transaction, in the lane it belongs in. */
  query(text: string, values: readonly unknown[]): Promise<pg.QueryResult>;
}

export function createPgPool(connectionString: string, max = 10, slowReads = Math.ceil(max / 4)): PgPools {
  const lanes = new Lanes(connectionString, max, slowReads);
  return {
    pool: {
      options: lanes.main.options,
      connect: async () => new LazyClient(lanes) as unknown as PostgresPoolClient,
      end: () => lanes.end(),
    },
    async query(text, values) {
      const read = lanes.costs.of(text);
      const slow = await lanes.turnFor(read);
      let client: pg.PoolClient | undefined;
      try {
        client = await lanes.poolFor(read).connect();
        const result = await lanes.run(client, read, text, values);
        client.release();
        return result;
      } catch (error) {
        // As pg's own pool.query does: a client whose statement failed is not reused.
        client?.release(error as Error);
        throw error;
      } finally {
        if (slow) lanes.slow.release();
      }
    },
  };
}

/** The pool, and the lane of cheap point reads beside it. */
class Lanes {
  readonly main: pg.Pool;
  readonly lane: pg.Pool;
  readonly costs = new ReadCosts();
  /** The turns of slow reads for connections of the pool. */
  readonly slow: Turns;
  readonly #max: number;

  /** Point reads started in the current second (`#second`) and in the one before it. */
  #pointReads = [0, 0];
  #second = 0;

  constructor(connectionString: string, max: number, slowReads: number) {
    this.#max = max;
    const few = Math.min(slowReads, max);
    this.slow = new Turns(() => (this.#protecting() ? few : max));
    this.main = Lanes.#open(connectionString, max);
    this.lane = Lanes.#open(connectionString, LANE_SIZE);
  }

  static #open(connectionString: string, max: number): pg.Pool {
    const pool = new pg.Pool({ connectionString, max, types, connectionTimeoutMillis: 5000 });
    // An idle client that loses its server (restart, failover) emits 'error'; without a listener that
    // would crash the process. The pool replaces the client on the next checkout.
    pool.on('error', () => {});
    // A checked-out client is not covered by the pool's listener: a connection lost between two
    // statements of a transaction would emit 'error' with no listener and crash the process. The next
    // statement fails instead (503), and the pool drops the client when it is released.
    pool.on('connect', (client) => client.on('error', () => {}));
    return pool;
  }

  /** Every connection of the pool is busy. */
  #saturated(): boolean {
    return this.main.idleCount === 0 && this.main.totalCount >= this.#max;
  }

  /**
   * Waits for a slow read's turn; true when `read` is slow (its turn then ends with `slow.release()`).
   * A point read never waits; it is counted, for `#protecting`.
   */
  async turnFor(read: Read | false): Promise<boolean> {
    if (read !== false && read.point) this.#notePointRead();
    if (read === false || read.point || read.cost < CHEAP_MS) return false;
    await this.slow.take();
    return true;
  }

  #notePointRead(): void {
    const second = Math.floor(performance.now() / 1000);
    if (second !== this.#second) {
      this.#pointReads = second === this.#second + 1 ? [this.#pointReads[1], 0] : [0, 0];
      this.#second = second;
    }
    this.#pointReads[1]++;
  }

  /**
   * Point reads are being served: at least PROTECTED_RATE a second over the last second, counting
   * the second before in proportion to the part of it still within that second.
   */
  #protecting(): boolean {
    const now = performance.now() / 1000;
    const second = Math.floor(now);
    if (second > this.#second + 1) return false;
    const [before, current] = second === this.#second ? this.#pointReads : [this.#pointReads[1], 0];
    return current + before * (1 - (now - second)) >= PROTECTED_RATE;
  }

  /** The lane when `read` is a cheap point read and every connection of the pool is busy. */
  poolFor(read: Read | false): pg.Pool {
    return isCheap(read, CHEAP_MS) && this.#saturated() ? this.lane : this.main;
  }

  /**
   * Runs `text` on `client` as a named statement, and learns what it cost when it reads. While the
   * pool is saturated a run only lowers that cost: the server's CPU is then shared by every busy
   * connection, and a point read's wall time says more about the load than about the read (learning
   * from it, a read pushed out of the lane by one slow run would never come back).
   */
  async run(client: pg.PoolClient, read: Read | false, text: string, values: readonly unknown[]): Promise<pg.QueryResult> {
    const name = statementName(text);
    const loaded = this.#saturated();
    const started = performance.now();
    const result = await client.query(name ? { name, text, values: values as unknown[] } : { text, values: values as unknown[] });
    if (read !== false) {
      const ms = performance.now() - started;
      ran(read, loaded ? Math.min(ms, read.cost) : ms, result.rows.length);
    }
    return result;
  }

  async end(): Promise<void> {
    await Promise.all([this.main.end(), this.lane.end()]);
  }
}

/**
 * A client for Kysely that takes its connection at its first statement, from the pool that
 * statement belongs in, and keeps it until released (a transaction's statements share it).
 */
class LazyClient {
  readonly #lanes: Lanes;
  #client: pg.PoolClient | undefined;
  /** The client's connection is a slow read's turn. */
  #slow = false;

  constructor(lanes: Lanes) {
    this.#lanes = lanes;
  }

  async query<R>(text: string, values: readonly unknown[]): Promise<PostgresQueryResult<R>> {
    const read = this.#lanes.costs.of(text);
    if (!this.#client) {
      this.#slow = await this.#lanes.turnFor(read);
      try {
        this.#client = await this.#lanes.poolFor(read).connect();
      } catch (error) {
        this.#endTurn();
        throw error;
      }
    }
    return (await this.#lanes.run(this.#client, read, text, values)) as unknown as PostgresQueryResult<R>;
  }

  /** `true` (or an error) drops the connection instead of returning it to its pool. */
  release(destroy?: boolean | Error): void {
    const client = this.#client;
    this.#client = undefined;
    client?.release(destroy);
    this.#endTurn();
  }

  #endTurn(): void {
    if (!this.#slow) return;
    this.#slow = false;
    this.#lanes.slow.release();
  }
}

