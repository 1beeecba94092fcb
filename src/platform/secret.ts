// The key that signs cursors: SECRET_KEY when set, else one generated on first start and kept in the
// store, so that every process on one store signs alike and cursors survive restarts.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';

export async function loadSecret(db: Kysely<DB>, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  await db.insertInto('settings').values({ key: 'secret_key', value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('key').doNothing()).execute();
  const row = await db.selectFrom('settings').select('value').where('key', '=', 'secret_key').executeTakeFirstOrThrow();
  return row.value;
}

const loaded = new WeakMap<Kysely<DB>, Promise<string>>();
/** The service's secret for code outside a request (jobs), read once per store. */
export function secretOf(db: Kysely<DB>, configured: string | undefined): Promise<string> {
  let secret = loaded.get(db);
  if (!secret) {
    loaded.set(db, secret = loadSecret(db, configured));
    secret.catch(() => loaded.delete(db));
  }
  return secret;
}
