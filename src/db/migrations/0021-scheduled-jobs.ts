// Scheduled work per record: a job may hold a key of its tenant (`schedule_key`, e.g. the expiry of
// one quote), so the record's next run is replaced or cancelled by that key rather than added again
// when the record changes (`w.schedule`, `w.cancel`). At most one waiting job per tenant and key
// (unique index); a running one gives its key up when it is replaced, so it finishes undisturbed.
// Quotes' expiry becomes such a job, one per quote: the quotes waiting for an answer get theirs
// here, and the jobs of the former every-minute sweep (a system job of the same kind) go.
// Plain SQL, the same on both stores: frozen with this migration, whatever the code does later.
import { sql, type Kysely } from 'kysely';

export const scheduledJobs = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('jobs').addColumn('schedule_key', 'text').execute();
    await sql`create unique index jobs_schedule_key on jobs (org_id, mode, schedule_key)
      where schedule_key is not null and status in ('queued', 'failed')`.execute(db);
    // Finds a key's running job too (to release its key): few jobs have a key, so the index is small.
    await sql`create index jobs_keyed on jobs (org_id, mode, schedule_key) where schedule_key is not null`.execute(db);

    await sql`delete from jobs where org_id = '' and kind = 'quotes.expire' and status in ('queued', 'failed')`.execute(db);
    const now = Date.now();
    // Due the second after `valid_until` (a quote is expired once its date has passed).
    await sql`insert into jobs (org_id, mode, id, kind, payload, concurrency_key, status, run_at, attempts, max_attempts,
        lease_until, lease_token, last_error, created_at, updated_at, schedule_key)
      select org_id, mode, 'job_' || substr(id, 5), 'quotes.expire', '{"quote_id":"' || id || '"}', null, 'queued',
        (valid_until + 1) * 1000, 0, 5, null, null, null, ${now}, ${now}, 'quote.expiry:' || id
      from quotes where status in ('sent', 'viewed') and valid_until is not null`.execute(db);
  },
};
