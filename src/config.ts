// Typed, frozen configuration read once from the environment. Invalid values stop the process at
// start with a message naming the variable, rather than failing later in a request.
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  databasePoolSize: number;
  /** PostgreSQL connections that slow reads may hold at once (the rest stay free for writes and quick reads). */
  databaseSlowReads: number;
  /** SQLite reader threads per process (0: reads run on the event loop). */
  sqliteReaders: number;
  redisUrl: string | undefined;
  secretKey: string | undefined;
  rateLimitPerSecond: number;
  rateLimitPerMinute: number;
  /** Limits per client address of the public pages and endpoints (no API key: public quote links). */
  publicRateLimitPerSecond: number;
  publicRateLimitPerMinute: number;
  /** The address people reach the service at: the base of the links it puts in messages (unsubscribe links). */
  publicUrl: string;
  defaultCredits: number;
  logLevel: string;
  sseHeartbeatMs: number;
  /** `inline`: this process also runs background jobs; `off`: API only (see src/worker.ts). */
  workers: 'inline' | 'off';
  workerConcurrency: number;
  /** Jobs of one concurrency key (a webhook endpoint) a process runs at once: one slow endpoint cannot take every slot. */
  workerConcurrencyPerKey: number;
  /** Jobs of one organization a process runs at once: one tenant's backlog cannot take every slot. */
  workerConcurrencyPerOrg: number;
  /** CPU priority a worker-only process lowers itself to (0–19), so that API processes on the same machine come first. */
  workerNice: number;
  jobLeaseSeconds: number;
  jobRetentionHours: number;
  /** Let outbound calls (webhooks, URL imports) reach loopback, private and reserved addresses. */
  outboundAllowPrivate: boolean;
  /** Let outbound calls reach link-local and cloud metadata addresses (169.254.169.254): unsafe on any cloud machine. */
  outboundAllowLinkLocalUnsafe: boolean;
  webhookTimeoutMs: number;
  /** Seconds to wait before each retry of a failed delivery; its length is the number of retries. */
  webhookRetrySchedule: readonly number[];
  webhookDisableAfterSeconds: number;
  webhookDeliveryRetentionDays: number;
  /** Longest a client may take to send a whole request (line, headers and body). */
  requestTimeoutMs: number;
  /** Largest raw message an inbound URL takes (bytes); larger is 413. */
  inboundMaxBytes: number;
  /** Seconds between two polls of a connection's IMAP mailbox. */
  imapPollSeconds: number;
  /** Longest an IMAP server may take to connect, greet, or answer one command. */
  imapTimeoutMs: number;
  /** Largest CSV an import takes (an upload or a URL's answer), bytes. */
  importMaxBytes: number;
  /** Longest an import's URL may take to answer its whole file. */
  importUrlTimeoutMs: number;
  /** Rows of an import written per transaction (and per `import.progress` event). */
  importBatchRows: number;
  /** DNS servers (`ip` or `ip:port`) that check sending domains' records; empty: the system's resolvers. */
  dnsServers: readonly string[];
  /** Longest the DNS check of a sending domain waits for an answer. */
  dnsTimeoutMs: number;
  /** The `include:` a sending domain's SPF record must carry (the sending servers' own SPF record). */
  spfInclude: string;
  /** The operator's default SMTP server for live e-mail (`smtp://user:pass@host:587`, `smtps://…:465`), for organizations with no connection of their own. */
  emailSmtpUrl: string | undefined;
  /** The operator's default SMS provider for live texts, for organizations with no connection of their own: `local` (recorded, nothing sent), the only one there is. */
  smsProvider: 'local' | undefined;
  /** Seconds a ringing call may go unheard of before its provider is asked what became of it (an answered one: 30 times as long). */
  callSilenceSeconds: number;
  /** The operator's default telephony provider for live calls, for organizations with no connection of their own: `local` (simulated, nobody is called). */
  telephonyProvider: 'local' | undefined;
  /** Where a sending domain's `bounces.` name points (CNAME): the host that receives its bounces. */
  returnPathTarget: string;
}

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min) throw new ConfigError(`${name} must be at least ${min}`);
  return value;
}

