// Administration: `npm run --silent cli -- <command>`. Uses the same DATABASE_URL as the server and
// prints JSON on stdout, so its output can be piped.
import { parseArgs } from 'node:util';
import { loadConfig } from './config.ts';
import { openDatabase, type Database } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import type { Mode } from './db/schema.ts';
import { createOrganization, listOrganizations, organizationExists } from './orgs/orgs.ts';
import { runWrite } from './platform/write.ts';
import { createApiKey, revokeApiKey } from './resources/api-keys/api-keys.store.ts';
import { grantCredits } from './resources/usage/usage.store.ts';

const USAGE = `Usage: npm run --silent cli -- <command>

  migrate                                         apply pending migrations
  orgs create --name <NAME> [--agency]            new organization with a live and a test key
                                                  (--agency: it may have agency keys and clients)
  orgs list                                       all organizations
  orgs grant --org <ID> --credits <N> [--mode test]  add credits (live by default)
  keys create --org <ID> --name <NAME> [--mode test] new API key (token printed once)
  keys revoke <KEY_ID>                            revoke a key`;

class UsageError extends Error {}

function need(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`missing ${flag}`);
  return value;
}

function modeOf(value: string | undefined): Mode {
  if (value === undefined || value === 'live') return 'live';
  if (value === 'test') return 'test';
  throw new UsageError('--mode must be live or test');
}

async function run(database: Database, argv: string[]): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { name: { type: 'string' }, org: { type: 'string' }, mode: { type: 'string' }, credits: { type: 'string' }, agency: { type: 'boolean' } },
  });
  const [group, action, arg] = positionals;
  const config = loadConfig();
  const command = [group, action].filter(Boolean).join(' ');
  switch (command) {
    case 'migrate':
      return { applied: await migrateToLatest(database) };
    case 'orgs create':
      await migrateToLatest(database);
      return createOrganization(database, config, need(values.name, '--name'), { agency: values.agency === true });
    case 'orgs list':
      return (await listOrganizations(database)).map((o) => ({ org_id: o.id, name: o.name, is_agency: o.is_agency === 1, created_at: Number(o.created_at) }));
    case 'orgs grant': {
      const orgId = need(values.org, '--org');
      const credits = Number(need(values.credits, '--credits'));
      if (!Number.isSafeInteger(credits) || credits <= 0) throw new UsageError('--credits must be a positive whole number');
      if (!(await organizationExists(database, orgId))) throw new UsageError(`no organization ${orgId}`);
      return runWrite(database, { orgId, mode: modeOf(values.mode) }, (w) => grantCredits(w, credits, 'Granted by an administrator'));
    }
    case 'keys create': {
      const orgId = need(values.org, '--org');
      if (!(await organizationExists(database, orgId))) throw new UsageError(`no organization ${orgId}`);
      return createApiKey(database.db, orgId, need(values.name, '--name'), modeOf(values.mode));
    }
    case 'keys revoke': {
      const id = need(arg, '<KEY_ID>');
      if (!(await revokeApiKey(database.db, id))) throw new UsageError(`no active key ${id}`);
      return { api_key_id: id, revoked: true };
    }
    default:
      throw new UsageError(command ? `unknown command: ${command}` : 'no command given');
  }
}

const database = openDatabase(loadConfig().databaseUrl);
try {
  const result = await run(database, process.argv.slice(2));
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
} finally {
  await database.close();
}
