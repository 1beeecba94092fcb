// The app a hostile-input test file sends to, with the checks every such file makes: after every
// test no error has escaped a handler (an `error` event nobody listened to, a rejection nobody
// awaited: each would have ended a real service process) and the same process still answers its
// health check; at the end no secret was logged and the file's figures are written.
import { afterAll, afterEach, expect } from 'vitest';
import { capturedLogs, isPostgres, testApp } from '../../helpers/app.ts';
import { guarded, loadApi, type Api, type ApiRoute } from '../support/api.ts';
import { reportFigures } from '../support/figures.ts';
import { json, type Reply } from '../support/reply.ts';
import { expectNoSecretsInLogs } from '../support/secrets.ts';

// The public routes' budgets too: factories post to them (a thread comes through an inbound URL).
export const UNLIMITED = {
  RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000', PUBLIC_RATE_LIMIT_PER_SECOND: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000000',
  // Calls the walks make to the outside (webhook deliveries, IMAP polls, to names that never resolve
  // or to the addresses examples name) give up at once rather than holding a worker slot that the
  // walks' imports and exports, and other test files' jobs in the same store, wait for. The next poll
  // comes after the walk (test/security/support/factories.ts, pollableConnection).
  WEBHOOK_TIMEOUT_MS: '300', IMAP_TIMEOUT_MS: '300', IMAP_POLL_SECONDS: '86400',
};

export const label = (r: ApiRoute) => `${r.method} ${r.url}`;

/** Builds the app of the calling test file and registers its checks; `name` names its figures. */
export async function hostileApp(name: string) {
  const app = await testApp({ env: UNLIMITED });
  const api = await loadApi(app);
  const escaped: string[] = [];
  process.on('uncaughtException', (error) => escaped.push(`uncaught exception: ${error.stack ?? error.message}`));
  process.on('unhandledRejection', (reason) => escaped.push(`unhandled rejection: ${reason instanceof Error ? reason.stack : String(reason)}`));
  const pid = process.pid;
  afterEach(async () => {
    const health = await app.inject({ method: 'GET', url: '/healthz' });
    expect(escaped, 'errors that escaped their request: each would end the process').toEqual([]);
    expect(health.statusCode, health.body).toBe(200);
    expect(process.pid).toBe(pid);
  });
  afterAll(async () => {
    reportFigures(name, isPostgres() ? 'postgres' : 'sqlite');
    expectNoSecretsInLogs(capturedLogs);
    await app.close();
  }, 180_000);
  return { app, api };
}

/**
 * Where an accepted write of `route` can be read back, if anywhere: a created object by its id, an
 * updated one at its URL, and the object an action answers with (`/v1/campaigns/:id/launch`) at
 * the URL of that object. Other answers (a report such as the entries added) are not read back.
 */
export function readBack(api: Api, route: ApiRoute, url: string, reply: Reply): string | undefined {
  const data = json(reply).data;
  const readable = (target: string) => guarded(api).some((r) => r.method === 'GET' && r.url === target);
  if (route.method === 'PATCH') return readable(route.url) ? url : undefined;
  if (route.method !== 'POST' || typeof data?.id !== 'string') return undefined;
  if (route.params.length === 0) return readable(`${route.url}/:id`) ? `${url}/${data.id}` : undefined;
  const parent = url.slice(0, url.lastIndexOf('/'));
  return parent.endsWith(`/${encodeURIComponent(data.id)}`) && readable(route.url.slice(0, route.url.lastIndexOf('/'))) ? parent : undefined;
}

/** A path that resolves (dot segments) to another documented route of the same method. */
export function isAnotherRoute(api: Api, route: { method: string }, path: string): boolean {
  const resolved = new URL(path, 'http://service.invalid').pathname;
  if (resolved === path) return false;
  const pattern = (url: string) => new RegExp(`^${url.replace(/:\w+/g, '[^/]+')}$`);
  return guarded(api).some((r) => r.method === route.method && pattern(r.url).test(resolved));
}
