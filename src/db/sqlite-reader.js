// A reader thread of the SQLite store (see sqlite-readers.ts): its own connection to the WAL
// database, allowed only to read, running the queries the event loop hands it. Each query is its
// own read transaction, so it sees every write committed before it was sent. Plain JavaScript:
// a thread that loads no TypeScript needs no type stripper.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

// The thread yields the CPU to the event loop when both want it (a lower priority, Linux only: a
// thread's id there is a process id for setpriority), so a core busy with reads still answers
// requests at once.
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), 10);
} catch {
  // Elsewhere the thread keeps the process's priority.
}

const db = new DatabaseSync(workerData.path, { timeout: 10_000 });
db.exec('PRAGMA query_only = ON');
db.exec('PRAGMA temp_store = MEMORY');
// The writer keeps the hot pages; a reader's own cache is smaller and the file is in the OS cache.
db.exec('PRAGMA cache_size = -4096');

const statements = new Map();
const STATEMENT_CACHE_SIZE = 500;

// Rows leave as arrays beside their column names: both building them and copying them to the
// event loop cost about a third of what the same rows as objects cost. Blobs of BLOB columns (an
// import's file, a megabyte a row) are moved to the event loop rather than copied: a copy left
// here waits for this thread's rare collections, and an import of 1,000,000 rows left 60 MB of
// them behind.
function prepare(sql) {
  let entry = statements.get(sql);
  if (!entry) {
    const stmt = db.prepare(sql);
    stmt.setReturnArrays(true);
    const columns = stmt.columns();
    const blobs = columns.flatMap((c, i) => (c.type?.toUpperCase() === 'BLOB' ? [i] : []));
    entry = { stmt, columns: columns.map((c) => c.name), blobs };
    if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value);
    statements.set(sql, entry);
  }
  return entry;
}

/** CPU time of this thread, ms. */
function cpuMs() {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

/**
 * What a query cost this thread since it started (CPU time and time, ms): its CPU time, never more
 * than the time that passed, since Linux counts a thread's CPU time in scheduler ticks (see
 * `spentSince` in node-sqlite-dialect.ts).
 */
const spentSince = (cpu, at) => Math.min(cpuMs() - cpu, performance.now() - at);

// A message is a batch of [id, sql, params, quick]; answers are batches of [id, ms, columns, rows]
// or [id, ms, undefined, undefined, error], `ms` what the query cost the thread (`spentSince`). Answers go back before a
// query that is not quick starts, and whenever a millisecond has passed, so a slow query holds back
// no answer.
parentPort.on('message', (batch) => {
  let answers = [];
  let moved = [];
  let since = performance.now();
  const send = () => {
    parentPort.postMessage(answers, moved);
    answers = [];
    moved = [];
    since = performance.now();
  };
  for (const [id, sql, params, quick] of batch) {
    if (!quick && answers.length > 0) send();
    const cpu = cpuMs();
    const at = performance.now();
    try {
      const { stmt, columns, blobs } = prepare(sql);
      const rows = stmt.all(...params);
      for (const i of blobs) for (const row of rows) if (row[i] instanceof Uint8Array) moved.push(row[i].buffer);
      answers.push([id, spentSince(cpu, at), columns, rows]);
    } catch (error) {
      const { message, code, errcode, errstr } = error;
      answers.push([id, spentSince(cpu, at), undefined, undefined, { message, code, errcode, errstr }]);
    }
    if (performance.now() - since > 1) send();
  }
  if (answers.length > 0) send();
});
