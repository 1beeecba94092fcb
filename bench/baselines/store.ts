// The store of baselines (c) and (d): the same database as the service, opened the way the service
// opens it (the same SQLite pragmas; a pg pool of the same size with named prepared statements),
// but used directly: one prepared statement per request, no query builder.
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';

export interface BareStore {
  getContact(id: string): Promise<Record<string, unknown> | undefined>;
  insertContact(row: Record<string, unknown>): Promise<void>;
}

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
    const get = db.prepare('select * from contacts where id = ?');
    const insert = db.prepare(`insert into contacts (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`);
    return {
      getContact: async (id) => get.get(id) as Record<string, unknown> | undefined,
      insertContact: async (row) => {
        insert.run(...(COLUMNS.map((c) => row[c] ?? null) as never[]));
      },
    };
  }
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const insertText = `insert into contacts (${COLUMNS.join(', ')}) values (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;
  return {
    getContact: async (id) => (await pool.query({ name: 'get_contact', text: 'select * from contacts where id = $1', values: [id] })).rows[0],
    insertContact: async (row) => {
      await pool.query({ name: 'insert_contact', text: insertText, values: COLUMNS.map((c) => row[c] ?? null) });
    },
  };
}
