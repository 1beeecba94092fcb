// Organizations: created by the CLI (and tests) with one live and one test key, a starting credit
// grant in each mode, and the sandbox data set in test mode.
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Mode } from '../db/schema.ts';
import { newId, nowSeconds } from '../platform/ids.ts';
import { writeIn } from '../platform/write.ts';
import { createApiKey } from '../resources/api-keys/api-keys.store.ts';
import { createDefaultPipeline } from '../resources/deals/pipelines.store.ts';
import { seedSandbox } from '../resources/sandbox/sandbox.store.ts';
import { grantCredits } from '../resources/usage/usage.store.ts';

export interface CreatedOrganization {
  org_id: string;
  live_token: string;
  test_token: string;
}

/** Creates the organization, its keys, grants and sandbox data in one transaction: all or nothing. */
export async function createOrganization(database: Database, config: Pick<Config, 'defaultCredits'>, name: string): Promise<CreatedOrganization> {
  const orgId = newId('org');
  return database.db.transaction().execute(async (tx) => {
    await tx.insertInto('organizations').values({ id: orgId, name, created_at: nowSeconds() }).execute();
    const live = await createApiKey(tx, orgId, 'Default live key', 'live');
    const test = await createApiKey(tx, orgId, 'Default test key', 'test');
    for (const mode of ['live', 'test'] as Mode[]) {
      await writeIn(tx, database.dialect, { orgId, mode }, async (w) => {
        await grantCredits(w, config.defaultCredits, 'Starting credits');
        // Every tenant has a default deal pipeline; the sandbox data set (test mode) makes its own.
        if (mode === 'test') await seedSandbox(w);
        else await createDefaultPipeline(w, { silent: true });
      });
    }
    return { org_id: orgId, live_token: live.api_key_token, test_token: test.api_key_token };
  });
}

export async function listOrganizations(database: Database) {
  return database.db.selectFrom('organizations').selectAll().orderBy('id').execute();
}

export async function organizationExists(database: Database, orgId: string): Promise<boolean> {
  return (await database.db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst()) !== undefined;
}
