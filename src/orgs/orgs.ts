// Organizations: created by the CLI (and tests) with one live and one test key, a starting credit
// grant in each mode, and the sandbox data set in test mode. An agency's client organizations are
// made the same way inside the agency's write, without keys: the agency acts for them.
import type { Transaction } from 'kysely';
import type { Config } from '../config.ts';
import type { Database, Dialect } from '../db/database.ts';
import type { DB, Mode } from '../db/schema.ts';
import { newId, nowSeconds } from '../platform/ids.ts';
import { writeIn } from '../platform/write.ts';
import { createApiKey } from '../resources/api-keys/api-keys.store.ts';
import { createDefaultPipeline } from '../resources/deals/pipelines.store.ts';
import { seedSandbox } from '../resources/sandbox/sandbox.store.ts';
import { grantCredits } from '../resources/usage/usage.store.ts';

export interface CreatedOrganization {
  org_id: string;
  is_agency: boolean;
  live_token: string;
  test_token: string;
}

export interface OrganizationOptions {
  /** An agency may have agency keys and client organizations. */
  agency?: boolean;
  /** The sandbox data set in test mode (default); without it test mode starts like live mode. */
  sandbox?: boolean;
}

/** Inserts the organization with its starting credits and sandbox data, inside `tx`. */
export async function insertOrganization(tx: Transaction<DB>, dialect: Dialect, config: Pick<Config, 'defaultCredits'>, name: string, options: OrganizationOptions = {}) {
  const row = { id: newId('org'), name, is_agency: options.agency ? 1 : 0, created_at: nowSeconds() };
  await tx.insertInto('organizations').values(row).execute();
  for (const mode of ['live', 'test'] as Mode[]) {
    await writeIn(tx, dialect, { orgId: row.id, mode }, async (w) => {
      await grantCredits(w, config.defaultCredits, 'Starting credits');
      // Every tenant has a default deal pipeline; the sandbox data set (test mode) makes its own.
      if (mode === 'test' && options.sandbox !== false) await seedSandbox(w);
      else await createDefaultPipeline(w, { silent: true });
    });
  }
  return row;
}

/** Creates the organization, its keys, grants and sandbox data in one transaction: all or nothing. */
export async function createOrganization(database: Database, config: Pick<Config, 'defaultCredits'>, name: string, options: OrganizationOptions = {}): Promise<CreatedOrganization> {
  return database.db.transaction().execute(async (tx) => {
    const org = await insertOrganization(tx, database.dialect, config, name, options);
    const live = await createApiKey(tx, org.id, 'Default live key', 'live');
    const test = await createApiKey(tx, org.id, 'Default test key', 'test');
    return { org_id: org.id, is_agency: org.is_agency === 1, live_token: live.api_key_token, test_token: test.api_key_token };
  });
}

export async function listOrganizations(database: Database) {
  return database.db.selectFrom('organizations').selectAll().orderBy('id').execute();
}

export async function organizationExists(database: Database, orgId: string): Promise<boolean> {
  return (await database.db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst()) !== undefined;
}
