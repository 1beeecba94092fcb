// Builds the real application on the store of this run (SQLite in memory, or the run's PostgreSQL
// database) and makes fresh organizations, so tests never share tenants or truncate tables.
import { Writable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync, InjectOptions, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { MovableClock } from '../../src/platform/clock.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createOrganization, type CreatedOrganization, type OrganizationOptions } from '../../src/orgs/orgs.ts';

export const databaseUrl = (): string => inject('databaseUrl');
export const isPostgres = (): boolean => databaseUrl().startsWith('postgres');
export const redisUrl = (): string => process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Every log line written by apps of this test file, to check that no secret is ever logged. */
export const capturedLogs: string[] = [];

/**
 * How every app and process of the suite delivers webhooks and polls mailboxes. On PostgreSQL they
 * all share one job queue, so any of them may run any test's delivery or poll: all reach local
 * receivers and retry within a second. The IMAP polls of the tests' connections (hosts such as
 * imap.example.com, which never answer here) come hourly rather than every minute and give up in
 * a second rather than 30 (the Dovecot tests set their own), so that they never hold a runner's
 * slots for long: a runner whose clock a test moved ahead finds all of them due. Tests poll with
 * `POST /v1/connections/{id}/poll`. The SSRF tests turn private networks off in an app that runs
 * no workers.
 */
export const DELIVERY_ENV = { OUTBOUND_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1', IMAP_TIMEOUT_MS: '1000', IMAP_POLL_SECONDS: '3600' };

/**
 * The time of every app this test file builds: real time until a test moves it
 * (`clock.advance(seconds)`, `clock.set(unixSeconds)`) instead of waiting. Move it forward only.
 */
export const clock = new MovableClock();

export interface TestAppOptions {
  env?: Record<string, string | undefined>;
  /** Routes of the test's own (a definition made for the test), registered under `/v1`. */
  routes?: FastifyPluginAsync[];
}

export async function testApp(options: TestAppOptions = {}): Promise<FastifyInstance> {
  const config: Config = loadConfig({ DATABASE_URL: databaseUrl(), DATABASE_POOL_SIZE: '4', LOG_LEVEL: 'info', ...DELIVERY_ENV, ...options.env });
  const sink = new Writable({
    write(chunk, _encoding, done) {
      capturedLogs.push(String(chunk));
      done();
    },
  });
  const app = await buildApp({ config, logger: pino({ level: 'info' }, sink), clock });
  for (const routes of options.routes ?? []) await app.register(routes, { prefix: '/v1' });
  await app.ready();
  return app;
}

let orgCounter = 0;

export async function newOrg(app: FastifyInstance, name = `Test org ${++orgCounter}`, options: OrganizationOptions = {}): Promise<CreatedOrganization> {
  return createOrganization(app.services.database, app.services.config, name, options);
}

export interface Client {
  (method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  get: (url: string, headers?: Record<string, string>) => Promise<LightMyRequestResponse>;
  post: (url: string, body?: unknown, headers?: Record<string, string>) => Promise<LightMyRequestResponse>;
  patch: (url: string, body?: unknown, headers?: Record<string, string>) => Promise<LightMyRequestResponse>;
  delete: (url: string, headers?: Record<string, string>) => Promise<LightMyRequestResponse>;
}

/** An HTTP client for `app` that sends `token` as the bearer credential (none when undefined). */
export function client(app: FastifyInstance, token: string | undefined): Client {
  const call = ((method, url, body, headers = {}) =>
    app.inject({
      method,
      url,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      ...(body === undefined ? {} : { payload: body as object }),
    })) as Client;
  call.get = (url, headers) => call('GET', url, undefined, headers);
  call.post = (url, body, headers) => call('POST', url, body ?? {}, headers);
  call.patch = (url, body, headers) => call('PATCH', url, body ?? {}, headers);
  call.delete = (url, headers) => call('DELETE', url, undefined, headers);
  return call;
}

/**
 * A fresh organization with clients for its live and test keys. `sandbox: false` leaves out the
 * sandbox data set of test mode (about 250 ms on PostgreSQL): for tests that do not read it.
 */
export async function tenant(app: FastifyInstance, options: OrganizationOptions = {}) {
  const org = await newOrg(app, undefined, options);
  return { ...org, live: client(app, org.live_token), test: client(app, org.test_token) };
}
