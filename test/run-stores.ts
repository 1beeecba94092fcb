// `npm test`'s suite runner: the whole suite on the embedded SQLite store and on PostgreSQL + Redis,
// both at once (they load different parts of the machine: SQLite the test process, PostgreSQL its
// own server), each line prefixed with its store. At the end it prints, per store, the wall time,
// the count of tests and the ten slowest files, then one closing line for both; it fails when
// either run fails or cannot start. TEST_STORES=sqlite (or postgres) runs one store only;
// TEST_STORES_SERIAL=1 runs them one after the other.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { ensurePeers, loadPeers } from './peers/start.ts';

interface Store {
  name: string;
  env: Record<string, string>;
}

const root = join(import.meta.dirname, '..');
const STORES: Store[] = [
  { name: 'sqlite', env: { DATABASE_URL: 'sqlite::memory:', REDIS_URL: '' } },
  {
    name: 'postgres',
    env: {
      DATABASE_URL: process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
      REDIS_URL: process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379',
    },
  },
];

interface Outcome {
  store: string;
  code: number;
  seconds: number;
  passed: number;
  failed: number;
  skipped: number;
  files: Array<{ file: string; seconds: number }>;
}

interface JsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: Array<{ name: string; startTime: number; endTime: number }>;
}

async function run(store: Store, args: string[], dir: string): Promise<Outcome> {
  const report = join(dir, `${store.name}.json`);
  const started = performance.now();
  const child = spawn(join(root, 'node_modules/.bin/vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...args], {
    cwd: root,
    env: { ...process.env, ...store.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[${store.name}] ${line}\n`));
  }
  const code = await new Promise<number>((resolve) => {
    child.on('error', (error) => {
      console.error(`[${store.name}] could not start vitest: ${error.message}`);
      resolve(1);
    });
    child.on('close', (status) => resolve(status ?? 1));
  });
  const seconds = (performance.now() - started) / 1000;
  let json: JsonReport | undefined;
  try {
    json = JSON.parse(readFileSync(report, 'utf8')) as JsonReport;
  } catch {
    // No report: the run ended before writing it (a failed global set-up); its output said why.
  }
  return {
    store: store.name, code, seconds,
    passed: json?.numPassedTests ?? 0,
    failed: json ? json.numFailedTests : 1,
    skipped: (json?.numPendingTests ?? 0) + (json?.numTodoTests ?? 0),
    files: (json?.testResults ?? []).map((r) => ({ file: relative(root, r.name), seconds: (r.endTime - r.startTime) / 1000 })),
  };
}

function summary(o: Outcome): string {
  const slowest = [...o.files].sort((a, b) => b.seconds - a.seconds).slice(0, 10);
  const total = o.files.reduce((sum, f) => sum + f.seconds, 0);
  return [
    `${o.store}: ${o.passed} passed, ${o.failed} failed, ${o.skipped} skipped in ${o.files.length} files; ${o.seconds.toFixed(0)} s wall, ${total.toFixed(0)} s of file time${o.code === 0 ? '' : ` (exit ${o.code})`}`,
    ...slowest.map((f) => `  ${f.seconds.toFixed(1).padStart(7)} s  ${f.file}`),
  ].join('\n');
}

const only = process.env.TEST_STORES;
const stores = only ? STORES.filter((s) => s.name === only) : STORES;
if (stores.length === 0) {
  console.error(`TEST_STORES=${only} names no store (sqlite or postgres)`);
  process.exit(2);
}
// The peers of the runs first, once (test/peers/): each run's global set-up then finds them ready.
try {
  await ensurePeers((await loadPeers()).filter((p) => p.neededBy === 'all' || stores.some((s) => s.name === p.neededBy)));
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
const dir = mkdtempSync(join(tmpdir(), 'rds-test-'));
const args = process.argv.slice(2);
const started = performance.now();
let outcomes: Outcome[];
if (process.env.TEST_STORES_SERIAL) {
  outcomes = [];
  for (const store of stores) outcomes.push(await run(store, args, dir));
} else {
  outcomes = await Promise.all(stores.map((store) => run(store, args, dir)));
}
rmSync(dir, { recursive: true, force: true });

console.log(`\nSuite on ${outcomes.length} store(s) in ${((performance.now() - started) / 1000).toFixed(0)} s`);
for (const o of outcomes) console.log(summary(o));
const passed = outcomes.reduce((n, o) => n + o.passed, 0);
const failed = outcomes.reduce((n, o) => n + o.failed, 0);
const skipped = outcomes.reduce((n, o) => n + o.skipped, 0);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(outcomes.every((o) => o.code === 0) ? 0 : 1);
