// Real service processes (`node src/server.ts`) on free ports, for the tests that need separate
// processes: shared budgets, idempotency and revocation across processes, crashes. Their stdout and
// stderr are kept (and searched for secrets); every process a test starts is killed at the end.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { capturedLogs, DELIVERY_ENV, isPostgres } from '../../helpers/app.ts';
import type { Actor } from './actors.ts';
import { figures, reportFigures } from './figures.ts';
import { expectNoSecretsInLogs } from './secrets.ts';
import type { FreshStore } from './stores.ts';
import { checkReply, fromFetch, type CheckOptions, type Reply } from './reply.ts';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface ServerProcess {
  base: string;
  port: number;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** The lines it has written to stdout and stderr so far. */
  output: readonly string[];
  /** Sends `signal` and waits for the process to end. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const running = new Set<ChildProcess>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Keeps the lines a process writes (in `output` and the file's captured logs), each whole: log lines
 * are written in batches, so a read may end inside a line, whose start then waits for the rest.
 */
function keepLines(child: ChildProcess, output: string[], onLine: (line: string) => void = () => {}): void {
  const reader = () => {
    let partial = '';
    return (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop()!;
      for (const line of parts) {
        if (!line) continue;
        output.push(line);
        capturedLogs.push(line);
        onLine(line);
      }
    };
  };
  child.stdout!.on('data', reader());
  child.stderr!.on('data', reader());
}

export async function startServer(env: Record<string, string>, options: { port?: number } = {}): Promise<ServerProcess> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, ['src/server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', DATABASE_POOL_SIZE: '4', ...DELIVERY_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const output: string[] = [];
  keepLines(child, output);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    running.delete(child);
    resolve(code);
  }));
  const base = `http://127.0.0.1:${port}`;
  const server: ServerProcess = {
    base, port, child, exited, output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  // Generous: on a busy machine a process may take long to start; a healthy one answers at once.
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${output.join('\n')}`);
    try {
      const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) return server;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await server.stop('SIGKILL');
      throw new Error(`server did not become healthy: ${output.join('\n')}`);
    }
    await sleep(50);
  }
}

export interface WorkerProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** The lines it has written to stdout and stderr so far. */
  output: readonly string[];
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** A worker-only process (`npm run worker`), resolved once it has started its job runner. */
export async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['src/worker.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', DATABASE_POOL_SIZE: '4', ...DELIVERY_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const output: string[] = [];
  let started!: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  keepLines(child, output, (line) => {
    if (line.includes('"worker started"')) started();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    running.delete(child);
    resolve(code);
  }));
  const worker: WorkerProcess = {
    child, exited, output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  const failed = exited.then((code) => {
    throw new Error(`worker exited with ${code}: ${output.join('\n')}`);
  });
  await Promise.race([ready, failed, sleep(120_000).then(() => {
    throw new Error(`worker did not start: ${output.join('\n')}`);
  })]);
  failed.catch(() => {});
  return worker;
}

/**
 * The end of a test file that runs service processes on fresh stores: stops the processes, drops
 * the stores, reports the file's figures and checks that no secret reached any log.
 */
export function afterProcessTests(file: string, stores: FreshStore[]): void {
  afterAll(async () => {
    await stopAllServers();
    for (const store of stores) await store.drop();
    reportFigures(file, isPostgres() ? 'postgres' : 'sqlite');
    expectNoSecretsInLogs(capturedLogs);
  });
}

/** Kills every process started here that is still running. */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...running].map((child) => new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  })));
}

export interface FetchOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs?: number;
  check?: CheckOptions;
}

/** One request to a process over a real socket, counted and checked like every other. */
export async function request(base: string, method: string, path: string, options: FetchOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  figures.requests++;
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
  });
  const reply = await fromFetch(res);
  checkReply(reply, `${method} ${base}${path}`, options.check);
  return reply;
}

/** An actor whose requests go to the process at `base()` (which may change across restarts). */
export function processActor(base: () => string, orgId: string, token: string, mode: 'live' | 'test' = 'live'): Actor {
  return {
    label: `${orgId} ${mode} over a socket`, orgId, mode, token, made: new Map(),
    call: (method, url, options = {}) => request(base(), method, url, { token, body: options.body, headers: options.headers, check: options.check }),
  };
}
