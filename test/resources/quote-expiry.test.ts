// A quote's expiry as its own scheduled job: sending with a `valid_until` schedules it for the second
// after that date, a new send after a revision replaces it, an answer or a void cancels it, and
// once the clock passes the date the app's workers record the expiry of that quote only, once; and
// the migration that gives the quotes of an earlier version their jobs. Time is moved with the test clock.
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrations } from '../../src/db/migrate.ts';
import { clock, DELIVERY_ENV, tenant, testApp } from '../helpers/app.ts';
import { eventsOf, ok, sentQuote, sleep, type Json } from '../helpers/quotes.ts';
import { freshStore } from '../security/support/stores.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_SECOND: '100000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());

const now = () => clock.seconds();
const pub = (token: string, action: 'accept' | 'decline', payload: object) =>
  app.inject({ method: 'POST', url: `/v1/public/quotes/${token}/${action}`, payload, remoteAddress: '203.0.113.9' });

/** The quote's expiry jobs that will still run. */
const waiting = async (q: Json) => (await app.services.database.db.selectFrom('jobs').select(['run_at', 'payload', 'status'])
  .where('schedule_key', '=', `quote.expiry:${q.id}`).where('status', 'in', ['queued', 'failed']).execute())
  .map((j) => ({ ...j, run_at: Number(j.run_at) }));

async function eventually<T>(what: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await what();
    if (done(v) || Date.now() > deadline) return v;
    await sleep(25);
  }
}

describe('a quote\'s expiry job', () => {
  it('is scheduled by the send, replaced by a new send, cancelled by a revision, a void or an answer', async () => {
    const t = await tenant(app);
    const q = await sentQuote(t.live, { valid_until: now() + 3600 });
    expect(await waiting(q)).toEqual([{ run_at: (q.valid_until + 1) * 1000, payload: JSON.stringify({ quote_id: q.id }), status: 'queued' }]);
    expect(await waiting(await sentQuote(t.live))).toEqual([]); // no date, no expiry

    await ok(t.live.post(`/v1/quotes/${q.id}/edit-as-draft`));
    expect(await waiting(q)).toEqual([]);
    const later = now() + 7200;
    await ok(t.live.patch(`/v1/quotes/${q.id}`, { valid_until: later }));
    await ok(t.live.post(`/v1/quotes/${q.id}/send`));
    expect((await waiting(q)).map((j) => j.run_at)).toEqual([(later + 1) * 1000]);
    await ok(t.live.post(`/v1/quotes/${q.id}/void`));
    expect(await waiting(q)).toEqual([]);

    const accepted = await sentQuote(t.live, { valid_until: now() + 3600 });
    await ok(pub(accepted.public_token, 'accept', { name: 'Ada Lovelace' }));
    const declined = await sentQuote(t.live, { valid_until: now() + 3600 });
    await ok(pub(declined.public_token, 'decline', {}));
    expect([...await waiting(accepted), ...await waiting(declined)]).toEqual([]);
  });

  it('records the expiry of its quote once the date has passed, and of no other', async () => {
    const t = await tenant(app);
    const until = now() + 600;
    const lapsing = await sentQuote(t.live, { valid_until: until });
    const answered = await sentQuote(t.live, { valid_until: until });
    await ok(pub(answered.public_token, 'accept', { name: 'Ada Lovelace' }));
    const later = await sentQuote(t.live, { valid_until: until + 3600 });
    clock.set(until + 1);
    // The app's workers run the job once its time has come.
    const events = await eventually(() => eventsOf(t.live, 'quote.expired'), (e) => e.length > 0);
    expect(events.map((e: Json) => e.data.object.id)).toEqual([lapsing.id]);
    expect(await waiting(lapsing)).toEqual([]);
    expect((await ok(t.live.get(`/v1/quotes/${answered.id}`))).status).toBe('accepted');
    expect((await ok(t.live.get(`/v1/quotes/${later.id}`))).status).toBe('sent');
    expect((await waiting(later)).length).toBe(1);
  });
});

describe('the migration to scheduled expiry', () => {
  it('gives each quote waiting for an answer with a date its job, and drops the sweep\'s', async () => {
    const store = await freshStore('quote_expiry');
    const at = now();
    const org = 'org_01JLEGACY0000000000000000';
    const quote = (n: number) => `quo_01JLEGACY000000000000000${n}`;
    try {
      const before = openDatabase(store.url);
      try {
        const migrator = new Migrator({ db: before.db, provider: { getMigrations: async () => migrations(before) }, allowUnorderedMigrations: true });
        expect((await migrator.migrateTo('0020-jobs-by-organization')).error).toBeUndefined();
        await sql`insert into organizations (id, name, is_agency, created_at) values (${org}, 'Legacy Engines', 0, ${at})`.execute(before.db);
        const rows: Array<[number, string, number | null]> = [[1, 'sent', at + 3600], [2, 'viewed', at - 60], [3, 'sent', null], [4, 'accepted', at + 3600], [5, 'draft', at + 3600]];
        for (const [n, status, validUntil] of rows) {
          await sql`insert into quotes (org_id, mode, id, number, title, currency, line_items, tax_percent, subtotal, discount_total, tax_total, total, valid_until, status, revision, created_at, updated_at)
            values (${org}, 'live', ${quote(n)}, ${`Q-000${n}`}, 'Legacy plan', 'USD', '[]', 0, 1000, 0, 0, 1000, ${validUntil}, ${status}, 1, ${at}, ${at})`.execute(before.db);
        }
        await sql`insert into jobs (org_id, mode, id, kind, payload, status, run_at, attempts, max_attempts, created_at, updated_at)
          values ('', 'live', ${`sch_quotes.expire_${at}`}, 'quotes.expire', '{}', 'queued', ${at * 1000}, 0, 5, ${at * 1000}, ${at * 1000})`.execute(before.db);
      } finally {
        await before.close();
      }

      const migrated = await buildApp({ config: loadConfig({ DATABASE_URL: store.url, DATABASE_POOL_SIZE: '2', LOG_LEVEL: 'silent', WORKERS: 'off', ...DELIVERY_ENV }), clock });
      try {
        await migrated.ready();
        const jobs = await migrated.services.database.db.selectFrom('jobs').select(['org_id', 'kind', 'payload', 'run_at', 'schedule_key', 'status']).orderBy('schedule_key').execute();
        expect(jobs.map((j) => ({ ...j, run_at: Number(j.run_at) }))).toEqual([1, 2].map((n) => ({
          org_id: org, kind: 'quotes.expire', payload: JSON.stringify({ quote_id: quote(n) }), status: 'queued',
          run_at: ((n === 1 ? at + 3600 : at - 60) + 1) * 1000, schedule_key: `quote.expiry:${quote(n)}`,
        })));
      } finally {
        await migrated.close();
      }
    } finally {
      await store.drop();
    }
  });
});
