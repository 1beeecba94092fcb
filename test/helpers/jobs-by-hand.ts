// For a block of tests that run background jobs themselves: an app without workers for the block,
// and the file's own app's workers stopped meanwhile (on PostgreSQL they share the queue, and would
// take the jobs first); after the block the file's app is built again, with its workers.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { testApp } from './app.ts';

export interface JobsByHand {
  env?: Record<string, string>;
  /** The file's own app, and where to put the one built again after the block. */
  file: () => FastifyInstance;
  rebuilt: (app: FastifyInstance) => void;
  /** Where to put the block's app without workers. */
  quiet: (app: FastifyInstance) => void;
}

export function jobsByHand({ env = {}, file, rebuilt, quiet }: JobsByHand): void {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await testApp({ env: { WORKERS: 'off', ...env } });
    quiet(app);
    await file().services.workers?.stop();
  });
  afterAll(async () => {
    await app.close();
    await file().close();
    rebuilt(await testApp());
  });
}
