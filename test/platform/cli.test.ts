// The administration CLI, run as a real process on the store of this run, checked through an app
// on the same store.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

function cliOn(databaseUrl: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['src/cli.ts', ...args], { env: { ...process.env, DATABASE_URL: databaseUrl } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

const cli = (...args: string[]) => cliOn(store, ...args);

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
    expect(refused.json()).toEqual({ type: 'authentication_failed', detail: 'API key not associated with an organization' });
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
    // A known command's mistake shows that command's usage.
    expect(runs[2].stderr).toMatch(/^missing --name\n\nUsage: npm run --silent cli -- orgs create --name <NAME> \[--agency\]\n/);
  });

  it('prints the usage on stdout and exits 0 for --help, -h or help, alone or after a command, without opening the store', { timeout: 90_000 }, async () => {
    // A store that cannot be opened: asking for help must not need one.
    const nowhere = `sqlite:${join(dir, 'missing', 'dir', 'cli.db')}`;
    const help = (...args: string[]) => cliOn(nowhere, ...args);
    const commands = ['migrate', 'orgs create', 'orgs list', 'orgs grant', 'keys create', 'keys revoke', 'jobs stats', 'jobs list', 'jobs retry', 'import'];
    const [long, short, word] = await Promise.all([help('--help'), help('-h'), help('help')]);
    for (const run of [long, short, word]) {
      expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toMatch(/^Usage: npm run --silent cli -- <command>/);
      for (const command of commands) expect(run.stdout).toContain(`\n  ${command}`);
      expect(run.stdout).toContain('<command> --help');
    }

    const [importHelp, importWord, createHelp, revokeHelp, group] = await Promise.all([
      help('import', '--help'), help('help', 'import'), help('orgs', 'create', '-h'), help('keys', 'revoke', 'key_x', '--help'), help('orgs', '--help'),
    ]);
    for (const run of [importHelp, importWord, createHelp, revokeHelp, group]) expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(importHelp.stdout).toMatch(/^Usage: npm run --silent cli -- import --org <ID> --file <CSV> .*\[--list <LIST_ID>\]/);
    expect(importHelp.stdout).toContain('[--mode test]');
    expect(importHelp.stdout).not.toContain('orgs create');
    expect(importWord.stdout).toBe(importHelp.stdout);
    expect(createHelp.stdout).toMatch(/^Usage: npm run --silent cli -- orgs create --name <NAME> \[--agency\]\n\n {2}a new organization/);
    expect(revokeHelp.stdout).toMatch(/^Usage: npm run --silent cli -- keys revoke <KEY_ID>\n/);
    expect(group.stdout).toMatch(/^Usage: npm run --silent cli -- orgs <command>\n/);
    for (const command of ['orgs create', 'orgs list', 'orgs grant']) expect(group.stdout).toContain(`\n  ${command}`);
    expect(group.stdout).not.toContain('keys create');

    const unknown = await help('frobnicate', '--help');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^unknown command: frobnicate\n\nUsage:/);
  });

  it('says when an import names a list of the other mode of the same organization, and only then', { timeout: 90_000 }, async () => {
    const file = join(dir, 'people.csv');
    writeFileSync(file, 'Email,First Name\nada@example.com,Ada\n');
    const test = client(app, acme.test_token);
    const live = client(app, acme.live_token);
    const testList = (await test.post('/v1/lists', { name: 'Sandbox import', type: 'contacts' })).json().data.id;
    const liveList = (await live.post('/v1/lists', { name: 'Live import', type: 'contacts' })).json().data.id;
    const other = output(await cli('orgs', 'create', '--name', 'Other Co'));
    const foreignList = (await client(app, other.test_token).post('/v1/lists', { name: 'Not yours', type: 'contacts' })).json().data.id;

    const importInto = (list: string, ...more: string[]) => cli('import', '--org', acme.org_id, '--file', file, '--list', list, ...more);
    const [liveIntoTest, testIntoLive, foreign, foreignTest, unknown] = await Promise.all([
      importInto(testList), importInto(liveList, '--mode', 'test'), importInto(foreignList), importInto(foreignList, '--mode', 'test'),
      importInto('lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'),
    ]);
    expect(liveIntoTest).toMatchObject({ code: 1, stdout: '', stderr: 'List not found in live mode (is it a test-mode list? add --mode test)\n' });
    expect(testIntoLive).toMatchObject({ code: 1, stdout: '', stderr: 'List not found in test mode (is it a live-mode list? leave out --mode test)\n' });
    // Another organization's list is not found, with no hint that it exists.
    for (const run of [foreign, foreignTest, unknown]) expect(run).toMatchObject({ code: 1, stdout: '', stderr: 'List not found\n' });

    const imported = output(await importInto(testList, '--mode', 'test'));
    expect(imported).toMatchObject({ status: 'completed', list_id: testList, created: 1 });
    expect((await test.get(`/v1/contacts?list_id=${testList}`)).json().data.map((c: { work_email: string }) => c.work_email)).toEqual(['ada@example.com']);
  });
});
