// What a store has learnt of the statements that only read: which look up single rows, and what
// their recent runs cost. Both stores give cheap point reads a lane of their own, so that a GET of one
// record never waits behind slow reads (SQLite: the connection on the event loop rather than a
// reader thread's queue; PostgreSQL: connections kept for them when the pool is busy).

/**
 * Leading comment of a read whose work does not grow with the store: a handful of rows whatever the
 * tenant's size (a summary of maintained totals, one row per stage). On SQLite it runs on the
 * connection while cheap, as a point read does, although it aggregates or answers several rows.
 */
export const BOUNDED = '/* bounded */ ';

/** What is known of a statement that only reads. */
export interface Read {
  /** Its text looks up single rows: no aggregate, no grouping, no page of many rows. */
  point: boolean;
  /** Marked BOUNDED by its author. */
  bounded: boolean;
  /** What its recent runs took, ms: a decaying maximum (Infinity before the first run). */
  cost: number;
  /**
   * For a page (`… where <column> <op> ? and … order by … limit ? [offset ?]`): the columns its
   * conditions compare, which a store can check against the index its plan walks (see `pageOf`).
   */
  page?: { columns: string[]; offset: boolean };
  /** Set by the store once it has checked the page's plan: it walks one index holding every condition. */
  walksIndex?: boolean;
}

const PAGE = /^select ([^()]+?) from "?\w+"? where (.+) order by ([^()]+?) limit \?( offset \?)?$/is;
const CONDITION = /^(?:"\w+"\.)?"(\w+)" (?:=|<|<=|>|>=) \?$/;

/**
 * The conditions of a page that reads one table and compares columns with values only, or undefined.
 * Such a page reads at most its limit and offset of rows when its plan walks an index that holds all
 * of its conditions in the order of the page: nothing it reads is then left out by a condition.
 */
function pageOf(text: string): Read['page'] {
  const match = PAGE.exec(text.trim());
  if (!match) return undefined;
  const columns: string[] = [];
  for (const condition of match[2].split(/ and /i)) {
    const column = CONDITION.exec(condition.trim())?.[1];
    if (column === undefined) return undefined;
    columns.push(column);
  }
  return { columns, offset: match[4] !== undefined };
}

/** How a statement reads, or undefined when it writes (anything but a select or a `with` that only selects). */
function classify(sql: string): Read | undefined {
  const text = sql.replace(/^(\s*\/\*.*?\*\/)*\s*/s, '');
  const reads = /^select\b/i.test(text) || (/^with\b/i.test(text) && !/\b(insert|update|delete|replace)\b/i.test(text));
  if (!reads) return undefined;
  const point = !/\b(count|sum|avg|min|max|total|group_concat|json_group_array|json_agg|string_agg)\s*\(|\bgroup\s+by\b|\blimit\s+(\?|\$\d|[2-9]|\d\d)/i.test(text);
  return { point, bounded: sql.startsWith(BOUNDED), cost: Infinity, page: point ? undefined : pageOf(text) };
}

const KEPT = 1000;

export class ReadCosts {
  /** Per statement text: how it reads, or false when it writes. Bounded, as dynamic SQL could grow it. */
  readonly #reads = new Map<string, Read | false>();

  /** What is known of `sql`, or false when it writes. */
  of(sql: string): Read | false {
    let read = this.#reads.get(sql);
    if (read === undefined) {
      read = classify(sql) ?? false;
      if (this.#reads.size >= KEPT) this.#reads.delete(this.#reads.keys().next().value as string);
      this.#reads.set(sql, read);
    }
    return read;
  }
}

/** True for a point read whose recent runs all took less than `ms`. */
export const isCheap = (read: Read | false, ms: number): boolean => read !== false && read.point && read.cost < ms;

/**
 * Rows a run of a page may read (its limit and offset, the last parameters), or Infinity for any
 * other read.
 */
export function pageRows(read: Read, params: readonly unknown[]): number {
  if (!read.page) return Infinity;
  const n = params.length;
  const rows = read.page.offset ? Number(params[n - 2]) + Number(params[n - 1]) : Number(params[n - 1]);
  return Number.isFinite(rows) ? rows : Infinity;
}

/** The same, counting reads marked BOUNDED as point reads. */
export const isCheapOrBounded = (read: Read | false, ms: number): boolean => read !== false && (read.point || read.bounded) && read.cost < ms;

/**
 * Records a run of `read`: its cost rises at once with a slow run and falls slowly with quick ones,
 * and a run that answered more than one row makes it no point read.
 */
export function ran(read: Read, ms: number, rows: number): void {
  if (rows > 1) read.point = false;
  read.cost = read.cost === Infinity || ms > read.cost ? ms : read.cost + (ms - read.cost) * 0.2;
}
