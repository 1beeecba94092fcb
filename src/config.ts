// Typed, frozen configuration read once from the environment. Invalid values stop the process at
// start with a message naming the variable, rather than failing later in a request.

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  databasePoolSize: number;
  redisUrl: string | undefined;
  secretKey: string | undefined;
  rateLimitPerSecond: number;
  rateLimitPerMinute: number;
  defaultCredits: number;
  logLevel: string;
  sseHeartbeatMs: number;
  /** Longest a client may take to send a whole request (line, headers and body). */
  requestTimeoutMs: number;
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
  return Object.freeze({
    port: int(env, 'PORT', 8080),
    host: env.HOST || '0.0.0.0',
    databaseUrl,
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1),
    redisUrl,
    secretKey,
    rateLimitPerSecond: int(env, 'RATE_LIMIT_PER_SECOND', 50, 1),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 1000, 1),
    defaultCredits: int(env, 'DEFAULT_CREDITS', 1000),
    logLevel,
    sseHeartbeatMs: int(env, 'SSE_HEARTBEAT_MS', 15000, 10),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 30_000, 100),
  });
}
