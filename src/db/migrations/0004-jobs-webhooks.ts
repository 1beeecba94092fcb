// Background jobs (the transactional outbox of every write) and webhooks: endpoints and the record
// of their deliveries. Job times are milliseconds (a job can be due within the same second it was
// made); the API's timestamps stay unix seconds.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../database.ts';

export function jobsWebhooks(dialect: Dialect) {
  const json = dialect === 'postgres' ? sql`jsonb` : sql`text`;
  const big = dialect === 'postgres' ? 'bigint' : 'integer';

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;

      // System jobs (schedules) belong to no organization: they carry org_id '' and mode 'live'.
      await s.createTable('jobs')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        // Jobs sharing a key (the deliveries to one webhook endpoint) are capped per process, so
        // one slow key cannot take every worker.
        .addColumn('concurrency_key', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        // When the job is due; while it runs, when its lease ends (so one index finds both).
        .addColumn('run_at', big, (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('max_attempts', 'integer', (c) => c.notNull())
        .addColumn('lease_until', big)
        .addColumn('lease_token', 'text')
        .addColumn('last_error', 'text')
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('jobs_pk', ['org_id', 'mode', 'id'])
        .execute();
      await s.createIndex('jobs_due').on('jobs').columns(['status', 'run_at']).execute();
      await s.createIndex('jobs_finished').on('jobs').columns(['status', 'updated_at']).execute();

      if (dialect === 'postgres') {
        // Wakes idle workers of every process when a job is committed (notifications are sent at
        // commit, one per transaction); a write that enqueues nothing pays nothing.
        await sql`create function jobs_notify() returns trigger language plpgsql as $$
          begin perform pg_notify('jobs', ''); return null; end $$`.execute(db);
        await sql`create trigger jobs_notify after insert on jobs for each row execute function jobs_notify()`.execute(db);
      }

      await s.createTable('webhook_endpoints')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('event_types', json, (c) => c.notNull())
        .addColumn('all_events', 'integer', (c) => c.notNull())
        .addColumn('is_active', 'integer', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('previous_secret', 'text')
        .addColumn('previous_secret_until', big)
        .addColumn('disabled_reason', 'text')
        .addColumn('failing_since', big)
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('webhook_endpoints_pk', ['org_id', 'mode', 'id'])
        .execute();

      await s.createTable('webhook_deliveries')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('endpoint_id', 'text', (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempt_count', 'integer', (c) => c.notNull())
        .addColumn('attempts', json, (c) => c.notNull())
        .addColumn('next_attempt_at', big)
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('updated_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('webhook_deliveries_pk', ['org_id', 'mode', 'id'])
        .execute();
      await s.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['org_id', 'mode', 'endpoint_id', 'id']).execute();
      await s.createIndex('webhook_deliveries_created').on('webhook_deliveries').column('created_at').execute();
    },
  };
}
