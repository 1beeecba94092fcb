// Members: the people of an organization, who own mailboxes, are assigned threads and tasks, host
// bookings and take calls. An e-mail address belongs to one member per organization and mode.
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { createTenantTable, createTenantUnique } from '../migration-helpers.ts';

export function members(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'members', (t) => t
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('is_active', 'integer', (c) => c.notNull()));
      await createTenantUnique(db, 'members', 'members_email', ['email']);
    },
  };
}
