// Starts the service: configuration, store, migrations, listen; on SIGTERM or SIGINT it stops
// taking connections, lets in-flight requests finish, ends live streams and closes the store.
import { flushCompileCache } from 'node:module';
import { buildApp } from './app.ts';
import { loadConfigOrExit } from './config.ts';
import { surviveStrayErrors } from './platform/stray-errors.ts';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const app = await buildApp({ config });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000).unref();
    app.close().then(() => {
      clearTimeout(force);
      process.exit(0);
    }, () => process.exit(1));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
  // From here no request or job can end the process: what escapes them is logged.
  surviveStrayErrors(app.log);
  // Every module is loaded now: the next start finds them in the compile cache even if this process
  // is killed rather than stopped (see compile-cache.js).
  flushCompileCache();
}

main().catch((error: unknown) => {
  console.error('Failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