function bool(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** An absolute http(s) URL without query or fragment, kept without its trailing slash. */
function baseUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`${name} must be an http:// or https:// URL without query or fragment, got "${raw}"`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/** 30 s, 2 min, 10 min, 1 h, 6 h, then every 12 h: the last retry is about 3 days after the event. */
const WEBHOOK_RETRIES = '30,120,600,3600,21600,43200,43200,43200,43200,43200';

function seconds(env: NodeJS.ProcessEnv, name: string, fallback: string): number[] {
  const raw = env[name] || fallback;
  if (!/^\d+(,\d+)*$/.test(raw)) throw new ConfigError(`${name} must be a comma-separated list of whole seconds, got "${raw}"`);
  return raw.split(',').map(Number);
}

/** `ip` or `ip:port` (`[ipv6]:port`) entries, comma-separated: node:dns takes only addresses. */
function dnsServers(env: NodeJS.ProcessEnv): string[] {
  const raw = env.DNS_SERVERS?.trim();
  if (!raw) return [];
  return raw.split(',').map((entry) => {
    const server = entry.trim();
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(server) ?? /^([^:]+)(?::(\d+))?$/.exec(server) ?? [server, server, undefined];
    const port = m[2] === undefined ? 53 : Number(m[2]);
    if (isIP(m[1]) === 0 || !(port >= 1 && port <= 65_535)) throw new ConfigError(`DNS_SERVERS must be a comma-separated list of ip or ip:port ([ipv6]:port) entries, got "${server}"`);
    return server;
  });
}

/** An `smtp://` or `smtps://` URL with a host, or undefined. */
function smtpUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  // The value itself may hold a password: the message names the variable only.
  if (!url || !/^smtps?:$/.test(url.protocol) || !url.hostname) throw new ConfigError(`${name} must be an smtp:// or smtps:// URL with a host`);
  return raw;
}

