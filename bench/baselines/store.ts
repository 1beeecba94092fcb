// The store of baselines (c) and (d): the same database as the service, opened the way the service
// opens it (the same SQLite pragmas; a pg pool of the same size with named prepared statements),
// but used directly: one prepared statement per request, no query builder.
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { CREATION_LAG_SECONDS, firstIdAt } from '../../src/platform/ids.ts';

export interface BareStore {
  /** One live contact of `org` by id, on the primary key (org_id, mode, id) as the service reads it. */
  getContact(org: string, id: string): Promise<Record<string, unknown> | undefined>;
  insertContact(row: Record<string, unknown>): Promise<void>;
  /** Live contacts of `org` created in [after, before), newest first: the page of baseline (e). */
  createdPage(org: string, after: number, before: number, limit: number): Promise<Array<Record<string, unknown>>>;
  /** Their exact number. */
  createdCount(org: string, after: number, before: number): Promise<number>;
}

const CREATED = "org_id = ? and mode = 'live' and created_at >= ? and created_at < ?";
// The page walks the key over the ids records created in the window can have, as the service's does.
const PAGE = `select * from contacts where ${CREATED} and id >= ? and id < ? order by id desc limit ?`;
const pageValues = (org: string, after: number, before: number, limit: number) =>
  [org, after, before, firstIdAt('con', after * 1000), firstIdAt('con', (before + CREATION_LAG_SECONDS) * 1000), limit];

const COLUMNS = ['id', 'org_id', 'mode', 'list_id', 'name', 'first_name', 'last_name', 'title', 'company', 'company_id', 'work_email', 'email_domain',
  'personal_email', 'phone', 'linkedin_url', 'city', 'country', 'seniority', 'department', 'tags', 'created_at', 'updated_at'];

export function openBareStore(url: string): BareStore {
  if (url.startsWith('sqlite:')) {
    const db = new DatabaseSync(url.slice('sqlite:'.length), { timeout: 10_000 });
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = FULL');
    db.exec('PRAGMA foreign_keys = ON');
    db.exec('PRAGMA temp_store = MEMORY');
    db.exec('PRAGMA cache_size = -32768');
    const get = db.prepare("select * from contacts where org_id = ? and mode = 'live' and id = ?");
    const insert = db.prepare(`insert into contacts (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`);
    const page = db.prepare(PAGE);
    const count = db.prepare(`select count(*) as n from contacts where ${CREATED}`);
    return {
      createdPage: async (org, after, before, limit) => page.all(...pageValues(org, after, before, limit)) as Array<Record<string, unknown>>,
      createdCount: async (org, after, before) => Number((count.get(org, after, before) as { n: number }).n),
      getContact: async (org, id) => get.get(org, id) as Record<string, unknown> | undefined,
      insertContact: async (row) => {
        insert.run(...(COLUMNS.map((c) => row[c] ?? null) as never[]));
      },
    };
  }
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const insertText = `insert into contacts (${COLUMNS.join(', ')}) values (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;
  const numbered = (text: string) => { let k = 0; return text.replace(/\?/g, () => `$${++k}`); };
  return {
    createdPage: async (org, after, before, limit) =>
      (await pool.query({ name: 'created_page', text: numbered(PAGE), values: pageValues(org, after, before, limit) })).rows,
    createdCount: async (org, after, before) =>
      Number((await pool.query({ name: 'created_count', text: numbered(`select count(*) as n from contacts where ${CREATED}`), values: [org, after, before] })).rows[0].n),
    getContact: async (org, id) => (await pool.query({ name: 'get_contact', text: "select * from contacts where org_id = $1 and mode = 'live' and id = $2", values: [org, id] })).rows[0],
    insertContact: async (row) => {
      await pool.query({ name: 'insert_contact', text: insertText, values: COLUMNS.map((c) => row[c] ?? null) });
    },
  };
}
