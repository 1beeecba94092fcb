// The lease of an idempotency claim: a token the claiming request holds (a new one when another
// request takes a lapsed claim over). The request's write and its stored response commit only
// while the row still carries its token, so a request whose claim was taken over never commits.
// Rows claimed before this migration have none, and can only be taken over.
import type { Kysely } from 'kysely';

export const idempotencyLease = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('idempotency_keys').addColumn('lease', 'text').execute();
  },
};
