// What routes reach through `request.server.services`, and the request fields the platform sets.
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { AuthedKey, KeyCache } from './auth.ts';
import type { Clock } from './clock.ts';
import type { EventHub } from './event-hub.ts';
import type { ClaimLeases, IdempotencyClaim } from './idempotency-lease.ts';
import type { Workers } from './jobs/workers.ts';
import type { ListCache } from './list-cache.ts';
import type { OutboundClient } from './outbound.ts';
import type { RateLimiter } from './rate-limit/rate-limiter.ts';
import type { Scope } from './scope.ts';
import type { LinkCache } from './targeting.ts';
import type { WriteQueue } from './write.ts';
import type { RouteMessages } from './validation.ts';

export interface Services {
  config: Config;
  database: Database;
  /** The service's time (clock.ts): the system's, or the one a test built the app with and moves. */
  clock: Clock;
  /** Where requests' writes are committed (group commit). */
  writes: WriteQueue;
  limiter: RateLimiter;
  /** The limits of public routes (no API key), per client address. */
  publicLimiter: RateLimiter;
  keys: KeyCache;
  /** Which clients agencies may act for (X-Org-Id), cached like keys. */
  links: LinkCache;
  /** The idempotency claims of requests in flight, renewed while they run. */
  leases: ClaimLeases;
  /** List answers and filtered totals, reused while the tenant's data is unchanged. */
  lists: ListCache;
  hub: EventHub;
  notify: (scope: Scope) => void;
  secret: string;
  /** The HTTP client for user-given URLs (webhooks), with its SSRF guard. */
  outbound: OutboundClient;
  /** The in-process job runner and schedules (WORKERS=inline); undefined in an API-only process. */
  workers: Workers | undefined;
  /** Aborted when the server shuts down: long-lived responses (event streams) end on it. */
  closing: AbortSignal;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
  interface FastifyRequest {
    scope: Scope;
    apiKey: AuthedKey;
    idempotency: IdempotencyClaim | undefined;
  }
  interface FastifyContextConfig {
    /** No credential needed (health, OpenAPI document, reference). */
    public?: boolean;
    /** The spec's messages for missing required fields and invalid enum values. */
    messages?: RouteMessages;
    /**
     * Request bodies the route parses itself (a multipart upload), by media type: documented in the
     * OpenAPI document beside the schema's bodies, never validated by Fastify (which sees no body).
     */
    parsedBodies?: Record<string, { schema: unknown }>;
    /**
     * A test helper (simulating what a provider or a person would do next): a live key is 403 before
     * the route runs, whatever it names, since in live mode that comes from the outside world.
     */
    testOnly?: boolean;
  }
}