/** One of `values`, or undefined when unset. */
function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[]): T | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (!(values as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be ${values.join(' or ')}, or unset; got "${raw}"`);
  return raw as T;
}

/** A host name a DNS record can point at. */
function hostName(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const value = (env[name] || fallback).toLowerCase().replace(/\.$/, '');
  if (!/^(?=.{1,253}$)([a-z0-9_]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/.test(value)) throw new ConfigError(`${name} must be a host name, got "${value}"`);
  return value;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || 'sqlite:data/revenue.db';
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
  }
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL must start with redis://');
  const secretKey = env.SECRET_KEY || undefined;
  if (secretKey !== undefined && secretKey.length < 32) throw new ConfigError('SECRET_KEY must be at least 32 characters');
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const workerNice = int(env, 'WORKER_NICE', 15, 0);
  if (workerNice > 19) throw new ConfigError('WORKER_NICE must be between 0 and 19');
  const workers = env.WORKERS || 'inline';
  const workerConcurrency = int(env, 'WORKER_CONCURRENCY', 16, 1);
  const workerConcurrencyPerKey = int(env, 'WORKER_CONCURRENCY_PER_KEY', Math.max(1, Math.floor(workerConcurrency / 4)), 1);
  if (workerConcurrencyPerKey > workerConcurrency) throw new ConfigError('WORKER_CONCURRENCY_PER_KEY must not exceed WORKER_CONCURRENCY');
  const workerConcurrencyPerOrg = int(env, 'WORKER_CONCURRENCY_PER_ORG', Math.max(1, Math.floor(workerConcurrency / 2)), 1);
  if (workerConcurrencyPerOrg > workerConcurrency) throw new ConfigError('WORKER_CONCURRENCY_PER_ORG must not exceed WORKER_CONCURRENCY');
  if (workers !== 'inline' && workers !== 'off') throw new ConfigError('WORKERS must be inline or off');
  const databasePoolSize = int(env, 'DATABASE_POOL_SIZE', 10, 1);
  return Object.freeze({
    port: int(env, 'PORT', 8080),
    host: env.HOST || '0.0.0.0',
    databaseUrl,
    databasePoolSize,
    databaseSlowReads: int(env, 'DATABASE_SLOW_READS', Math.ceil(databasePoolSize / 4), 1),
    sqliteReaders: int(env, 'SQLITE_READERS', Math.max(1, availableParallelism() - 1), 0),
    redisUrl,
    secretKey,
    rateLimitPerSecond: int(env, 'RATE_LIMIT_PER_SECOND', 50, 1),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 1000, 1),
    publicRateLimitPerSecond: int(env, 'PUBLIC_RATE_LIMIT_PER_SECOND', 5, 1),
    publicRateLimitPerMinute: int(env, 'PUBLIC_RATE_LIMIT_PER_MINUTE', 60, 1),
    publicUrl: baseUrl(env, 'PUBLIC_URL', `http://localhost:${int(env, 'PORT', 8080)}`),
    defaultCredits: int(env, 'DEFAULT_CREDITS', 1000),
    logLevel,
    sseHeartbeatMs: int(env, 'SSE_HEARTBEAT_MS', 15000, 10),
    workers,
    workerConcurrency,
    workerConcurrencyPerKey,
    workerConcurrencyPerOrg,
    workerNice,
    jobLeaseSeconds: int(env, 'JOB_LEASE_SECONDS', 30, 2),
    jobRetentionHours: int(env, 'JOB_RETENTION_HOURS', 72, 1),
    outboundAllowPrivate: bool(env, 'OUTBOUND_ALLOW_PRIVATE'),
    outboundAllowLinkLocalUnsafe: bool(env, 'OUTBOUND_ALLOW_LINK_LOCAL_UNSAFE'),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100),
    webhookRetrySchedule: Object.freeze(seconds(env, 'WEBHOOK_RETRY_SCHEDULE', WEBHOOK_RETRIES)),
    webhookDisableAfterSeconds: int(env, 'WEBHOOK_DISABLE_AFTER_SECONDS', 3 * 24 * 3600, 1),
    webhookDeliveryRetentionDays: int(env, 'WEBHOOK_DELIVERY_RETENTION_DAYS', 30, 1),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 30_000, 100),
    inboundMaxBytes: int(env, 'INBOUND_MAX_BYTES', 25 * 1024 * 1024, 1024),
    imapPollSeconds: int(env, 'IMAP_POLL_SECONDS', 60, 1),
    imapTimeoutMs: int(env, 'IMAP_TIMEOUT_MS', 30_000, 100),
    importMaxBytes: int(env, 'IMPORT_MAX_BYTES', 100 * 1024 * 1024, 1024),
    importUrlTimeoutMs: int(env, 'IMPORT_URL_TIMEOUT_MS', 120_000, 100),
    importBatchRows: int(env, 'IMPORT_BATCH_ROWS', 500, 1),
    dnsServers: Object.freeze(dnsServers(env)),
    dnsTimeoutMs: int(env, 'DNS_TIMEOUT_MS', 5_000, 100),
    spfInclude: hostName(env, 'SPF_INCLUDE', '_spf.mail.revenue-data.example'),
    emailSmtpUrl: smtpUrl(env, 'EMAIL_SMTP_URL'),
    smsProvider: oneOf(env, 'SMS_PROVIDER', ['local'] as const),
    telephonyProvider: oneOf(env, 'TELEPHONY_PROVIDER', ['local'] as const),
    callSilenceSeconds: int(env, 'CALL_SILENCE_SECONDS', 120, 1),
    returnPathTarget: hostName(env, 'RETURN_PATH_TARGET', 'bounces.mail.revenue-data.example'),
  });
}

/** The configuration of a process that is starting: on a configuration error, says so and exits 2. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Configuration error: ${error.message}`);
    process.exit(2);
  }
}
