// A process that only runs background jobs and schedules (`npm run worker`): the same code as the
// in-process workers of `npm start`, without HTTP. Any number of them may share one PostgreSQL with
// any number of API processes (WORKERS=off). It runs at a lower CPU priority (WORKER_NICE, 15 by
// default) so that, on a machine it shares with API processes, requests come first. On SIGTERM or SIGINT running jobs finish (up to 5 s)
// and the rest go back to the queue for another worker.
import { flushCompileCache } from 'node:module';
import { setPriority } from 'node:os';
import pino from 'pino';
import { loadConfigOrExit } from './config.ts';
import { openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { startWorkers } from './platform/jobs/workers.ts';
import { OutboundClient } from './platform/outbound.ts';
import { closeSmtpPools, useSmtpPolicy } from './platform/providers/email/smtp.ts';
import { useProviderConfig } from './platform/providers/registry.ts';
import { useTwilio } from './platform/providers/twilio-account.ts';
import { useCallSilence } from './resources/voice/call-updates.ts';
import { secretOf } from './platform/secret.ts';
import { usePublicUrl } from './platform/public/public-url.ts';
import { surviveStrayErrors } from './platform/stray-errors.ts';
import { consumeEvents } from './platform/write.ts';
import { EVENT_CONSUMERS } from './resources/event-consumers.ts';
import { JOB_KINDS, SCHEDULES } from './resources/job-kinds.ts';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  usePublicUrl(config.publicUrl);
  useProviderConfig(config);
  useCallSilence(config.callSilenceSeconds);
  const log = pino({ level: config.logLevel });
  // Background work yields the CPU to API processes of the same machine; it takes what they leave.
  try {
    setPriority(config.workerNice);
  } catch (error) {
    log.warn({ err: { message: (error as Error).message } }, 'could not lower the worker\'s CPU priority');
  }
  const database = openDatabase(config.databaseUrl, { poolSize: config.databasePoolSize, slowReads: config.databaseSlowReads, readers: config.sqliteReaders });
  await migrateToLatest(database);
  const outbound = new OutboundClient({ allowPrivate: config.outboundAllowPrivate, allowLinkLocal: config.outboundAllowLinkLocalUnsafe });
  // Mail servers of connections are reached under the same rules as webhook receivers.
  useSmtpPolicy({ allowPrivate: config.outboundAllowPrivate, allowLinkLocal: config.outboundAllowLinkLocalUnsafe });
  useTwilio(outbound, await secretOf(database.db, config.secretKey));
  // The groups' background work and event consumers, told to the platform here as in app.ts.
  consumeEvents(EVENT_CONSUMERS);
  const workers = startWorkers({ database, config, log, outbound, work: { kinds: JOB_KINDS, schedules: SCHEDULES } });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000).unref();
    workers.stop().then(() => outbound.close()).then(closeSmtpPools).then(() => database.close()).then(() => {
      clearTimeout(force);
      process.exit(0);
    }, () => process.exit(1));
  };
  // Before the line that says the worker runs: a signal before its handler would end the process
  // at once, with its first jobs half done.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // From here no job can end the process: what escapes one is logged.
  surviveStrayErrors(log);
  log.info({ concurrency: config.workerConcurrency }, 'worker started');
  flushCompileCache(); // see server.ts
}

main().catch((error: unknown) => {
  console.error('Failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
