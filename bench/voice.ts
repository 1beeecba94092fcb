// Scenarios 25 and 26 (voice, bench/voice-scenarios.ts) alone, on one store, for work on the voice
// group; `npm run bench` runs them with every other scenario and checks their targets.
//   npx node bench/voice.ts [--quick] [--store sqlite|postgres]   (BENCH_VOICE_JSON=<file>: every figure as JSON)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { parseOptions } from './options.ts';
import { startServer, type Server } from './processes.ts';
import { measureInTurn } from './scenarios.ts';
import { createSeededOrg, seedContacts } from './seed.ts';
import { createStore, postgresServerUrl } from './stores.ts';
import { voiceRows, voiceTargets } from './report.ts';
import { voiceScenarios } from './voice-scenarios.ts';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, store: { type: 'string', default: 'sqlite' } } });
const kind = values.store as 'sqlite' | 'postgres';
const options = parseOptions([...(values.quick ? ['--quick'] : []), '--store', kind], postgresServerUrl() !== undefined);
const store = await createStore(kind, postgresServerUrl());
const database = openDatabase(store.url);
const workDir = mkdtempSync(join(tmpdir(), 'rds-bench-voice-'));
const servers: Server[] = [];
const started = performance.now();
const log = (message: string) => console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`);
try {
  await migrateToLatest(database);
  const org = await createSeededOrg(database, 'GET one org');
  const ids: string[] = [];
  await seedContacts(database, org, 10_000, (id, i) => (i % 10 === 0 ? ids.push(id) : undefined));
  const idsFile = join(workDir, 'ids.txt');
  writeFileSync(idsFile, ids.join('\n'));
  const env = { DATABASE_URL: store.url, LOG_LEVEL: 'info', SECRET_KEY: 'bench-secret-key-0123456789abcdef-0123456789', REDIS_URL: '', RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '2000000' };
  const voice = await voiceScenarios({
    kind, database, options, workDir, log, env,
    start: async (script, given) => {
      const server = await startServer(script, given, join(workDir, 'service.log'));
      servers.push(server);
      return server;
    },
    stop: async (server) => {
      await server.stop();
      servers.splice(servers.indexOf(server), 1);
    },
    inTurn: (runs) => measureInTurn(runs.map(({ server, spec, ...hooks }) => ({
      server, spec: { url: server.url, connections: options.connections, warmupSeconds: options.warmupSeconds, rounds: options.rounds, roundSeconds: options.roundSeconds, ...spec }, ...hooks,
    })), [200], () => store.idle()),
    getOneSpec: { kind: 'random-id', path: '/v1/contacts/', idsFile, headers: { authorization: `Bearer ${org.token}` } },
  });
  console.log([`${kind}${options.quick ? ' (quick)' : ''}`, ...voiceRows(voice), '', ...voiceTargets(voice).map((t) => `  ${t.id} ${t.name}: ${t.value} (${t.op} ${t.target}) ${t.pass ? 'pass' : 'FAIL'}`)].join('\n'));
  if (process.env.BENCH_VOICE_JSON) writeFileSync(process.env.BENCH_VOICE_JSON, `${JSON.stringify(voice, null, 2)}\n`);
} finally {
  for (const server of servers) await server.stop();
  await database.close();
  await store.drop();
  rmSync(workDir, { recursive: true, force: true });
}
