// What contacts do beyond the kernel's CRUD: the list rule (a list of type contacts or leads, whose
// member_count moves with its contacts), the company link by e-mail domain, the phone stored in
// E.164, `suppressed`, the read of one contact in one statement and the title index of large tenants.
import { sql, type Kysely, type SqlBool } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import { statement } from '../../db/prepared.ts';
import type { DB } from '../../db/schema.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import type { Version } from '../../platform/list-cache.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { storePhoneIn } from '../../platform/phone-region.ts';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { hasCustomFilters } from '../../platform/resource/custom-field-values.ts';
import { countMatching, filtered, keysetPage, pageShape, present, rowsOf, selectRow, totalColumn } from '../../platform/resource/store.ts';
import { deleteIn, selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { readCounter, type WriteContext } from '../../platform/write.ts';
import { CONTACT_LIST_TYPES, lists } from '../lists/lists.resource.ts';
import { domainOf, isSuppressed, suppressedAmong, suppressedAmongSql, suppressedSql, suppressionProbes } from '../lists/suppression.ts';
import { createReads } from './contacts.create-reads.ts';
import { contacts } from './contacts.resource.ts';

type Query = Record<string, unknown>;

/** Adds `suppressed` to a page of contacts, with one lookup for all of them. */
export async function enrich(db: Kysely<DB>, scope: Scope, rows: Row[], records: ApiRecord[]): Promise<void> {
  const emails = rows.flatMap((r) => [r.work_email as string | null, r.personal_email as string | null]);
  const hits = await suppressedAmong(db, scope, suppressionProbes(emails));
  rows.forEach((r, i) => {
    records[i].suppressed = isSuppressed(hits, r.work_email as string | null) || isSuppressed(hits, r.personal_email as string | null);
  });
}

// Reading one contact is the hottest path: one fixed statement answers the row and its `suppressed`.
const readSql = (dialect: Dialect) => `select c.*, ${suppressedSql(dialect)} as suppressed from contacts c where c.id = ? and c.org_id = ? and c.mode = ?`;
const READ_CONTACT = statement<Row & { suppressed: number | boolean }>({ sqlite: readSql('sqlite'), postgres: readSql('postgres') });

export async function read(db: Kysely<DB>, dialect: Dialect, scope: Scope, id: string): Promise<ApiRecord> {
  const row = await READ_CONTACT.first(db, dialect, [id, scope.orgId, scope.mode]);
  if (!row) throw notFound(contacts.notFound);
  return (await present(contacts, db, scope, [{ ...row, suppressed: Boolean(row.suppressed) }]))[0];
}

/**
 * SQLite answers `title` (contains) from the trigram index of migration 0002 when that is cheaper
 * than scanning the tenant: the index yields every contact whose title has the text (folding case
 * beyond ASCII too, so a superset), the LIKE filter then keeps exactly what LIKE matches, so results
 * never depend on the path. The index covers every tenant and needs three characters; a tenant of
 * up to TITLE_SCAN_MAX contacts is scanned, which is cheap and never reads other tenants' matches.
 */
export const TITLE_SCAN_MAX = 20_000;
const titlePhrase = (text: string) => `"${text.replace(/"/g, '""')}"`;

async function titleIndexUsable(db: Kysely<DB>, dialect: Dialect, scope: Scope, title: unknown): Promise<number | false> {
  if (dialect !== 'sqlite' || typeof title !== 'string' || [...title].length < 3) return false;
  const size = await readCounter(db, scope, 'contacts');
  return size > TITLE_SCAN_MAX ? size : false;
}

/** The contacts matching the query from the title index's candidates (the tenant's own indexes off, by unary +). */
const byTitleIndex = (db: Kysely<DB>, dialect: Dialect, scope: Scope, query: Query) =>
  filtered(contacts, db, dialect, scope, query, db.selectFrom('contacts')
    .where(sql`+contacts.org_id`, '=', scope.orgId).where(sql`+contacts.mode`, '=', scope.mode)
    .where(sql<SqlBool>`contacts.rowid in (select rowid from contacts_title_fts where contacts_title_fts match ${titlePhrase(query.title as string)})`) as never);

/**
 * One page, newest first. With a title filter on a large tenant, `total` (the exact number of
 * matches) picks the cheaper path: reading all matches from the index costs about one row each;
 * scanning the tenant newest first costs about (offset + take) / selectivity rows. The page is built
 * once per shape (`rowsOf`), as the kernel's are.
 */
export async function list(db: Kysely<DB>, dialect: Dialect, scope: Scope, query: Query, page: PageRequest, total: () => Promise<number>, version?: Version, totalled = false): Promise<Row[]> {
  // Only SQLite reads anything first: elsewhere the page's statement must start before the total is
  // asked for, to read the version (and the total) beside its rows (paginate asks in that order).
  const size = dialect === 'sqlite' ? await titleIndexUsable(db, dialect, scope, query.title) : false;
  const matches = size === false ? 0 : await total();
  const indexed = size !== false && matches * matches < (page.offset + page.take) * size;
  if (indexed) {
    let ids = byTitleIndex(db, dialect, scope, query).select('contacts.id');
    if (page.after !== undefined) ids = ids.where('contacts.id', '<', String(page.after));
    ids = ids.orderBy('contacts.id', 'desc').limit(page.take).offset(page.offset);
    return (await selectIn(db, 'contacts', scope).selectAll().where('id', 'in', ids).orderBy('id', 'desc').execute()) as unknown as Row[];
  }
  // On PostgreSQL, where a statement is a round trip, the page reads beside its rows each contact's
  // `suppressed` (enrich then reads nothing), the version when given, and the total when asked and
  // counted from the rows: one statement for the whole answer of a filter asked the first time.
  const postgres = dialect === 'postgres';
  const counted = version !== undefined && totalled && totalBy(query) === 'rows';
  const build = () => {
    const q = selectRow(contacts, filtered(contacts, db, dialect, scope, query), false, version && scope, counted ? totalColumn(contacts, db, dialect, scope, query) : undefined);
    return keysetPage(contacts, (postgres ? q.select(sql<boolean>`${sql.raw(suppressedAmongSql('contacts'))}`.as('suppressed')) : q) as typeof q, query, page);
  };
  const shape = pageShape(contacts, dialect, scope, query, page, version !== undefined, counted);
  const rows = rowsOf(db, dialect, `contacts${postgres ? ' suppressed' : ''}`, shape, build) as Promise<Row[]>;
  return version ? version.from(rows) : rows;
}

/** How the exact total of a query is known: the tenant's counter, its list's member count, or by counting the rows. */
function totalBy(query: Query): 'counter' | 'list' | 'rows' {
  const used = contacts.resolvedFilters.filter((f) => query[f.param] !== undefined).map((f) => f.param);
  const custom = hasCustomFilters(query);
  if (used.length === 0 && !custom) return 'counter';
  if (used.length === 1 && used[0] === 'list_id' && !custom) return 'list';
  return 'rows';
}

/**
 * The exact number of contacts matching the query. Unfiltered and by-list totals are maintained
 * counters (constant time at any size); other filters count the rows their index yields.
 */
export async function count(db: Kysely<DB>, dialect: Dialect, scope: Scope, query: Query): Promise<number> {
  const by = totalBy(query);
  if (by === 'counter') return readCounter(db, scope, 'contacts');
  if (by === 'list') {
    const row = await selectIn(db, 'lists', scope).select(['member_count', 'type']).where('id', '=', query.list_id as string).executeTakeFirst();
    return row && CONTACT_LIST_TYPES.includes(row.type) ? Number(row.member_count) : 0;
  }
  if ((await titleIndexUsable(db, dialect, scope, query.title)) === false) return countMatching(contacts, db, dialect, scope, query);
  const row = await byTitleIndex(db, dialect, scope, query).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

const notContactList = () => badRequest(`Contacts can only be on lists of type ${CONTACT_LIST_TYPES.join(' or ')}`);

const membersMoved = (w: WriteContext, listId: string, delta: number) => w.move('lists', listId, 'member_count', delta);

const deriveName = (first: unknown, last: unknown) => [first, last].filter(Boolean).join(' ') || null;

/**
 * Creating a contact reads what it depends on (`createReads`) and queues its writes to run with the
 * write's events. On PostgreSQL a create alone costs two round trips (the read, the end); the
 * creates of a group commit's run cost two together (ReadAhead in platform/write.ts).
 */
async function prepareCreate(w: WriteContext, row: Record<string, unknown>, input: Record<string, unknown>): Promise<void> {
  const key = createReads.key(row, input);
  const found = await w.readAhead(createReads, key);
  if (found.list_type === null) throw notFound(lists.notFound);
  if (!CONTACT_LIST_TYPES.includes(found.list_type)) throw notContactList();
  row.name ??= deriveName(row.first_name, row.last_name);
  row.email_domain = key.domain;
  row.company_id = found.company_id;
  row.suppressed = found.suppressed;
  membersMoved(w, row.list_id as string, 1);
}

/** Checks and completes a contact about to be written. */
export async function beforeWrite(w: WriteContext, row: Record<string, unknown>, ctx: { before?: Row; input: Record<string, unknown> }): Promise<void> {
  const { before } = ctx;
  await storePhoneIn(w, row, 'phone');
  if (!before) return prepareCreate(w, row, ctx.input);
  if (row.list_id !== undefined && row.list_id !== before.list_id) {
    const target = await selectIn(w.tx, 'lists', w.scope).select('type').where('id', '=', row.list_id as string).executeTakeFirst();
    if (!target) throw notFound(lists.notFound);
    if (!CONTACT_LIST_TYPES.includes(target.type)) throw notContactList();
    membersMoved(w, before.list_id as string, -1);
    membersMoved(w, row.list_id as string, 1);
  }
  if (row.work_email !== undefined) {
    row.email_domain = domainOf(row.work_email as string | null);
    const company = row.email_domain ? await selectIn(w.tx, 'companies', w.scope).select('id').where('domain', '=', row.email_domain as string).executeTakeFirst() : undefined;
    row.company_id = company?.id ?? null;
  }
}

export async function beforeDelete(w: WriteContext, row: Row): Promise<void> {
  membersMoved(w, row.list_id as string, -1);
  // It leaves every deal it was on. (Written here rather than imported from the deals group, which
  // imports the contacts' definition: the two groups would import each other.)
  await deleteIn(w.tx, 'deal_contacts', w.scope).where('contact_id', '=', row.id).execute();
}

