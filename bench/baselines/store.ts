// The store of baselines (c), (d) and (e): the same database as the service, opened the way the
// service opens it (the same SQLite pragmas; a pg pool of the same size with named prepared
// statements), but used directly: one prepared statement per request, no query builder.
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { CREATION_LAG_SECONDS, firstIdAt } from '../../src/platform/ids.ts';
import { TITLE_SCAN_MAX } from '../../src/resources/contacts/contacts.store.ts';
import { suppressedSql } from '../../src/resources/lists/suppression.ts';

export interface BareStore {
  /** One live contact of `org` by id, on the primary key (org_id, mode, id) as the service reads it. */
  getContact(org: string, id: string): Promise<Record<string, unknown> | undefined>;
  /** The same contact with `suppressed`, by the statement the service runs for it (baseline (g)). */
  getContactSuppressed(org: string, id: string): Promise<Record<string, unknown> | undefined>;
  insertContact(row: Record<string, unknown>): Promise<void>;
  /** Live contacts of `org` created in [after, before), newest first: the page of baseline (e). */
  createdPage(org: string, after: number, before: number, limit: number): Promise<Array<Record<string, unknown>>>;
  /** Their exact number. */
  createdCount(org: string, after: number, before: number): Promise<number>;
  /**
   * Live contacts of `org` (`size` of them) whose title contains `title` (ignoring case), created
   * before `before`: the first page, newest first, and their exact number, by the statements the
   * service runs for `GET /v1/contacts?title=…&created_before=…` (see `list` and `count` in
   * src/resources/contacts/contacts.store.ts, whose choice of path this repeats).
   */
  titledPage(org: string, size: number, title: string, before: number, limit: number): Promise<{ data: Array<Record<string, unknown>>; total: number }>;
  /**
   * Baseline (h): live contacts of `org` whose title contains `word` (ignoring case), created at or
   * after `after`: the page, newest first, and a `count(*)` with the same conditions, issued at once
   * as a data API over PostgreSQL issues them (unnamed statements, each planned for its values, on
   * two connections of the pool), with none of the service's choices of statement.
   */
  peerList(org: string, word: string, after: number, limit: number): Promise<{ data: Array<Record<string, unknown>>; total: number }>;
  /** Live deals of `org` in a pipeline's stage with ids below `before`, newest first: a page reached by a cursor (baseline (f)). */
  dealsPage(org: string, pipelineId: string, stageId: string, before: string, limit: number): Promise<Array<Record<string, unknown>>>;
}

const CREATED = "org_id = ? and mode = 'live' and created_at >= ? and created_at < ?";
// The page walks the key over the ids records created in the window can have, as the service's does.
const PAGE = `select * from contacts where ${CREATED} and id >= ? and id < ? order by id desc limit ?`;
const pageValues = (org: string, after: number, before: number, limit: number) =>
  [org, after, before, firstIdAt('con', after * 1000), firstIdAt('con', (before + CREATION_LAG_SECONDS) * 1000), limit];

// Title contains: LIKE (ILIKE) with the text's wildcards escaped; on SQLite the trigram index's
// candidates first on a large tenant (the tenant's own indexes off, by unary +).
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
const TITLED = "title like ? escape '\\' and created_at < ?";
const BY_TITLE_INDEX = `+contacts.org_id = ? and +contacts.mode = 'live' and contacts.rowid in (select rowid from contacts_title_fts where contacts_title_fts match ?) and ${TITLED}`;
const phrase = (text: string) => `"${text.replace(/"/g, '""')}"`;

// Baseline (h)'s conditions: title contains (LIKE, ILIKE on PostgreSQL) and created_at from a time.
const PEER_WHERE = "org_id = ? and mode = 'live' and title like ? escape '\\' and created_at >= ?";

// The service's keyset page of deals filtered by pipeline and stage, on the index (org_id, mode, pipeline_id, stage_id, id):
// the deals' columns, without the JSON text the service keeps of each (its pages read that instead).
const DEAL_COLUMNS = 'org_id, mode, id, name, amount, currency, pipeline_id, stage_id, status, probability, expected_close_date, closed_at, company_id, owner, source, tags, custom_fields, created_at, updated_at';
const DEALS_PAGE = `select ${DEAL_COLUMNS} from deals where org_id = ? and mode = 'live' and pipeline_id = ? and stage_id = ? and id < ? order by id desc limit ?`;

