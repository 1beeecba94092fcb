// Builds the Fastify application (without listening): platform hooks, the resource groups of the
// registry, the OpenAPI document and the reference. Tests build it exactly as the server does.
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { authDepsOf, authenticate, KeyCache } from './platform/auth.ts';
import { systemClock, useClock, type Clock } from './platform/clock.ts';
import { useProviderConfig } from './platform/providers/registry.ts';
import { useTwilio } from './platform/providers/twilio-account.ts';
import { useCallSilence } from './resources/voice/call-updates.ts';
import { usePublicUrl } from './platform/public/public-url.ts';
import { chargeEarly, isApiPath, refusalOf, routerErrorHandler } from './platform/early-answers.ts';
import { installErrorHandler } from './platform/error-handler.ts';
import { EventHub } from './platform/event-hub.ts';
import { claim, settle } from './platform/idempotency.ts';
import { ClaimLeases } from './platform/idempotency-lease.ts';
import { startWorkers } from './platform/jobs/workers.ts';
import { ListCache } from './platform/list-cache.ts';
import { installJsonBodies } from './platform/json-body.ts';
import { BatchedStdout, lazyRequestLogger } from './platform/log-stream.ts';
import { openApiOptions } from './platform/openapi.ts';
import { OutboundClient } from './platform/outbound.ts';
import { closeSmtpPools, useSmtpPolicy } from './platform/providers/email/smtp.ts';
import { MemoryRateLimiter } from './platform/rate-limit/memory-rate-limiter.ts';
import { RedisRateLimiter } from './platform/rate-limit/redis-rate-limiter.ts';
import type { RateLimiter, RateLimits } from './platform/rate-limit/rate-limiter.ts';
import { loadSecret } from './platform/secret.ts';
import './platform/services.ts';
import { sharedSerializers } from './platform/serializers.ts';
import { validatorCompiler } from './platform/validation.ts';
import { consumeEvents, WriteQueue } from './platform/write.ts';
import { installRouteRules } from './platform/route-rules.ts';
import { recordRoutes } from './platform/route-table.ts';
import { LinkCache } from './platform/targeting.ts';
import { dropQuietConnectionsOnClose, noteAnswered, refuseConnect, routeFailedExpectations, serverOptions } from './platform/transport.ts';
import { EVENT_CONSUMERS } from './resources/event-consumers.ts';
import { JOB_KINDS, SCHEDULES } from './resources/job-kinds.ts';
import { registerResources, tags } from './resources/registry.ts';
import { healthRoutes } from './platform/health.ts';
import { dashboardRoutes } from './dashboard/dashboard.routes.ts';
import { referenceRoutes } from './platform/reference.ts';

export interface AppOptions {
  config: Config;
  /** An open store to use; when absent the app opens (and closes) the one DATABASE_URL names. */
  database?: Database;
  /** Fastify logger settings or instance; defaults to JSON lines on stdout at LOG_LEVEL. */
  logger?: FastifyServerOptions['loggerInstance'];
  /** The service's time; the system's unless given (tests give a `MovableClock`, see clock.ts). */
  clock?: Clock;
}

