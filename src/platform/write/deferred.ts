// The statements a write queues to run at its end (`later`), with the rows of one table and columns
// merged into few inserts and the statements queued under one key added up into one.
import type { Compilable, Transaction } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import { shaped } from '../../db/prepared.ts';
import type { DB } from '../../db/schema.ts';
import type { TenantTable } from '../resource/tenancy.ts';

/** A query builder's statement, ready to run. */
export type DeferredStatement = Compilable & { execute(): Promise<unknown> };

/**
 * Rows of one shape are inserted by statements of 256, 128, … 16 rows, then one of the last 8 or
 * fewer: each statement's text is one of a few per shape, built once (`shaped`), and none passes
 * SQLite's limit of parameters.
 */
const MERGED_ROWS = 256;
const LAST_ROWS = 8;

/** A row to insert: its values by column, and its parameters in the order of its columns. */
export interface InsertRow {
  values: Record<string, unknown>;
  params: unknown[];
}

/** A row queued by `insertLater`. */
interface QueuedRow extends InsertRow {
  table: TenantTable;
  /** Its columns, in the order of its parameters. */
  columns: string[];
  /** The table and the columns given: rows of one shape share a statement. */
  shape: string;
}

/** A statement queued by `laterAddingUp`: built from the values of its key added up. */
interface QueuedSum {
  sumKey: string;
  values: Record<string, unknown>;
  build(values: Record<string, unknown>): DeferredStatement;
}

/** A row queued by `insertLater`, as its callers hold it. */
export type QueuedInsert = object;

type Queued = DeferredStatement | QueuedRow | QueuedSum;

/** The statements inserting `rows` (all of one `shape`) into `table` (see MERGED_ROWS). */
export function mergedInserts(tx: Transaction<DB>, dialect: Dialect, table: TenantTable, shape: string, rows: InsertRow[]): DeferredStatement[] {
  const out: DeferredStatement[] = [];
  for (let i = 0, size = MERGED_ROWS; i < rows.length; size >>= 1) {
    if (rows.length - i <= LAST_ROWS) size = rows.length - i;
    for (; rows.length - i >= size; i += size) {
      const chunk = rows.slice(i, i + size);
      out.push(shaped(tx, dialect, `insert ${shape} ${size}`, chunk.flatMap((r) => r.params), () => tx.insertInto(table).values(chunk.map((r) => r.values) as never)));
    }
  }
  return out;
}

/** The statements a write queued, in order (see WriteContext's `later`, `laterAddingUp`, `insertLater`). */
export class Deferred {
  readonly #tx: Transaction<DB>;
  readonly #dialect: Dialect;
  readonly #queued: Queued[] = [];

  constructor(tx: Transaction<DB>, dialect: Dialect) {
    this.#tx = tx;
    this.#dialect = dialect;
  }

  /** How many are queued; `truncate` drops those queued after such a count (a part rolled back). */
  get length(): number {
    return this.#queued.length;
  }

  truncate(length: number): void {
    this.#queued.length = length;
  }

  later(statement: DeferredStatement): void {
    this.#queued.push(statement);
  }

  laterAddingUp(key: string, values: Record<string, unknown>, build: (values: Record<string, unknown>) => DeferredStatement): void {
    this.#queued.push({ sumKey: key, values, build });
  }

  insertLater(table: TenantTable, row: Record<string, unknown>): QueuedInsert {
    const columns = Object.keys(row).filter((c) => row[c] !== undefined);
    const queued: QueuedRow = { table, shape: `${table} ${columns.join()}`, columns, values: row, params: columns.map((c) => row[c]) };
    this.#queued.push(queued);
    return queued;
  }

  static setQueued(insert: QueuedInsert, column: string, value: unknown): void {
    const queued = insert as QueuedRow;
    const at = queued.columns.indexOf(column);
    if (at < 0) throw new Error(`${queued.table}: column ${column} was not given to insertLater`);
    queued.params[at] = value;
    queued.values[column] = value;
  }

  /**
   * Takes the queued statements, the rows of one shape merged (see `insertLater`): between two other
   * statements, rows are inserted shape by shape (they are rows of no foreign key to each other).
   */
  take(): DeferredStatement[] {
    const queued = addedUp(this.#queued.splice(0));
    // Most writes of requests queue nothing, or no rows: nothing to group.
    if (!queued.some((q) => 'shape' in q)) return queued as DeferredStatement[];
    const out: DeferredStatement[] = [];
    const shapes = new Map<string, QueuedRow[]>();
    const insertRows = () => {
      for (const rows of shapes.values()) out.push(...mergedInserts(this.#tx, this.#dialect, rows[0].table, rows[0].shape, rows));
      shapes.clear();
    };
    for (const q of queued) {
      if ('shape' in q) {
        const rows = shapes.get(q.shape);
        if (rows) rows.push(q);
        else shapes.set(q.shape, [q]);
      } else {
        insertRows();
        out.push(q);
      }
    }
    insertRows();
    return out;
  }
}

/** The queued statements with those queued under one key (`laterAddingUp`) made one, where the first was. */
function addedUp(queued: Queued[]): Array<DeferredStatement | QueuedRow> {
  if (!queued.some((q) => 'sumKey' in q)) return queued as Array<DeferredStatement | QueuedRow>;
  const sums = new Map<string, QueuedSum>();
  const out: Queued[] = [];
  for (const q of queued) {
    if (!('sumKey' in q)) {
      out.push(q);
      continue;
    }
    const first = sums.get(q.sumKey);
    if (!first) {
      const sum = { ...q, values: { ...q.values } };
      sums.set(q.sumKey, sum);
      out.push(sum);
    } else {
      for (const [name, value] of Object.entries(q.values)) if (typeof value === 'number') first.values[name] = (first.values[name] as number) + value;
    }
  }
  return out.map((q) => ('sumKey' in q ? q.build(q.values) : q));
}
