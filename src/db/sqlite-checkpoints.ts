// Checkpoints of the SQLite store off the event loop. By default the connection that commits copies
// the WAL back into the database file whenever the WAL passes 1,000 pages, and syncs the file, all
// inside that commit: measured under group-committed creates, that was 40% of every commit's time,
// with the event loop blocked throughout. The writer turns it off and a thread of its own
// (sqlite-checkpointer.js) checkpoints after commits instead.
//
// A checkpoint copies what was committed when it started; the WAL starts again from its beginning
// only at a write that finds it all copied. Under writes that never pause, the thread may stay just
// behind and the WAL grow: past MAX_WAL_FRAMES the writer checkpoints itself once, between two
// transactions, copying only what the thread has not yet, and the WAL starts again.
import { once } from 'node:events';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';

const CHECKPOINTER = new URL('./sqlite-checkpointer.js', import.meta.url);
// Offsets of the state shared with the thread (Int32): commits so far, the WAL's pages at its last
// checkpoint, the stop flag. The thread is given them with its state.
const SLOTS = { COMMITS: 0, WAL_FRAMES: 1, STOP: 2 } as const;
const { COMMITS, WAL_FRAMES, STOP } = SLOTS;
/** Pages (4 KiB) of WAL past which the writer checkpoints itself: 64 MiB. */
const MAX_WAL_FRAMES = 16_384;
/** SQLite's own threshold, restored if the thread is lost. */
const AUTOCHECKPOINT_FRAMES = 1000;

export class Checkpoints {
  readonly #state = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  readonly #worker: Worker;
  readonly #checkpoint: StatementSync;
  #running = true;

  constructor(db: DatabaseSync, path: string) {
    this.#checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
    db.exec('PRAGMA wal_autocheckpoint = 0');
    this.#worker = new Worker(CHECKPOINTER, { workerData: { path, state: this.#state.buffer, slots: SLOTS }, resourceLimits: { maxYoungGenerationSizeMb: 1 } });
    this.#worker.unref();
    // Without the thread, the writer checkpoints as SQLite does by default.
    const lost = () => {
      if (!this.#running) return;
      this.#running = false;
      db.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_FRAMES}`);
    };
    this.#worker.on('error', lost);
    this.#worker.on('exit', lost);
  }

  /** After a statement that committed on the writer: wakes the thread, or checkpoints here past the bound. */
  committed(): void {
    if (!this.#running) return;
    Atomics.add(this.#state, COMMITS, 1);
    Atomics.notify(this.#state, COMMITS);
    if (Atomics.load(this.#state, WAL_FRAMES) <= MAX_WAL_FRAMES) return;
    try {
      this.#checkpoint.get();
      // The next write starts the WAL again; the thread reports its size from then on.
      Atomics.store(this.#state, WAL_FRAMES, 0);
    } catch {
      // Busy (the thread's checkpoint, or another process's): the commit stands; the next one tries again.
    }
  }

  /** Stops the thread (before the writer closes, which checkpoints what is left). */
  async close(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    const exited = once(this.#worker, 'exit');
    this.#worker.ref(); // its exit is awaited
    Atomics.store(this.#state, STOP, 1);
    Atomics.notify(this.#state, COMMITS);
    Atomics.notify(this.#state, STOP);
    await exited;
  }
}
