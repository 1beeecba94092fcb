// The administration CLI, run as a real process on the store of this run, checked through an app
// on the same store.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, databaseUrl, isPostgres, testApp } from '../helpers/app.ts';

const dir = mkdtempSync(join(tmpdir(), 'rds-cli-'));
const store = isPostgres() ? databaseUrl() : `sqlite:${join(dir, 'cli.db')}`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['src/cli.ts', ...args], { env: { ...process.env, DATABASE_URL: store } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The one JSON value a successful command prints. */
function output(run: Run) {
  expect(run.code, run.stderr).toBe(0);
  const lines = run.stdout.split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]);
}

let app: FastifyInstance;
let acme: { org_id: string; is_agency: boolean; live_token: string; test_token: string };
beforeAll(async () => {
  output(await cli('migrate'));
  app = await testApp({ env: { DATABASE_URL: store } });
  acme = output(await cli('orgs', 'create', '--name', 'Acme Corp'));
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('cli', () => {
  it('creates an organization whose keys work against the API', async () => {
    const created = acme;
    expect(Object.keys(created).sort()).toEqual(['is_agency', 'live_token', 'org_id', 'test_token']);
    expect(created.is_agency).toBe(false);
    expect(created.org_id).toMatch(/^org_/);
    expect(created.live_token).toMatch(/^svc_live_/);
    expect(created.test_token).toMatch(/^svc_test_/);

    const live = client(app, created.live_token);
    const test = client(app, created.test_token);
    const list = await live.post('/v1/lists', { name: 'From the CLI org', type: 'contacts' });
    expect(list.statusCode).toBe(201);
    expect((await live.get('/v1/lists', { 'x-org-id': created.org_id })).json().pagination.total).toBe(1);
    expect((await test.get(`/v1/lists/${list.json().data.id}`)).statusCode).toBe(404);
    const keys = (await live.get('/auth/v1/api-keys')).json().data;
    expect(keys.keys.map((k: { mode: string }) => k.mode).sort()).toEqual(['live', 'test']);

    const listed = output(await cli('orgs', 'list'));
    expect(listed).toContainEqual({ org_id: created.org_id, name: 'Acme Corp', is_agency: false, created_at: expect.any(Number) });
  });

  it('creates an agency organization, whose keys can be made agency keys', async () => {
    const agency = output(await cli('orgs', 'create', '--name', 'Outbound Partners', '--agency'));
    expect(agency.is_agency).toBe(true);
    const made = await client(app, agency.live_token).post('/auth/v1/api-keys', { name: 'agency', is_agency: true });
    expect(made.statusCode).toBe(201);
    expect(made.json().data.is_agency).toBe(true);
    expect(output(await cli('orgs', 'list'))).toContainEqual({ org_id: agency.org_id, name: 'Outbound Partners', is_agency: true, created_at: expect.any(Number) });
    // An ordinary organization's keys cannot be agency keys.
    expect((await client(app, acme.live_token).post('/auth/v1/api-keys', { name: 'agency', is_agency: true })).statusCode).toBe(403);
  });

  it('creates and revokes keys and grants credits', async () => {
    const { org_id } = output(await cli('orgs', 'create', '--name', 'Keys Inc'));
    // Independent commands run side by side: each is a process start.
    const [liveRun, testRun, doomedRun, grantRun, testGrantRun] = await Promise.all([
      cli('keys', 'create', '--org', org_id, '--name', 'deploy'),
      cli('keys', 'create', '--org', org_id, '--name', 'ci', '--mode', 'test'),
      cli('keys', 'create', '--org', org_id, '--name', 'doomed'),
      cli('orgs', 'grant', '--org', org_id, '--credits', '250'),
      cli('orgs', 'grant', '--org', org_id, '--credits', '5', '--mode', 'test'),
    ]);
    const live = output(liveRun);
    expect(live).toMatchObject({ name: 'deploy', mode: 'live', is_agency: false, last_used_at: null });
    expect(live.api_key_token).toMatch(/^svc_live_/);
    const test = output(testRun);
    expect(test).toMatchObject({ name: 'ci', mode: 'test' });
    expect(test.api_key_token).toMatch(/^svc_test_/);

    const testClient = client(app, test.api_key_token);
    const liveClient = client(app, live.api_key_token);
    const liveBefore = (await liveClient.get('/v1/lists')).json().pagination.total;
    const made = (await testClient.post('/v1/lists', { name: 'sandbox list', type: 'leads' })).json().data.id;
    expect((await testClient.get(`/v1/lists/${made}`)).statusCode).toBe(200);
    expect((await liveClient.get(`/v1/lists/${made}`)).statusCode).toBe(404);
    expect((await liveClient.get('/v1/lists')).json().pagination.total).toBe(liveBefore);

    // Revoked before its first use, so no process has it cached.
    const doomed = output(doomedRun);
    expect(output(await cli('keys', 'revoke', doomed.api_key_id))).toEqual({ api_key_id: doomed.api_key_id, revoked: true });
    const refused = await client(app, doomed.api_key_token).get('/v1/lists');
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ detail: 'API key not associated with an organization' });
    expect((await cli('keys', 'revoke', doomed.api_key_id)).code).toBe(2);

    const granted = output(grantRun);
    expect(granted).toMatchObject({ type: 'grant', amount: 250, balance_after: app.services.config.defaultCredits + 250 });
    const testGrant = output(testGrantRun);
    expect(testGrant.balance_after).toBe(app.services.config.defaultCredits + 5);
  });

  it('migrates idempotently', async () => {
    expect(output(await cli('migrate'))).toEqual({ applied: [] });
  });

  it('exits 2 with the usage on bad usage', async () => {
    const { org_id } = acme;
    const runs = await Promise.all([
      cli(),
      cli('frobnicate'),
      cli('orgs', 'create'),
      cli('keys', 'create', '--org', org_id, '--name', 'x', '--mode', 'staging'),
      cli('orgs', 'grant', '--org', org_id, '--credits', '-5'),
    ]);
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('Usage:');
    }
  });
});
