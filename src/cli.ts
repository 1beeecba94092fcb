// Administration: `npm run --silent cli -- <command>`. Uses the same DATABASE_URL as the server and
// prints JSON on stdout, so its output can be piped.
import { parseArgs } from 'node:util';
import { loadConfig } from './config.ts';
import { openDatabase, type Database } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import type { Mode } from './db/schema.ts';
import { createOrganization, listOrganizations, organizationExists } from './orgs/orgs.ts';
import { JOB_STATUSES, listJobs, queueStats, retryJob } from './platform/jobs/queue.ts';
import { AppError } from './platform/errors.ts';
import { consumeEvents, runWrite } from './platform/write.ts';
import { createApiKey, revokeApiKey } from './resources/api-keys/api-keys.store.ts';
import { EVENT_CONSUMERS } from './resources/event-consumers.ts';
import { importFromCli } from './resources/imports/imports.cli.ts';
import { WRITE_MODES, type WriteMode } from './resources/imports/imports.schemas.ts';
import { IMPORT_OBJECTS, type ImportObject } from './resources/imports/objects.ts';
import { grantCredits } from './resources/usage/usage.store.ts';

const CLI = 'npm run --silent cli --';

/** Every command: its arguments and what it does, for the overall usage and each command's own (`<command> --help`). */
const COMMANDS: Record<string, { args: string; does: string }> = {
  'migrate': { args: '', does: 'apply pending migrations (the server also does this at start)' },
  'orgs create': { args: '--name <NAME> [--agency]', does: 'a new organization with a live and a test key, starting credits and sandbox data in test mode\n(--agency: it may have agency keys and clients); prints its id and both tokens' },
  'orgs list': { args: '', does: 'all organizations' },
  'orgs grant': { args: '--org <ID> --credits <N> [--mode test]', does: 'add credits to an organization\'s ledger (live mode unless --mode test)' },
  'keys create': { args: '--org <ID> --name <NAME> [--mode test]', does: 'a new API key (live mode unless --mode test); its token is printed once' },
  'keys revoke': { args: '<KEY_ID>', does: 'revoke a key' },
  'jobs stats': { args: '', does: 'background jobs by status, and the age of the oldest due job' },
  'jobs list': { args: '[--status S] [--kind K] [--limit N]', does: 'the most recently changed jobs (50 by default)' },
  'jobs retry': { args: '<JOB_ID>', does: 'run a failed or dead job again, with all its attempts' },
  'import': {
    args: '--org <ID> --file <CSV> [--object contacts|companies] [--list <LIST_ID>]\n  [--write-mode create|upsert|update] [--mapping \'{"Email":"work_email"}\'] [--mode test]',
    does: 'import a CSV in this process, as POST /v1/imports does, showing progress on stderr, then print the import.\nThe list must be of the same mode as the import: add --mode test for a list of test mode',
  },
};

const indent = (text: string, by: string) => text.split('\n').map((line) => `${by}${line}`).join('\n');
const describe = (name: string) => `${indent(`${name} ${COMMANDS[name].args}`.trimEnd(), '  ')}\n${indent(COMMANDS[name].does, '      ')}`;

const USAGE = `Usage: ${CLI} <command> (uses DATABASE_URL as the server does, prints JSON)

${Object.keys(COMMANDS).map(describe).join('\n')}

${CLI} <command> --help shows one command's usage.`;

/** The usage of the commands `words` names (`orgs create`, or `orgs` for the group), or none for no such command. */
function usageOf(words: string[]): string | undefined {
  const prefix = words.join(' ');
  const names = Object.keys(COMMANDS).filter((name) => name === prefix || name.startsWith(`${prefix} `));
  if (prefix === '' || names.length === 0) return undefined;
  if (names.length > 1) return `Usage: ${CLI} ${prefix} <command>\n\n${names.map(describe).join('\n')}`;
  const [name] = names;
  return `Usage: ${CLI} ${`${name} ${COMMANDS[name].args}`.trimEnd()}\n\n${indent(COMMANDS[name].does, '  ')}`;
}

class UsageError extends Error {
  /** The usage to show with the message: the command's own, once known. */
  usage?: string;
}

function need(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`missing ${flag}`);
  return value;
}

