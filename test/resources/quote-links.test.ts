// Public quote links are stored as the SHA-256 of their token: the store never holds the token (so a
// copy of it opens no quote, not even with the stored hash as the token), the send answers it once
// and nothing else shows it, the link still opens the quote, and links stored by an earlier version
// (the token itself) are hashed in place by the migration, on both stores.
import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrations } from '../../src/db/migrate.ts';
import { DELIVERY_ENV, tenant, testApp } from '../helpers/app.ts';
import { eventsOf, ok, sentQuote } from '../helpers/quotes.ts';
import { freshStore } from '../security/support/stores.ts';

const LIMITS = { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_SECOND: '100000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' };
const app = await testApp({ env: LIMITS });
afterAll(() => app.close());

const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');
const view = (token: string) => app.inject({ method: 'GET', url: `/v1/public/quotes/${token}` });

describe('public quote links', () => {
  it('are stored as the hash of their token, shown by the send only, and still open the quote', async () => {
    const t = await tenant(app);
    const sent = await sentQuote(t.live);
    const token = sent.public_token as string;
    expect(token).toMatch(/^[\w-]{43}$/);

    const db = app.services.database.db;
    const links = await db.selectFrom('quote_links').selectAll().where('quote_id', '=', sent.id).execute();
    expect(links).toHaveLength(1);
    expect(links[0].token_hash).toBe(sha256(token));
    // No column of the link or of the quote holds the token.
    const quoteRow = await db.selectFrom('quotes').selectAll().where('id', '=', sent.id).executeTakeFirstOrThrow();
    for (const row of [links[0], quoteRow]) expect(JSON.stringify(Object.values(row))).not.toContain(token);

    // Reads, listings, searches and events never show it.
    expect((await ok(t.live.get(`/v1/quotes/${sent.id}`))).public_token).toBeNull();
    for (const url of ['/v1/quotes', `/v1/contacts/${sent.contact_id}/quotes`, '/v1/events?limit=200']) {
      const res = await t.live.get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).not.toContain(token);
    }
    const searched = await t.live.post('/v1/search/quotes', { q: 'Team' });
    expect(searched.statusCode).toBe(200);
    expect(searched.body).not.toContain(token);
    const [event] = await eventsOf(t.live, 'quote.sent');
    expect(event.data.object).toMatchObject({ id: sent.id, status: 'sent', public_token: null });

    // The token opens the quote; what the store holds opens nothing.
    expect((await ok(view(token))).number).toBe(sent.number);
    expect((await app.inject({ method: 'GET', url: `/q/${token}` })).statusCode).toBe(200);
    const stolen = await view(links[0].token_hash);
    expect(stolen.statusCode).toBe(404);
    expect(stolen.json()).toEqual({ type: 'not_found', detail: 'Quote not found' });
    expect((await app.inject({ method: 'POST', url: `/v1/public/quotes/${links[0].token_hash}/accept`, payload: { name: 'Mallory' } })).statusCode).toBe(404);
    expect((await ok(t.live.get(`/v1/quotes/${sent.id}`))).status).toBe('viewed');
  });
});

describe('the migration of links stored as their token', () => {
  it('hashes each stored token in place, and the link still opens its quote', async () => {
    const store = await freshStore('quote_links');
    const token = 'Xq3v0sQx2kH1n8bTqR6yWc4dZp7fLm9aJ0eUuVtYiOs';
    const otherToken = 'bW9yZS10aGFuLW9uZS1saW5rLWluLXRoZS1zdG9yZQ';
    const many = Array.from({ length: 1_200 }, () => randomBytes(32).toString('base64url'));
    try {
      // A store as the version before the migration left it, with a sent quote and its link.
      const before = openDatabase(store.url);
      try {
        const migrator = new Migrator({ db: before.db, provider: { getMigrations: async () => migrations(before) }, allowUnorderedMigrations: true });
        const { error } = await migrator.migrateTo('0018-stage-history-names');
        expect(error).toBeUndefined();
        const at = Math.floor(Date.now() / 1000);
        const org = { org_id: 'org_01JLEGACY0000000000000000', mode: 'live' };
        await sql`insert into organizations (id, name, is_agency, created_at) values (${org.org_id}, 'Legacy Engines', 0, ${at})`.execute(before.db);
        for (const [id, number, link] of [['quo_01JLEGACY0000000000000001', 'Q-0001', token], ['quo_01JLEGACY0000000000000002', 'Q-0002', otherToken]]) {
          await sql`insert into quotes (org_id, mode, id, number, title, currency, line_items, tax_percent, subtotal, discount_total, tax_total, total, status, revision, public_token, sent_at, created_at, updated_at)
            values (${org.org_id}, ${org.mode}, ${id}, ${number}, 'Legacy plan', 'USD', '[]', 0, 1000, 0, 0, 1000, 'sent', 1, ${link}, ${at}, ${at}, ${at})`.execute(before.db);
          await sql`insert into quote_links (token, org_id, mode, quote_id, created_at) values (${link}, ${org.org_id}, ${org.mode}, ${id}, ${at})`.execute(before.db);
        }
        // Links enough for more than one batch of the migration (of quotes deleted since, say).
        const rows = many.map((t, i) => sql`(${t}, ${org.org_id}, ${org.mode}, ${`quo_gone${i}`}, ${at})`);
        await sql`insert into quote_links (token, org_id, mode, quote_id, created_at) values ${sql.join(rows)}`.execute(before.db);
      } finally {
        await before.close();
      }

      // The service starts on it: the migration runs.
      const migrated = await buildApp({ config: loadConfig({ DATABASE_URL: store.url, DATABASE_POOL_SIZE: '2', LOG_LEVEL: 'silent', WORKERS: 'off', ...DELIVERY_ENV, ...LIMITS }) });
      try {
        await migrated.ready();
        const db = migrated.services.database.db;
        const links = await db.selectFrom('quote_links').selectAll().where('quote_id', 'like', 'quo_01JLEGACY%').orderBy('quote_id').execute();
        expect(links.map((l) => l.token_hash)).toEqual([sha256(token), sha256(otherToken)]);
        const rest = await db.selectFrom('quote_links').select('token_hash').where('quote_id', 'like', 'quo_gone%').execute();
        expect(new Set(rest.map((l) => l.token_hash))).toEqual(new Set(many.map(sha256)));
        const quotesNow = await db.selectFrom('quotes').selectAll().execute();
        for (const row of [...links, ...quotesNow]) for (const t of [token, otherToken]) expect(JSON.stringify(Object.values(row))).not.toContain(t);

        const opened = await migrated.inject({ method: 'GET', url: `/v1/public/quotes/${token}` });
        expect(opened.statusCode, opened.body).toBe(200);
        expect(opened.json().data).toMatchObject({ number: 'Q-0001', seller: 'Legacy Engines', total: 1000 });
        expect((await migrated.inject({ method: 'GET', url: `/v1/public/quotes/${sha256(token)}` })).statusCode).toBe(404);
      } finally {
        await migrated.close();
      }
    } finally {
      await store.drop();
    }
  });
});
