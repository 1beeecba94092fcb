// The shell examples of README.md and docs/api.md, run as a reader runs them: every block that calls
// the API or the CLI, verbatim and in order, in one bash (variables carry from block to block as in
// one terminal), against a started service process on a fresh store (a SQLite file, or a new
// PostgreSQL database) with the CLI on the same store. Two things are changed, and only these: the
// base URL (the service listens on a free port, not 8080), and the CSV address the reader is asked to
// set, which points at a local file server here. Every request must be answered 2xx, and no token the
// examples printed may reach the service's logs. Besides, every curl example of README.md and
// docs/*.md must name a route the service has, with its method.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { callsTheService, commands, curlCalls, curlRequests, exampleScript, shellBlocks, type ShellBlock } from '../helpers/doc-examples.ts';
import { isPostgres, redisUrl, testApp } from '../helpers/app.ts';
import { expectNoSecretsInLogs, rememberToken } from '../security/support/secrets.ts';
import { ROOT, startServer, stopAllServers } from '../security/support/server-process.ts';
import { freshStore, type FreshStore } from '../security/support/stores.ts';

const BASE = 'http://localhost:8080';
/** The address docs/api.md asks the reader to set to a CSV of theirs. */
const READER_CSV_URL = 'https://example.com/companies.csv';
const RUN = ['README.md', 'docs/api.md'];
const ALL = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

const blocksOf = (file: string) => shellBlocks(readFileSync(join(ROOT, file), 'utf8'), file);

const stores: FreshStore[] = [];
let csvServer: Server | undefined;
const work = mkdtempSync(join(tmpdir(), 'rds-examples-'));
afterAll(async () => {
  await stopAllServers();
  for (const store of stores) await store.drop();
  await new Promise((resolve) => (csvServer ? csvServer.close(resolve) : resolve(undefined)));
  rmSync(work, { recursive: true, force: true });
});

/** A file server answering the CSV the reader would publish. */
async function serveCsv(): Promise<string> {
  csvServer = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/csv' }).end('Name,Domain\nAnalytical Engines,analytical-engines.example\nDifference Engines,difference-engines.example\n');
  });
  await new Promise<void>((resolve) => csvServer!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(csvServer.address() as AddressInfo).port}/companies.csv`;
}

function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 240_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface Answer {
  status: string;
  method: string;
  url: string;
}

/** The answers each block's curl calls reported, by block (`file:line`). */
function answersByBlock(stderr: string): Map<string, Answer[]> {
  const answers = new Map<string, Answer[]>();
  let block = '';
  for (const line of stderr.split('\n')) {
    const announced = /^@@block (\S+)$/.exec(line);
    if (announced) answers.set((block = announced[1]), []);
    const answered = /^@@curl (\d{3}) (\S+) (\S+)$/.exec(line);
    if (answered) answers.get(block)!.push({ status: answered[1], method: answered[2], url: answered[3] });
  }
  return answers;
}

const where = (block: ShellBlock) => `${block.file}:${block.line}`;

describe('the shell examples of the README and docs/api.md', () => {
  it('run as they are against a started service, each request answered 2xx', { timeout: 300_000 }, async () => {
    const blocks = RUN.flatMap(blocksOf).filter(callsTheService);
    expect(blocks.map((b) => b.file)).toContain('README.md');
    expect(blocks.map((b) => b.file)).toContain('docs/api.md');

    const store = await freshStore('examples');
    stores.push(store);
    const csvUrl = await serveCsv();
    // Loopback must be reachable for the CSV of this machine's file server.
    const server = await startServer({ DATABASE_URL: store.url, OUTBOUND_ALLOW_PRIVATE: 'true', ...(isPostgres() ? { REDIS_URL: redisUrl() } : {}) });
    // The reader runs the CLI in the project's directory; here the examples' files go to a directory of their own.
    const script = exampleScript(blocks, [[BASE, server.base], [READER_CSV_URL, csvUrl]], [`npm() { (cd '${ROOT}' && command npm "$@"); }`]);
    const run = await bash(script, { ...process.env, DATABASE_URL: store.url });
    // The tokens the examples printed (of the organizations and keys they made) must not reach the service's logs.
    for (const [token] of run.stdout.matchAll(/svc_(?:live|test)_[\w-]+/g)) rememberToken(token);
    const answers = answersByBlock(run.stderr);
    const problems = run.stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('@@'));
    const last = [...answers].at(-1);
    expect(run.code, `the examples stopped (exit ${run.code}) in ${last?.[0]} after ${JSON.stringify(last?.[1].slice(-3))}: ${problems.join('\n')}`).toBe(0);

    const refused: string[] = [];
    for (const block of blocks) {
      const answered = answers.get(where(block)) ?? [];
      // Every curl of the block ran (a loop may run one more often).
      const written = commands(block.code).reduce((n, c) => n + curlCalls(c.text), 0);
      expect(answered.length, `curl calls of ${where(block)}`).toBeGreaterThanOrEqual(written);
      for (const a of answered) if (!a.status.startsWith('2')) refused.push(`${where(block)}: ${a.status} ${a.method} ${a.url}`);
    }
    expect(refused).toEqual([]);

    await server.stop();
    expectNoSecretsInLogs(server.output);
  });
});

describe('the curl examples of README.md and docs/*.md', () => {
  let app: FastifyInstance;
  afterAll(async () => {
    await app?.close();
  });

  it('name a route the service has, with its method, at the README\'s base URL', async () => {
    app = await testApp();
    const requests = ALL.flatMap(blocksOf).flatMap((block) => commands(block.code).flatMap((c) => curlRequests(c.text).map((r) => ({ ...r, at: `${where(block)}+${c.line}` }))));
    expect(requests.length).toBeGreaterThan(30);
    const wrong: string[] = [];
    for (const { method, url, at } of requests) {
      if (!url.startsWith(`${BASE}/`)) {
        wrong.push(`${at}: ${url} is not at ${BASE}`);
        continue;
      }
      // Variables stand for ids: any segment will do to find the route, whose answer without a key is never the unknown route's.
      const path = url.slice(BASE.length).replace(/\$\{?\w+\}?/g, 'x1').split('?')[0];
      const answer = await app.inject({ method: method as 'GET', url: path });
      if (answer.statusCode === 404 && answer.json().detail === 'Not Found') wrong.push(`${at}: no route ${method} ${path}`);
    }
    expect(wrong).toEqual([]);
  });
});