function modeOf(value: string | undefined): Mode {
  if (value === undefined || value === 'live') return 'live';
  if (value === 'test') return 'test';
  throw new UsageError('--mode must be live or test');
}

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' }, org: { type: 'string' }, mode: { type: 'string' }, credits: { type: 'string' },
  status: { type: 'string' }, kind: { type: 'string' }, limit: { type: 'string' }, agency: { type: 'boolean' },
  file: { type: 'string' }, object: { type: 'string' }, list: { type: 'string' }, 'write-mode': { type: 'string' }, mapping: { type: 'string' },
} as const;

const parse = (argv: string[]) => parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });

async function run(database: Database, { values, positionals }: ReturnType<typeof parse>): Promise<unknown> {
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
    case 'jobs stats':
      return queueStats(database.db);
    case 'jobs list': {
      const limit = Number(values.limit ?? 50);
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000');
      if (values.status !== undefined && !(JOB_STATUSES as readonly string[]).includes(values.status)) throw new UsageError(`--status must be one of ${JOB_STATUSES.join(', ')}`);
      return listJobs(database.db, { status: values.status, kind: values.kind, limit });
    }
    case 'jobs retry': {
      const id = need(arg, '<JOB_ID>');
      const job = await retryJob(database.db, id);
      if (!job) throw new UsageError(`no failed or dead job ${id}`);
      return job;
    }
    case 'import': {
      const orgId = need(values.org, '--org');
      await migrateToLatest(database);
      if (!(await organizationExists(database, orgId))) throw new UsageError(`no organization ${orgId}`);
      const object = values.object ?? 'contacts';
      if (!(IMPORT_OBJECTS as string[]).includes(object)) throw new UsageError(`--object must be one of ${IMPORT_OBJECTS.join(', ')}`);
      const writeMode = values['write-mode'] ?? 'create';
      if (!(WRITE_MODES as readonly string[]).includes(writeMode)) throw new UsageError(`--write-mode must be one of ${WRITE_MODES.join(', ')}`);
      let mapping: Record<string, string | null> | undefined;
      try {
        mapping = values.mapping === undefined ? undefined : JSON.parse(values.mapping) as Record<string, string | null>;
      } catch {
        throw new UsageError('--mapping must be a JSON object');
      }
      return importFromCli(database, config, { orgId, mode: modeOf(values.mode) }, {
        file: need(values.file, '--file'), object: object as ImportObject, mode: writeMode as WriteMode, listId: values.list, mapping,
      });
    }
    default:
      throw new UsageError(command ? `unknown command: ${command}` : 'no command given');
  }
}

/**
 * The usage asked for (`--help`, `-h` or `help`, alone or after a command), printed on stdout with
 * nothing else done; undefined when the command is to run. An unknown command is a usage error.
 */
function helpAsked({ values, positionals }: ReturnType<typeof parse>): string | undefined {
  const words = positionals[0] === 'help' ? positionals.slice(1) : positionals;
  if (!values.help && words === positionals) return undefined;
  if (words.length === 0) return USAGE;
  // A command's own positional (`keys revoke key_…`) is not part of its name.
  const usage = usageOf(words) ?? usageOf(words.slice(0, -1));
  if (!usage) throw new UsageError(`unknown command: ${words.join(' ')}`);
  return usage;
}

async function main(argv: string[]): Promise<void> {
  const parsed = parse(argv);
  const help = helpAsked(parsed);
  if (help !== undefined) {
    process.stdout.write(`${help}\n`);
    return;
  }
  // The CLI's writes (an import's) cause what every write's events cause: webhook deliveries.
  consumeEvents(EVENT_CONSUMERS);
  const database = openDatabase(loadConfig().databaseUrl);
  try {
    const result = await run(database, parsed).catch((error: unknown) => {
      if (error instanceof UsageError) error.usage ??= usageOf(parsed.positionals.slice(0, 2));
      throw error;
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await database.close();
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof AppError) {
    process.stderr.write(`${typeof error.detail === 'string' ? error.detail : JSON.stringify(error.detail)}\n`);
    process.exitCode = 1;
  } else if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${(error as Error).message}\n\n${(error as UsageError).usage ?? USAGE}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
