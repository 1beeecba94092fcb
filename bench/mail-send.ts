// Scenarios 20 to 22 (the e-mail channel, bench/mail-scenarios.ts) alone, on one store, for work on
// the channel; `npm run bench` runs them with every other scenario and checks their targets.
//   npx node bench/mail-send.ts [--quick] [--store sqlite|postgres]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { mailScenarios } from './mail-scenarios.ts';
import { parseOptions } from './options.ts';
import { startServer, type Server } from './processes.ts';
import { measureInTurn, type Figure } from './scenarios.ts';
import { createSeededOrg, seedContacts } from './seed.ts';
import { createStore, postgresServerUrl } from './stores.ts';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, store: { type: 'string', default: 'sqlite' } } });
const kind = values.store as 'sqlite' | 'postgres';
const options = parseOptions([...(values.quick ? ['--quick'] : []), '--store', kind], postgresServerUrl() !== undefined);
const store = await createStore(kind, postgresServerUrl());
const database = openDatabase(store.url);
const workDir = mkdtempSync(join(tmpdir(), 'rds-bench-mail-'));
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
  const mail = await mailScenarios({
    kind, storeUrl: store.url, database, options, workDir, log, env,
    start: async (script, given) => {
      const server = await startServer(script, given, join(workDir, 'service.log'));
      servers.push(server);
      return server;
    },
    stop: async (server) => {
      await server.stop();
      servers.splice(servers.indexOf(server), 1);
    },
    inTurn: (runs) => measureInTurn(runs.map(({ server, spec }) => ({
      server, spec: { url: server.url, connections: options.connections, warmupSeconds: options.warmupSeconds, rounds: options.rounds, roundSeconds: options.roundSeconds, ...spec },
    })), [200]) as Promise<Figure[]>,
    getOneSpec: { kind: 'random-id', path: '/v1/contacts/', idsFile, headers: { authorization: `Bearer ${org.token}` } },
  });
  const { s20_mail_sends: s, s21_inbound: i, s22_inbox_list: l } = mail;
  console.log(`${kind} 20: SMTP + DKIM ${s.smtp.perSecond}/s (target 200), local driver ${s.local.perSecond}/s (target 1000), (i) nodemailer alone ${s.bare.perSecond}/s; ${s.messages} each, ${s.smtp.signed} signed, ${s.smtp.duplicates} received twice`);
  console.log(`${kind} 21: inbound ${i.perSecond} messages/s (target 500); ${i.messages} posted, ${i.threads} threads, ${i.refused} refused`);
  console.log(`${kind} 22: inbox first page ${l.list.rps} req/s, GET one ${l.getOne.rps} req/s: ${(l.list.rps / l.getOne.rps).toFixed(3)} (target 0.3); ${l.threads} threads, ${l.list.unexpected + l.getOne.unexpected} unexpected`);
} finally {
  for (const server of servers) await server.stop();
  await database.close();
  await store.drop();
  rmSync(workDir, { recursive: true, force: true });
}
