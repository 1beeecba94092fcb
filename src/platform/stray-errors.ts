// The last line of defence of a running process: an error that escapes every handler (an `error`
// event nobody listens to, a rejected promise nobody awaits) is logged and the process carries on.
// Node would otherwise exit, and with it every other request and job; an error inside a request's
// handler never gets here (Fastify answers that request 500). Installed once the process has started:
// an error while starting still stops it.
import type { Logger } from 'pino';

/** What is logged of a stray error: its kind, message and where it was thrown; not its other properties, which may hold a statement's values. */
function described(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error };
  const { code } = error as { code?: unknown };
  return { name: error.name, message: error.message.slice(0, 500), ...(typeof code === 'string' ? { code } : {}), stack: error.stack?.split('\n').slice(1, 8).join('\n') };
}

export function surviveStrayErrors(log: Pick<Logger, 'error'>): void {
  process.on('uncaughtException', (error, origin) => {
    log.error({ err: described(error), origin }, 'an error escaped its request or job; the process carries on');
  });
  process.on('unhandledRejection', (reason) => {
    log.error({ err: described(reason), origin: 'unhandledRejection' }, 'an error escaped its request or job; the process carries on');
  });
}
