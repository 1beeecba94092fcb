// Reader threads of the SQLite store. `node:sqlite` runs a query on the thread that calls it, so a
// slow read on the event loop (a search over a million rows) would hold every other request. The
// pool runs reads on threads of their own, each with its own connection to the WAL database: the
// event loop goes on serving requests, and reads use the other cores.
//
// A thread runs one message at a time, so the pool sends a thread its next message only when the
// last one is answered, and keeps the rest here: quick reads (point reads) go first, then the
// others in order, each message carrying the quick ones and others up to about a millisecond of
// expected work (at least one). The thread answers the quick ones before it starts another. A quick
// read then waits for at most the one query a thread is running, never for a queue of slow ones.
import { Worker } from 'node:worker_threads';

export interface ReadResult {
  rows: unknown[];
  /** CPU time the query took on its thread, ms. */
  ms: number;
}

type Query = [id: number, sql: string, params: readonly unknown[], quick: boolean];
type Answer = [id: number, ms: number, columns: string[] | undefined, rows: unknown[][] | undefined, error?: Record<string, unknown>];

interface Pending {
  query: Query;
  /** Expected cost, ms (Infinity when unknown). */
  cost: number;
  resolve(result: ReadResult): void;
  reject(error: Error): void;
  reader?: Reader;
}

interface Reader {
  worker: Worker;
  /** Queries sent and not yet answered. */
  inFlight: number;
}

const READER = new URL('./sqlite-reader.js', import.meta.url);
/** Expected work, ms, that one message to a thread carries beyond its first query. */
const MESSAGE_MS = 1;

/**
 * Rows as objects, from the arrays a statement returned with `setReturnArrays`: node:sqlite builds
 * arrays faster than objects, a thread copies them to the event loop faster, and this loop makes the
 * objects faster than the driver does (measured on a page of 51 rows of 19 columns: 99 + 17 µs
 * against 165 µs; the copy from a thread 58 µs against 164 µs).
 */
export function rowObjects(columns: string[], rows: unknown[][]): Array<Record<string, unknown>> {
  const out = new Array<Record<string, unknown>>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const values = rows[r];
    const row: Record<string, unknown> = {};
    for (let c = 0; c < columns.length; c++) row[columns[c]] = values[c];
    out[r] = row;
  }
  return out;
}

/** An error of the reader's connection, with the properties of a `node:sqlite` error. */
function readError(fields: Record<string, unknown>): Error {
  return Object.assign(new Error(String(fields.message)), fields);
}

export class ReaderPool {
  readonly #path: string;
  readonly #size: number;
  #readers: Reader[] = [];
  readonly #pending = new Map<number, Pending>();
  readonly #quick: Pending[] = [];
  readonly #others: Pending[] = [];
  #nextId = 0;
  #dispatching = false;
  #closed = false;

  constructor(path: string, size: number) {
    this.#path = path;
    this.#size = size;
  }

  /**
   * Runs a read on a thread (the threads start with the first read). `cost` is what its recent runs
   * took (ms, Infinity when unknown); `quick` puts it ahead of the others.
   */
  read(sql: string, params: readonly unknown[], cost: number, quick: boolean): Promise<ReadResult> {
    if (this.#closed) return Promise.reject(new Error('The SQLite store is closed'));
    while (this.#readers.length < this.#size) this.#readers.push(this.#reader());
    return new Promise((resolve, reject) => {
      const pending: Pending = { query: [this.#nextId++, sql, params, quick], cost, resolve, reject };
      this.#pending.set(pending.query[0], pending);
      (quick ? this.#quick : this.#others).push(pending);
      // The reads of one turn of the event loop leave together.
      if (!this.#dispatching) {
        this.#dispatching = true;
        queueMicrotask(() => this.#dispatch());
      }
    });
  }

  /** Stops the threads; reads still waiting or running fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const readers = this.#readers;
    this.#readers = [];
    this.#quick.length = 0;
    this.#others.length = 0;
    for (const pending of this.#pending.values()) pending.reject(new Error('The SQLite store is closed'));
    this.#pending.clear();
    await Promise.all(readers.map((r) => r.worker.terminate()));
  }

  /** Sends each idle thread its next message. */
  #dispatch(): void {
    this.#dispatching = false;
    for (const reader of this.#readers) {
      if (reader.inFlight > 0) continue;
      // Every quick read waiting, and at least one other: a stream of quick reads never starves them.
      const batch = this.#quick.splice(0);
      let others = 0;
      let expected = 0;
      while (this.#others.length > 0 && (others === 0 || expected + this.#others[0].cost <= MESSAGE_MS)) {
        const next = this.#others.shift()!;
        others++;
        expected += next.cost;
        batch.push(next);
      }
      if (batch.length === 0) return;
      for (const pending of batch) pending.reader = reader;
      // A thread with queries in flight keeps the process alive until they are answered.
      reader.worker.ref();
      reader.inFlight = batch.length;
      reader.worker.postMessage(batch.map((p) => p.query));
    }
  }

  #reader(): Reader {
    const worker = new Worker(READER, { workerData: { path: this.#path }, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
    worker.unref();
    const reader: Reader = { worker, inFlight: 0 };
    worker.on('message', (answers: Answer[]) => this.#answer(reader, answers));
    worker.on('error', (error) => this.#lost(reader, error));
    worker.on('exit', (code) => this.#lost(reader, new Error(`SQLite reader thread exited (${code})`)));
    return reader;
  }

  #answer(reader: Reader, answers: Answer[]): void {
    for (const [id, ms, columns, rows, error] of answers) {
      const pending = this.#pending.get(id);
      if (!pending) continue;
      this.#pending.delete(id);
      reader.inFlight--;
      if (error) pending.reject(readError(error));
      else pending.resolve({ rows: rowObjects(columns!, rows!), ms });
    }
    if (reader.inFlight > 0) return;
    reader.worker.unref();
    this.#dispatch();
  }

  /** A thread that stopped fails the queries it had; the next read starts another in its place. */
  #lost(reader: Reader, error: Error): void {
    const index = this.#readers.indexOf(reader);
    if (index < 0) return;
    this.#readers.splice(index, 1);
    for (const [id, pending] of this.#pending) {
      if (pending.reader !== reader) continue;
      this.#pending.delete(id);
      pending.reject(error);
    }
    void reader.worker.terminate();
    if (this.#quick.length + this.#others.length > 0 && !this.#closed) {
      this.#readers.push(this.#reader());
      this.#dispatch();
    }
  }
}
