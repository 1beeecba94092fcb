// Operations: health, the OpenAPI document (strictly linted), the reference, and graceful shutdown
// of a real server process.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { createOrganization } from '../../src/orgs/orgs.ts';
import { client, databaseUrl, isPostgres, testApp } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp();
});
afterAll(() => app.close());

describe('health', () => {
  it('answers 200 without a credential', async () => {
    const res = await client(app, undefined).get('/healthz');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'ok',
      jobs: { counts: { queued: expect.any(Number), running: expect.any(Number), succeeded: expect.any(Number), failed: expect.any(Number), dead: expect.any(Number) }, oldest_due_age_seconds: expect.any(Number), workers: 'inline', running_here: expect.any(Number) },
    });
    expect(res.headers['x-ratelimit-limit-second']).toBeUndefined();
  });
});

describe('OpenAPI document', () => {
  it('is served without a credential as OpenAPI 3.1 with the bearer scheme', async () => {
    const res = await client(app, undefined).get('/v1/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    for (const path of ['/v1/contacts', '/v1/contacts/{id}', '/v1/lists', '/v1/lists/{id}', '/v1/lists/{id}/entries', '/auth/v1/api-keys', '/auth/v1/api-keys/{id}']) {
      expect(doc.paths[path], path).toBeDefined();
    }
    const create = doc.paths['/v1/contacts'].post;
    expect(create.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ContactCreate' });
    expect(doc.components.schemas.ContactCreate.required).toContain('list_id');
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '404', '422', '429']));
    // Passing the same credential a client would is harmless too.
    expect((await client(app, 'svc_live_whatever').get('/v1/openapi.json')).statusCode).toBe(200);
  });

  it('passes the strict lint with no errors and no warnings', async () => {
    const source = (await client(app, undefined).get('/v1/openapi.json')).body;
    // One exception: the URLs put fixed segments beside ids (`/v1/deals/pipelines/{id}` and
    // `/v1/deals/{id}/contacts`). The router always prefers the fixed segment, and no id is
    // `pipelines` or `summary` (ids carry their prefix), so each URL has exactly one route.
    const config = await createConfig({ extends: ['recommended-strict'], rules: { 'no-ambiguous-paths': 'off' } });
    const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config });
    const report = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(', ')}`);
    expect(report).toEqual([]);
  });

  it('documents every operation with a description and examples', async () => {
    const doc = (await client(app, undefined).get('/v1/openapi.json')).json();
    const missing: string[] = [];
    const seen = new Set<string>();
    const visit = (schema: Record<string, unknown> | undefined, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      // Named shapes are components: each is checked once, where it is first used.
      const ref = schema.$ref as string | undefined;
      if (ref) {
        if (seen.has(ref)) return;
        seen.add(ref);
        return visit(doc.components.schemas[ref.split('/').pop()!], where);
      }
      const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
      for (const [name, declared] of Object.entries(props ?? {})) {
        // A nullable field is `anyOf: [T, null]`: its documentation may sit on either level.
        const branch = (declared.anyOf as Array<Record<string, unknown>> | undefined)?.find((b) => b.type !== 'null');
        const prop = { ...branch, ...declared };
        const leaf = prop.type !== 'object' && prop.type !== 'array';
        if (!prop.description) missing.push(`${where}.${name}: description`);
        if (leaf && !prop.examples && !prop.enum && !('const' in prop)) missing.push(`${where}.${name}: examples`);
        visit(prop, `${where}.${name}`);
      }
    };
    interface Operation {
      summary?: string;
      description?: string;
      requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
      parameters?: Array<{ name: string; description?: string; schema?: { description?: string } }>;
    }
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method.toUpperCase()} ${path}`;
        if (!op.summary || !op.description) missing.push(`${where}: summary/description`);
        visit(op.requestBody?.content?.['application/json']?.schema, `${where} body`);
        for (const p of op.parameters ?? []) if (!p.description && !p.schema?.description) missing.push(`${where} ${p.name}: description`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('reference', () => {
  it('serves the interactive reference as HTML', async () => {
    let res = await client(app, undefined).get('/docs');
    if (res.statusCode === 301 || res.statusCode === 302) res = await client(app, undefined).get(String(res.headers.location));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<html/i);
    const script = await client(app, undefined).get('/docs/js/scalar.js');
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/^application\/javascript/);
    expect(script.body.length).toBeGreaterThan(100_000);
  });
});

