// An index for `GET /v1/contacts?title=<text>` (contains, case-insensitive), so that the matches and
// their exact total come from the rows an index yields instead of a scan of the tenant's contacts.
// SQLite: an FTS5 table with the trigram tokenizer over contacts.title (external content: it keeps
// only the index, keyed by the contact's rowid), kept in step by triggers, so every writer of
// contacts maintains it. A VACUUM may renumber the rowids of contacts; run
// `insert into contacts_title_fts(contacts_title_fts) values('rebuild')` after one.
// PostgreSQL: a pg_trgm GIN index, which ILIKE '%…%' uses directly. Where the extension cannot be
// created the migration still succeeds and title search scans, as before.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../database.ts';

export function contactTitleTrigrams(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'sqlite') {
        await sql`create virtual table contacts_title_fts using fts5(title, content='contacts', content_rowid='rowid', tokenize='trigram')`.execute(db);
        await sql`insert into contacts_title_fts(contacts_title_fts) values('rebuild')`.execute(db);
        await sql`create trigger contacts_title_fts_insert after insert on contacts begin
          insert into contacts_title_fts(rowid, title) values (new.rowid, new.title);
        end`.execute(db);
        await sql`create trigger contacts_title_fts_delete after delete on contacts begin
          insert into contacts_title_fts(contacts_title_fts, rowid, title) values ('delete', old.rowid, old.title);
        end`.execute(db);
        await sql`create trigger contacts_title_fts_update after update of title on contacts begin
          insert into contacts_title_fts(contacts_title_fts, rowid, title) values ('delete', old.rowid, old.title);
          insert into contacts_title_fts(rowid, title) values (new.rowid, new.title);
        end`.execute(db);
        return;
      }
      await sql`savepoint pg_trgm`.execute(db);
      try {
        await sql`create extension if not exists pg_trgm`.execute(db);
      } catch {
        await sql`rollback to savepoint pg_trgm`.execute(db);
        return;
      }
      await sql`create index contacts_title_trgm on contacts using gin (title gin_trgm_ops)`.execute(db);
    },
  };
}
