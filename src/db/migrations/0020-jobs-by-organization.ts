// Due jobs by organization: a claim that leaves out the organizations at their share of a worker's
// slots reads, for each stretch of organizations between them, the first due jobs in this index's
// order, a range of it, instead of scanning past the backlog of the ones left out (docs/architecture.md,
// Jobs, Fairness).
import type { Kysely } from 'kysely';

export const jobsByOrganization = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createIndex('jobs_due_by_org').on('jobs').columns(['status', 'org_id', 'run_at']).execute();
  },
};
