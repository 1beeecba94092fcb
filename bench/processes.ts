// Child processes of a run: servers pinned to core 0 and the load generator pinned to core 1 (with
// `taskset`, when it exists and there are two cores), so the two never compete for one core; one
// server of scenario 1x2 gets two cores.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceStats } from './instrumented-server.ts';
import type { LoadSpec, RoundResult } from './load.ts';
import type { WalkResult, WalkSpec } from './walk.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SERVER_CORE = 0;
export const LOAD_CORE = 1;
/**
 * Two cores for a server (scenario 1x2, reads on two cores): the server's and a third when the
 * machine has one, else the load generator's, which the two then share.
 */
export const TWO_SERVER_CORES = availableParallelism() >= 3 ? `${SERVER_CORE},2` : `${SERVER_CORE},${LOAD_CORE}`;

export const canPin = (): boolean => availableParallelism() >= 2 && spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;
const pinned = canPin();

/**
 * The Node options of `npm start` (package.json), given to every server of the run, so the service
 * runs as it does in production and the baselines run under the same settings.
 */
function serverNodeOptions(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  return scripts.start.split(/\s+/).filter((token) => token.startsWith('--'));
}

function command(core: number | string, script: string, args: string[] = [], nodeOptions: string[] = []): [string, string[]] {
  const node = [process.execPath, '--disable-warning=ExperimentalWarning', ...nodeOptions, script, ...args];
  return pinned ? ['taskset', ['-c', String(core), ...node]] : [node[0], node.slice(1)];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface Server {
  url: string;
  /** CPU seconds (user + system) the server process has used so far; null where /proc is missing. */
  cpuSeconds(): number | null;
  /** Event-loop and memory figures (instrumented service only). */
  stats(): Promise<ServiceStats>;
  resetStats(): Promise<void>;
  stop(): Promise<void>;
}

function request<T>(child: ChildProcess, message: { type: string }, answer: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${answer} from the service`)), 10_000);
    const onMessage = (reply: { type: string; stats?: T }) => {
      if (reply.type !== answer) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(reply.stats as T);
    };
    child.on('message', onMessage);
    child.send(message);
  });
}

const TICKS_PER_SECOND = 100;

/** The process's own CPU seconds (all its threads). */
function ownCpuSeconds(pid: number): number | null {
  try {
    // Fields after the command name: state is the 3rd, utime the 14th, stime the 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** The pids of the process's children (a cluster's workers), or none where /proc does not list them. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** CPU seconds of the process and of its live descendants (the workers of scenario 1x2's cluster). */
function cpuSeconds(pid: number): number | null {
  const own = ownCpuSeconds(pid);
  if (own === null) return null;
  return childrenOf(pid).reduce((total, child) => total + (cpuSeconds(child) ?? 0), own);
}

/** Starts `script` (relative to the repository) on the server core (or `cores`) and waits until it answers HTTP. */
export async function startServer(script: string, env: Record<string, string>, logFile?: string, cores: number | string = SERVER_CORE): Promise<Server> {
  const port = await freePort();
  const log = logFile ? openSync(logFile, 'a') : 'ignore';
  const [file, args] = command(cores, script, [], serverNodeOptions());
  const child = spawn(file, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', log, 'pipe', 'ipc'],
  });
  if (typeof log === 'number') closeSync(log);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (gone) throw new Error(`${script} exited before answering: ${stderr}`);
    try {
      await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${script} did not answer within 120 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    cpuSeconds: () => cpuSeconds(child.pid!),
    stats: () => request<ServiceStats>(child, { type: 'stats' }, 'stats'),
    resetStats: async () => {
      await request(child, { type: 'reset' }, 'reset-done');
    },
    stop: async () => {
      if (gone) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface LoadResult {
  warmup: RoundResult | null;
  rounds: RoundResult[];
}

/** Runs a worker script (the load generator or the walk) on the load core; returns its JSON output. */
async function runWorker<T>(script: string, spec: object, core: number = LOAD_CORE): Promise<T> {
  const [file, args] = command(core, script, [JSON.stringify(spec)]);
  const child = spawn(file, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${script} failed (${code}): ${err}`);
  return JSON.parse(out) as T;
}

export const runLoad = (spec: LoadSpec) => runWorker<LoadResult>('bench/load.ts', spec);
export const runWalk = (spec: WalkSpec) => runWorker<WalkResult>('bench/walk.ts', spec);
/** Runs a baseline that is its own work, not a server (bench/baselines/nodemailer-send.ts), on the server core. */
export const runOnServerCore = <T>(script: string, spec: object) => runWorker<T>(script, spec, SERVER_CORE);

/** A worker-only process (`npm run worker`) on the server core; resolves once its runner started. */
export async function startWorkerProcess(env: Record<string, string>): Promise<{ stop(): Promise<void> }> {
  const [file, args] = command(SERVER_CORE, 'src/worker.ts', [], serverNodeOptions());
  const child = spawn(file, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`worker did not start: ${output}`));
    }, 60_000);
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
      if (output.includes('"worker started"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    void exited.then((code) => reject(new Error(`worker exited with ${code}: ${output}`)));
  });
  child.stdout!.resume();
  return {
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