const REQUEST_ID = /^[\w.:-]{1,64}$/;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const LOG_BATCH_CHARS = 12 * 1024;
const LOG_FLUSH_MS = 1000;

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  useClock(clock);
  usePublicUrl(config.publicUrl);
  useProviderConfig(config);
  useCallSilence(config.callSilenceSeconds);
  const ownDatabase = !options.database;
  const database = options.database ?? openDatabase(config.databaseUrl, { poolSize: config.databasePoolSize, slowReads: config.databaseSlowReads, readers: config.sqliteReaders });
  await migrateToLatest(database);

  const logStream = options.logger ? undefined : new BatchedStdout(LOG_BATCH_CHARS, LOG_FLUSH_MS);
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: { level: config.logLevel, stream: logStream } }),
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: 1024 * 1024,
    // One line per request, written by the onResponse hook below, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ...serverOptions(config),
    frameworkErrors: routerErrorHandler,
    forceCloseConnections: 'idle',
    // Requests that reach a closing server on a kept-alive connection are still answered (with
    // `Connection: close`, see onSend) rather than refused with a body outside the error shape.
    return503OnClosing: false,
    ajv: { customOptions: {} },
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  routeFailedExpectations(app);
  refuseConnect(app);
  recordRoutes(app);
  installRouteRules(app);
  // Bodies are JSON only: text/plain (parsed by default) gets 415 like any other media type.
  app.removeContentTypeParser('text/plain');
  installJsonBodies(app);

  const closing = new AbortController();
  const openLimiter = async (limits: RateLimits): Promise<RateLimiter> => {
    const opened: RateLimiter = config.redisUrl
      ? new RedisRateLimiter(config.redisUrl, limits, (error) => app.log.error({ err: { message: error.message } }, 'rate limiter unavailable; allowing requests'))
      : new MemoryRateLimiter(limits);
    await opened.ready?.();
    return opened;
  };
  const limiter = await openLimiter({ perSecond: config.rateLimitPerSecond, perMinute: config.rateLimitPerMinute });
  // Public pages (no key, no organization) are limited per client address, with limits of their own.
  const publicLimiter = await openLimiter({ perSecond: config.publicRateLimitPerSecond, perMinute: config.publicRateLimitPerMinute });
  const hub = new EventHub();
  // What the groups' events cause beyond their own writes (webhook deliveries): the platform is told.
  consumeEvents(EVENT_CONSUMERS);
  const writes = new WriteQueue(database);
  const leases = new ClaimLeases(database, (error) => app.log.warn({ err: { message: error.message } }, 'idempotency lease renewal failed'));
  const outbound = new OutboundClient({ allowPrivate: config.outboundAllowPrivate, allowLinkLocal: config.outboundAllowLinkLocalUnsafe });
  // Mail servers of connections are reached under the same rules as webhook receivers.
  useSmtpPolicy({ allowPrivate: config.outboundAllowPrivate, allowLinkLocal: config.outboundAllowLinkLocalUnsafe });
  // Background jobs and schedules (the idempotency purge among them) run here unless WORKERS=off.
  const workers = config.workers === 'inline' ? startWorkers({ database, config, log: app.log, outbound, work: { kinds: JOB_KINDS, schedules: SCHEDULES } }) : undefined;
  // A committed write may have enqueued jobs: on SQLite wake the workers of this process at once
  // (on PostgreSQL every process is woken by NOTIFY when a job is committed).
  const wakeWorkers = workers && database.dialect === 'sqlite' ? workers.runner.wake : undefined;
  app.decorate('services', {
    config,
    database,
    clock,
    writes,
    limiter,
    publicLimiter,
    keys: new KeyCache(),
    links: new LinkCache(),
    leases,
    lists: new ListCache(),
    hub,
    notify: wakeWorkers ? (scope) => {
      hub.notify(scope);
      wakeWorkers();
    } : hub.notify,
    outbound,
    workers,
    secret: await loadSecret(database.db, config.secretKey),
    closing: closing.signal,
  });
  // Texts through a Twilio connection: the same outbound rules, and the secret that signs their callback URLs.
  useTwilio(outbound, app.services.secret);
  app.decorateRequest('scope', undefined as never);
  app.decorateRequest('apiKey', undefined as never);
  app.decorateRequest('idempotency', undefined);

  installErrorHandler(app);
  const authDeps = authDepsOf(app.services);

  // These hooks run on every request: they take callbacks and finish synchronously on their common
  // paths (a cached key, a read), so no promise is made for them.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    const refusal = refusalOf(request);
    if (refusal || request.is404) return chargeEarly(authDeps, request, reply, refusal, done);
    if (request.routeOptions.config.public || !isApiPath(request.routeOptions.url)) return done();
    let pending;
    try {
      pending = authenticate(authDeps, request, reply);
    } catch (error) {
      return done(error as Error);
    }
    if (pending) pending.then(() => done(), done);
    else done();
  });
  app.addHook('preHandler', (request, reply, done) => {
    if (!request.scope || !WRITE_METHODS.has(request.method)) return done();
    claim(database.db, request, reply).then((proceed) => {
      if (proceed) done();
    }, done);
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    // While shutting down, a response in flight closes its connection, so the server can stop.
    if (closing.signal.aborted) reply.header('connection', 'close');
    noteAnswered(request.raw);
    if (!request.idempotency || request.idempotency.stored) return done(null, payload);
    settle(database.db, request, reply.statusCode, payload).then(() => done(null, payload), done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (request.idempotency) leases.release(request.idempotency);
    // Through the service's logger, naming the request: a request's own logger is made only when needed.
    app.log.info({ reqId: request.id, method: request.method, route: request.routeOptions.url ?? 'unknown', status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, org: request.scope?.orgId }, 'request');
    done();
  });

  await app.register(swagger, openApiOptions(tags));
  await app.register(healthRoutes);
  await app.register(dashboardRoutes);
  await registerResources(app);
  await app.register(referenceRoutes);

  app.addHook('preClose', async () => {
    closing.abort();
  });
  dropQuietConnectionsOnClose(app);
  app.addHook('onClose', async () => {
    leases.close();
    logStream?.close();
    await limiter.close();
    await publicLimiter.close();
    await writes.drained();
    await workers?.stop();
    await outbound.close();
    closeSmtpPools();
    if (ownDatabase) await database.close();
  });
  return app;
}
