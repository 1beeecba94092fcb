// Where the service's log lines go, and what a request's logger costs. A line per request is
// written on every request, so both are on the path of every answer.
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';

/**
 * Log lines to stdout, written asynchronously in batches of about `batchChars` characters (at
 * least every `flushMs`), so the line of a request costs no system call of its own. Lines are
 * gathered here and handed to pino's destination (sonic-boom) a batch at a time: sonic-boom
 * measures the byte length of its pending text on every write, which for a batch gathered line by
 * line flattens and scans the whole batch once per line (3–4 µs a line at 12 KiB batches).
 */
export class BatchedStdout {
  readonly #destination = pino.destination({ dest: 1, sync: false });
  readonly #batchChars: number;
  readonly #timer: NodeJS.Timeout;
  #lines: string[] = [];
  #chars = 0;

  constructor(batchChars: number, flushMs: number) {
    this.#batchChars = batchChars;
    this.#timer = setInterval(() => this.flush(), flushMs).unref();
    // pino's destination writes what it holds at exit; what is gathered here must reach it first.
    process.once('exit', () => {
      this.flush();
      this.#destination.flushSync();
    });
  }

  write(line: string): void {
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= this.#batchChars) this.flush();
  }

  /** Hands the gathered lines to the destination, which writes them at once unless it is writing. */
  flush(): void {
    if (this.#chars === 0) return;
    this.#destination.write(this.#lines.join(''));
    this.#lines = [];
    this.#chars = 0;
  }

  close(): void {
    clearInterval(this.#timer);
    this.flush();
  }
}

type Logged = (...args: unknown[]) => void;

/**
 * A request's logger, made when the request first logs through it. Fastify makes a child logger
 * per request to bind its id, and pino serializes the bindings when it makes one (about 1.5 µs);
 * most requests log only their access line, which names its request itself (app.ts).
 */
class LazyRequestLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: pino.Bindings;
  readonly #options: pino.ChildLoggerOptions;
  #made: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: pino.Bindings, options: pino.ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get #logger(): FastifyBaseLogger {
    return (this.#made ??= this.#parent.child(this.#bindings, this.#options));
  }

  #log(level: pino.Level | 'silent', args: unknown[]): void {
    (this.#logger[level] as Logged)(...args);
  }

  get level(): pino.LevelWithSilentOrString {
    return (this.#made ?? this.#parent).level;
  }

  set level(level: pino.LevelWithSilentOrString) {
    this.#logger.level = level;
  }

  fatal(...args: unknown[]) { this.#log('fatal', args); }
  error(...args: unknown[]) { this.#log('error', args); }
  warn(...args: unknown[]) { this.#log('warn', args); }
  info(...args: unknown[]) { this.#log('info', args); }
  debug(...args: unknown[]) { this.#log('debug', args); }
  trace(...args: unknown[]) { this.#log('trace', args); }
  silent(...args: unknown[]) { this.#log('silent', args); }

  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a request's logger. */
export const lazyRequestLogger = (logger: FastifyBaseLogger, bindings: pino.Bindings, options: pino.ChildLoggerOptions): FastifyBaseLogger =>
  new LazyRequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