describe('graceful shutdown', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rds-server-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const freePort = () => new Promise<number>((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    }).on('error', reject);
  });

  /** The Node options `npm start` runs the server with. */
  const startFlags = () => (JSON.parse(readFileSync('package.json', 'utf8')).scripts.start as string).split(/\s+/).filter((t) => t.startsWith('--'));

  it('starts as `npm start` does, filling the compile cache; finishes the request in flight on SIGTERM, then exits 0', async () => {
    const url = isPostgres() ? databaseUrl() : `sqlite:${join(dir, 'server.db')}`;
    const port = await freePort();
    const cache = join(dir, 'compile-cache');
    const server = spawn(process.execPath, [...startFlags(), 'src/server.ts'], {
      // API only: on PostgreSQL the suite's store holds other tests' queued jobs, and in-process
      // workers would spend the shutdown's grace on them (their stop is tested in jobs.test.ts).
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: url, REDIS_URL: '', LOG_LEVEL: 'info', WORKERS: 'off', NODE_COMPILE_CACHE: cache },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout.on('data', (chunk) => (output += chunk));
    server.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 20_000;
      while (!/Server listening/.test(output)) {
        if (Date.now() > deadline || server.exitCode !== null) throw new Error(`server did not start:\n${output}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      // Written once the server listens, before it stops: the next start loads compiled modules.
      for (let i = 0; i < 100 && readdirSync(cache, { recursive: true }).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(readdirSync(cache, { recursive: true }).length).toBeGreaterThan(0);

      const database = openDatabase(url);
      const org = await createOrganization(database, { defaultCredits: 0 }, 'Shutdown org');
      await database.close();

      // Start a request and hold its body back, so it is in flight when the signal arrives.
      const body = JSON.stringify({ name: 'Created during shutdown', type: 'contacts' });
      const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({
          host: '127.0.0.1', port, method: 'POST', path: '/v1/lists',
          headers: { authorization: `Bearer ${org.live_token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        }, (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        req.write(body.slice(0, 10));
        setTimeout(() => {
          server.kill('SIGTERM');
          setTimeout(() => req.end(body.slice(10)), 300);
        }, 300);
      });

      const done = await response;
      const answeredAt = Date.now();
      expect(done.status, output).toBe(201);
      expect(JSON.parse(done.body).data.name).toBe('Created during shutdown');
      expect(await exited).toBe(0);
      // The answered connection is closed by the server, not left to the client's keep-alive timeout.
      expect(Date.now() - answeredAt).toBeLessThan(3000);
      expect(output).toContain('shutting down');
    } finally {
      if (server.exitCode === null) server.kill('SIGKILL');
    }
  }, 30_000);
});

describe('worker processes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rds-worker-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const worker = (env: Record<string, string>) => {
    const url = isPostgres() ? databaseUrl() : `sqlite:${join(dir, 'worker.db')}`;
    const child = spawn(process.execPath, ['src/worker.ts'], { env: { ...process.env, DATABASE_URL: url, REDIS_URL: '', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, exited, output: () => output };
  };

  it('run below the priority of API processes, and refuse a priority out of range', async () => {
    const w = worker({});
    try {
      const deadline = Date.now() + 20_000;
      while (!w.output().includes('"worker started"')) {
        if (Date.now() > deadline || w.child.exitCode !== null) throw new Error(`worker did not start:\n${w.output()}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(getPriority(w.child.pid)).toBe(Math.max(15, getPriority()));
      w.child.kill('SIGTERM');
      expect(await w.exited).toBe(0);
    } finally {
      if (w.child.exitCode === null) w.child.kill('SIGKILL');
    }

    const bad = worker({ WORKER_NICE: '20' });
    expect(await bad.exited).toBe(2);
    expect(bad.output()).toContain('Configuration error: WORKER_NICE must be between 0 and 19');

    const greedy = worker({ WORKER_CONCURRENCY: '4', WORKER_CONCURRENCY_PER_KEY: '5' });
    expect(await greedy.exited).toBe(2);
    expect(greedy.output()).toContain('Configuration error: WORKER_CONCURRENCY_PER_KEY must not exceed WORKER_CONCURRENCY');
  }, 30_000);
});
