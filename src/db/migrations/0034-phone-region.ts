// The organization's phone region (ISO 3166-1 alpha-2, `GB`): the country a phone number written
// without its country code (`020 7946 0000`) is read in. Null, the default, takes international
// numbers only. One per organization, like its name: both modes read the same one.
import type { Kysely } from 'kysely';

export function phoneRegion() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('organizations').addColumn('phone_region', 'text').execute();
    },
  };
}
