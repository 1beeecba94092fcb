// Job runners a test starts on the app's store, each with the kinds it is given, all stopped by
// `stopAll`; and names of kinds no other runner of the suite knows, so none claims their jobs.
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { newId } from '../../src/platform/ids.ts';
import type { JobKind } from '../../src/platform/jobs/kinds.ts';
import { JobRunner } from '../../src/platform/jobs/runner.ts';
import { OutboundClient } from '../../src/platform/outbound.ts';
import { databaseUrl } from './app.ts';

export const silentLog = pino({ level: 'silent' });

/** A kind with a name of its own, so no other runner of the suite ever claims its jobs. */
export const kindName = (what: string) => `test.${what}.${newId('k').slice(2)}`;

export function jobRunners(app: () => FastifyInstance) {
  const started: JobRunner[] = [];
  return {
    start(kinds: JobKind<never>[], env: Record<string, string> = {}): JobRunner {
      const config = loadConfig({ DATABASE_URL: databaseUrl(), ...env });
      const r = new JobRunner({ database: app().services.database, config, log: silentLog, outbound: new OutboundClient({ allowPrivate: false }), kinds });
      r.start();
      started.push(r);
      return r;
    },
    stopAll: () => Promise.all(started.map((r) => r.stop(100))),
  };
}