// A contact and its `suppressed`, as the service reads one (contacts.store.ts).
const withSuppressed = (dialect: 'sqlite' | 'postgres') =>
  `select c.*, ${suppressedSql(dialect)} as suppressed from contacts c where c.id = ? and c.org_id = ? and c.mode = 'live'`;

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
    const getSuppressed = db.prepare(withSuppressed('sqlite'));
    const insert = db.prepare(`insert into contacts (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`);
    const page = db.prepare(PAGE);
    const count = db.prepare(`select count(*) as n from contacts where ${CREATED}`);
    const titledScan = db.prepare(`select * from contacts where org_id = ? and mode = 'live' and ${TITLED} and id < ? order by id desc limit ?`);
    const titledCount = db.prepare(`select count(*) as n from contacts where org_id = ? and mode = 'live' and ${TITLED}`);
    const indexedCount = db.prepare(`select count(*) as n from contacts where ${BY_TITLE_INDEX}`);
    const dealsPage = db.prepare(DEALS_PAGE);
    const indexedPage = db.prepare(`select * from contacts where org_id = ? and mode = 'live' and id in (select contacts.id from contacts where ${BY_TITLE_INDEX} order by contacts.id desc limit ?) order by id desc`);
    const peerPage = db.prepare(`select * from contacts where ${PEER_WHERE} order by id desc limit ?`);
    const peerCount = db.prepare(`select count(*) as n from contacts where ${PEER_WHERE}`);
    return {
      peerList: async (org, word, after, limit) => ({
        data: peerPage.all(org, likePattern(word), after, limit) as Array<Record<string, unknown>>,
        total: Number((peerCount.get(org, likePattern(word), after) as { n: number }).n),
      }),
      titledPage: async (org, size, title, before, limit) => {
        const pattern = likePattern(title);
        const idBound = firstIdAt('con', (before + CREATION_LAG_SECONDS) * 1000);
        if (size <= TITLE_SCAN_MAX || [...title].length < 3) {
          const total = Number((titledCount.get(org, pattern, before) as { n: number }).n);
          return { data: titledScan.all(org, pattern, before, idBound, limit) as Array<Record<string, unknown>>, total };
        }
        const total = Number((indexedCount.get(org, phrase(title), pattern, before) as { n: number }).n);
        const data = total * total < limit * size
          ? indexedPage.all(org, org, phrase(title), pattern, before, limit)
          : titledScan.all(org, pattern, before, idBound, limit);
        return { data: data as Array<Record<string, unknown>>, total };
      },
      dealsPage: async (org, pipelineId, stageId, before, limit) => dealsPage.all(org, pipelineId, stageId, before, limit) as Array<Record<string, unknown>>,
      createdPage: async (org, after, before, limit) => page.all(...pageValues(org, after, before, limit)) as Array<Record<string, unknown>>,
      createdCount: async (org, after, before) => Number((count.get(org, after, before) as { n: number }).n),
      getContact: async (org, id) => get.get(org, id) as Record<string, unknown> | undefined,
      getContactSuppressed: async (org, id) => getSuppressed.get(id, org) as Record<string, unknown> | undefined,
      insertContact: async (row) => {
        insert.run(...(COLUMNS.map((c) => row[c] ?? null) as never[]));
      },
    };
  }
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const insertText = `insert into contacts (${COLUMNS.join(', ')}) values (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;
  const numbered = (text: string) => { let k = 0; return text.replace(/\?/g, () => `$${++k}`); };
  const titled = TITLED.replace('like', 'ilike');
  const titledPageText = numbered(`select * from contacts where org_id = ? and mode = 'live' and ${titled} and id < ? order by id desc limit ?`);
  const titledCountText = numbered(`select count(*) as n from contacts where org_id = ? and mode = 'live' and ${titled}`);
  const peerWhere = PEER_WHERE.replace('like', 'ilike');
  const peerPageText = numbered(`select * from contacts where ${peerWhere} order by id desc limit ?`);
  const peerCountText = numbered(`select count(*) as n from contacts where ${peerWhere}`);
  return {
    peerList: async (org, word, after, limit) => {
      const [page, count] = await Promise.all([
        pool.query(peerPageText, [org, likePattern(word), after, limit]),
        pool.query(peerCountText, [org, likePattern(word), after]),
      ]);
      return { data: page.rows, total: Number(count.rows[0].n) };
    },
    titledPage: async (org, _size, title, before, limit) => {
      const pattern = likePattern(title);
      const idBound = firstIdAt('con', (before + CREATION_LAG_SECONDS) * 1000);
      const [page, count] = await Promise.all([
        pool.query({ name: 'titled_page', text: titledPageText, values: [org, pattern, before, idBound, limit] }),
        pool.query({ name: 'titled_count', text: titledCountText, values: [org, pattern, before] }),
      ]);
      return { data: page.rows, total: Number(count.rows[0].n) };
    },
    dealsPage: async (org, pipelineId, stageId, before, limit) =>
      (await pool.query({ name: 'deals_page', text: numbered(DEALS_PAGE), values: [org, pipelineId, stageId, before, limit] })).rows,
    createdPage: async (org, after, before, limit) =>
      (await pool.query({ name: 'created_page', text: numbered(PAGE), values: pageValues(org, after, before, limit) })).rows,
    createdCount: async (org, after, before) =>
      Number((await pool.query({ name: 'created_count', text: numbered(`select count(*) as n from contacts where ${CREATED}`), values: [org, after, before] })).rows[0].n),
    getContact: async (org, id) => (await pool.query({ name: 'get_contact', text: "select * from contacts where org_id = $1 and mode = 'live' and id = $2", values: [org, id] })).rows[0],
    getContactSuppressed: async (org, id) => (await pool.query({ name: 'get_contact_suppressed', text: numbered(withSuppressed('postgres')), values: [id, org] })).rows[0],
    insertContact: async (row) => {
      await pool.query({ name: 'insert_contact', text: insertText, values: COLUMNS.map((c) => row[c] ?? null) });
    },
  };
}
