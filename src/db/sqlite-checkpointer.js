// The checkpoint thread of the SQLite store (see sqlite-checkpoints.ts): its own connection copies
// the pages that commits appended to the WAL back into the database file and syncs it, so the
// committing connection on the event loop never does. It sleeps until a commit wakes it, and runs
// at most one checkpoint each CHECKPOINT_EVERY_MS: a hot page written by every commit is then
// copied once for many of them. Plain JavaScript, like the reader threads.
import { DatabaseSync } from 'node:sqlite';
import { workerData } from 'node:worker_threads';

// Offsets of the shared state, declared in sqlite-checkpoints.ts.
const { COMMITS, WAL_FRAMES, STOP } = workerData.slots;
const CHECKPOINT_EVERY_MS = 20;

const state = new Int32Array(workerData.state);
const db = new DatabaseSync(workerData.path, { timeout: 10_000 });
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

let seen = 0;
while (Atomics.load(state, STOP) === 0) {
  Atomics.wait(state, COMMITS, seen);
  if (Atomics.load(state, STOP) !== 0) break;
  seen = Atomics.load(state, COMMITS);
  try {
    const { log } = checkpoint.get();
    Atomics.store(state, WAL_FRAMES, log);
  } catch {
    // Busy (another process's checkpoint, or the file is being closed): the next commit tries again.
  }
  Atomics.wait(state, STOP, 0, CHECKPOINT_EVERY_MS);
}
db.close();
