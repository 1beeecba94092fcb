// `npm run bench`: the baselines and scenarios of docs/performance.md on SQLite and, when
// BENCH_PG_URL or DATABASE_URL names a PostgreSQL server, on PostgreSQL in the same run. Writes
// bench/results/latest.json and prints the table; a full run also keeps the table as
// bench/results/<date>-<commit>.md, the record of that run.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { parseOptions, USAGE } from './options.ts';
import { canPin, LOAD_CORE, SERVER_CORE, startServer } from './processes.ts';
import { table, targetsOf, type SharedBaselines } from './report.ts';
import { benchStore, measure, type StoreResult } from './scenarios.ts';
import { postgresServerUrl } from './stores.ts';

const packageVersion = (name: string) => (JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as { version: string }).version;

async function postgresVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ server_version: string }>('show server_version');
  await client.end();
  return rows[0].server_version;
}

const git = (args: string[]): string | null => {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};
const gitCommit = () => git(['rev-parse', '--short', 'HEAD']);
/** The working tree differs from the commit (files changed and not committed). */
const uncommitted = () => Boolean(git(['status', '--porcelain', '--untracked-files=no']));

async function main(): Promise<void> {
  const pgServer = postgresServerUrl();
  let options;
  try {
    options = parseOptions(process.argv.slice(2), pgServer !== undefined);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  const started = performance.now();
  const log = (message: string) => console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`);
  const workDir = mkdtempSync(join(tmpdir(), 'rds-bench-run-'));
  const pinned = canPin();
  if (!pinned) log('taskset not available (or one core): service and load share the cores; figures are less reliable');

  try {
    log('baselines (a) and (b)');
    const shared = {} as SharedBaselines;
    for (const [key, script] of [['a_node_http', 'bench/baselines/node-http.ts'], ['b_fastify_json', 'bench/baselines/fastify-json.ts']] as const) {
      const server = await startServer(script, {});
      try {
        shared[key] = await measure(server, {
          url: server.url, connections: options.connections, warmupSeconds: options.warmupSeconds, rounds: options.rounds, roundSeconds: options.roundSeconds, kind: 'fixed', path: '/v1/contacts/con_1',
        }, [200]);
      } finally {
        await server.stop();
      }
    }

    const stores: Record<string, StoreResult & { targets: ReturnType<typeof targetsOf> }> = {};
    for (const kind of options.stores) {
      const result = await benchStore(kind, pgServer, { options, workDir, log });
      stores[kind] = { ...result, targets: targetsOf(result) };
    }

    const memory = new DatabaseSync(':memory:');
    const results = {
      generated_at: new Date().toISOString(),
      commit: gitCommit(),
      seconds: Math.round((performance.now() - started) / 1000),
      options,
      machine: {
        cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memory_gb: Math.round(totalmem() / 2 ** 30), kernel: release(),
        pinning: pinned ? { service_core: SERVER_CORE, load_core: LOAD_CORE } : null,
      },
      versions: {
        node: process.versions.node,
        sqlite: (memory.prepare('select sqlite_version() as v').get() as { v: string }).v,
        postgres: pgServer && options.stores.includes('postgres') ? await postgresVersion(pgServer) : null,
        fastify: packageVersion('fastify'), kysely: packageVersion('kysely'), pg: packageVersion('pg'), pino: packageVersion('pino'), autocannon: packageVersion('autocannon'),
      },
      baselines: shared,
      stores,
    };
    memory.close();
    mkdirSync(dirname(options.output), { recursive: true });
    writeFileSync(options.output, `${JSON.stringify(results, null, 2)}\n`);

    const tables = Object.values(stores).map((r) => table(shared, r, r.targets, r.seed.contacts)).join('\n\n');
    const failed = Object.values(stores).flatMap((r) => r.targets.filter((t) => !t.pass).map((t) => `${r.store} ${t.id}`));
    const verdict = failed.length ? `targets not met: ${failed.join(', ')}` : 'all targets met';
    console.log(`\n${tables}\n`);
    console.log(`${verdict}; results in ${options.output}; ${results.seconds} s`);
    if (!options.quick && results.commit) {
      const day = results.generated_at.slice(0, 10);
      const record = join(dirname(options.output), `${day}-${results.commit}.md`);
      const dirty = uncommitted() ? ' (with changes not committed)' : '';
      writeFileSync(record, [
        `# Full run at ${results.commit}${dirty}, ${day}`, '',
        `\`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`, ${results.seconds} s; ${results.machine.cores} cores (${results.machine.cpu}), ` +
        `Node ${results.versions.node}, SQLite ${results.versions.sqlite}${results.versions.postgres ? `, PostgreSQL ${results.versions.postgres}` : ''}. ` +
        `Every figure and round: \`${options.output}\` of the same run.`, '',
        '```', tables, '', verdict, '```', '',
      ].join('\n'));
      console.log(`this run's record: ${record}`);
    }
    // A full run is the record of the targets: a missed one fails it. A quick run is a smoke test of
    // the bench itself (its small data set and short rounds are not what the targets are set for).
    if (failed.length > 0 && !options.quick) process.exitCode = 1;
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
