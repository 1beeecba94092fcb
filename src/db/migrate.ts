// Migrations run at start and by `cli migrate`. Kysely's Migrator serializes concurrent runs: an
// advisory lock on PostgreSQL, BEGIN IMMEDIATE on SQLite (see node-sqlite-dialect.ts).
import { sql } from 'kysely';
import { Migrator, type Migration } from 'kysely/migration';
import type { Database } from './database.ts';
import { initial } from './migrations/0001-initial.ts';
import { contactTitleTrigrams } from './migrations/0002-contact-title-trigrams.ts';
import { tenantKeys } from './migrations/0003-tenant-keys.ts';
import { agencyScopes } from './migrations/0005-agency-scopes.ts';
import { jobsWebhooks } from './migrations/0004-jobs-webhooks.ts';
import { customFields } from './migrations/0006-custom-fields.ts';
import { search } from './migrations/0007-search.ts';
import { listMembers } from './migrations/0008-list-members.ts';
import { idempotencyLease } from './migrations/0009-idempotency-lease.ts';
import { deals } from './migrations/0010-deals.ts';
import { checklists } from './migrations/0011-checklists.ts';
import { filterIndexes } from './migrations/0014-filter-indexes.ts';
import { tasksNotes } from './migrations/0012-tasks-notes.ts';
import { quotes } from './migrations/0013-quotes.ts';
import { imports } from './migrations/0015-imports.ts';
import { exportSearch } from './migrations/0016-export-search.ts';
import { storedJson } from './migrations/0017-stored-json.ts';
import { stageHistoryNames } from './migrations/0018-stage-history-names.ts';
import { quoteLinkHashes } from './migrations/0019-quote-link-hashes.ts';
import { jobsByOrganization } from './migrations/0020-jobs-by-organization.ts';
import { scheduledJobs } from './migrations/0021-scheduled-jobs.ts';
import { connectionsOutbox } from './migrations/0022-connections-outbox.ts';
import { members } from './migrations/0023-members.ts';
import { sendingDomains } from './migrations/0024-sending-domains.ts';
import { suppressions } from './migrations/0025-suppressions.ts';
import { inbox } from './migrations/0026-inbox.ts';
import { mailboxes } from './migrations/0027-mailboxes.ts';
import { campaignMailboxes } from './migrations/0028-campaign-mailboxes.ts';
import { sequences } from './migrations/0029-sequences.ts';
import { campaignSequences } from './migrations/0030-campaign-sequences.ts';
import { deletedSequences } from './migrations/0031-deleted-sequences.ts';
import { smsInbound } from './migrations/0032-sms-inbound.ts';
import { voice } from './migrations/0033-voice.ts';
import { phoneRegion } from './migrations/0034-phone-region.ts';
import { voiceRubrics } from './migrations/0035-voice-rubrics.ts';

/** Every migration by name (exported for the tests that build a store as an earlier version left it). */
export function migrations(database: Database): Record<string, Migration> {
  return {
    '0001-initial': initial(database.dialect),
    '0002-contact-title-trigrams': contactTitleTrigrams(database.dialect),
    '0003-tenant-keys': tenantKeys(database.dialect),
    '0005-agency-scopes': agencyScopes(database.dialect),
    '0004-jobs-webhooks': jobsWebhooks(database.dialect),
    '0006-custom-fields': customFields(database.dialect),
    '0007-search': search(database.dialect),
    '0008-list-members': listMembers(database.dialect),
    '0009-idempotency-lease': idempotencyLease,
    '0010-deals': deals(database.dialect),
    '0011-checklists': checklists(database.dialect),
    '0014-filter-indexes': filterIndexes,
    '0012-tasks-notes': tasksNotes(database.dialect),
    '0013-quotes': quotes(database.dialect),
    '0015-imports': imports(database.dialect),
    '0016-export-search': exportSearch(database.dialect),
    '0017-stored-json': storedJson,
    '0018-stage-history-names': stageHistoryNames,
    '0019-quote-link-hashes': quoteLinkHashes,
    '0020-jobs-by-organization': jobsByOrganization,
    '0021-scheduled-jobs': scheduledJobs,
    '0022-connections-outbox': connectionsOutbox(database.dialect),
    '0023-members': members(database.dialect),
    '0024-sending-domains': sendingDomains(database.dialect),
    '0025-suppressions': suppressions(database.dialect),
    '0026-inbox': inbox(database.dialect),
    '0027-mailboxes': mailboxes(database.dialect),
    '0028-campaign-mailboxes': campaignMailboxes(database.dialect),
    '0029-sequences': sequences(database.dialect),
    '0030-campaign-sequences': campaignSequences(),
    '0031-deleted-sequences': deletedSequences(database.dialect),
    '0032-sms-inbound': smsInbound(),
    '0033-voice': voice(database.dialect),
    '0034-phone-region': phoneRegion(),
    '0035-voice-rubrics': voiceRubrics(database.dialect),
  };
}

/**
 * Migrations released under another name: the name a store recorded, and the one it has now.
 * `0009-idempotency-lease` was released as a second `0006` (two changes reserved the same number).
 * Kysely refuses to run when a name it recorded is no longer among the migrations, so a plain
 * rename would stop every store that ran the old one; and a migration cannot do the rename, since
 * Kysely checks the recorded names before it runs any. So the recorded name is rewritten first, in
 * one statement per name, which is idempotent: processes starting together may both run it. A
 * process of an earlier version started on a store renamed so refuses to start (the name it knows
 * is missing) rather than running the migration twice. Entries stay here for good: a store may
 * skip any number of versions.
 */
export const RENAMED_MIGRATIONS: ReadonlyArray<readonly [recorded: string, now: string]> = [
  ['0006-idempotency-lease', '0009-idempotency-lease'],
];

/** Rewrites the names of renamed migrations in Kysely's table, where it exists (a fresh store has none). */
async function renameRecorded(database: Database): Promise<void> {
  const exists = database.dialect === 'postgres'
    ? sql<{ found: string | null }>`select to_regclass('kysely_migration')::text as found`
    : sql<{ found: string | null }>`select name as found from sqlite_master where type = 'table' and name = 'kysely_migration'`;
  const { rows } = await exists.execute(database.db);
  if (!rows[0]?.found) return;
  for (const [recorded, now] of RENAMED_MIGRATIONS) {
    await sql`update kysely_migration set name = ${now} where name = ${recorded}`.execute(database.db);
  }
}

export async function migrateToLatest(database: Database): Promise<string[]> {
  await renameRecorded(database);
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrations(database) },
    // Numbers are reserved per change and changes land in any order (0008 may reach a store before
    // 0006); each migration stands alone, so a store runs the ones it lacks whatever their number.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
