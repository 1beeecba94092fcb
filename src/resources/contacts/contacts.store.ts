// Contacts. Each belongs to a list of type contacts or leads (whose member_count moves with it) and
// is linked to the company whose domain matches its work e-mail. `suppressed` is read, not stored:
// one indexed lookup per page against the tenant's suppression entries.
import { sql, type Kysely, type Selectable, type SqlBool } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import { statement } from '../../db/prepared.ts';
import { containsInsensitive, jsonArrayHas, parseJson } from '../../db/sql.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { Scope } from '../../platform/scope.ts';
import { readCounter, type WriteContext } from '../../platform/write.ts';
import { CONTACT_LIST_TYPES } from '../lists/lists.schemas.ts';
import { LIST_NOT_FOUND, previous } from '../lists/lists.store.ts';
import type { Contact, ContactCreate, ContactQuery, ContactUpdate } from './contacts.schemas.ts';

type Row = Selectable<DB['contacts']>;

export const CONTACT_NOT_FOUND = 'Contact not found';

const domainOf = (email: string | null | undefined) => (email ? email.slice(email.lastIndexOf('@') + 1) : null);
const lower = (email: string | null | undefined) => (email == null ? email : email.trim().toLowerCase());

function toContact(r: Row, suppressed: boolean): Contact {
  return {
    id: r.id, list_id: r.list_id, name: r.name, first_name: r.first_name, last_name: r.last_name, title: r.title,
    company: r.company, company_id: r.company_id, work_email: r.work_email, personal_email: r.personal_email,
    phone: r.phone, linkedin_url: r.linkedin_url, city: r.city, country: r.country, seniority: r.seniority,
    department: r.department, tags: parseJson<string[]>(r.tags), suppressed,
    created_at: Number(r.created_at), updated_at: Number(r.updated_at),
  };
}

/** What a suppression entry must equal to suppress these addresses: each address and its domain. */
function suppressionProbes(emails: Array<string | null>): Set<string> {
  const probes = new Set<string>();
  for (const email of emails) {
    if (email) {
      probes.add(email);
      probes.add(domainOf(email)!);
    }
  }
  return probes;
}

/** The API form of rows, with `suppressed` looked up for all of them at once. */
export async function toContacts(db: Kysely<DB>, scope: Scope, rows: Row[]): Promise<Contact[]> {
  if (rows.length === 0) return [];
  const probes = suppressionProbes(rows.flatMap((r) => [r.work_email, r.personal_email]));
  const hits = probes.size === 0 ? new Set<string>() : new Set((await db.selectFrom('list_entries').select('value')
    .where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('value', 'in', [...probes]).execute()).map((e) => e.value));
  const isSuppressed = (email: string | null) => email !== null && (hits.has(email) || hits.has(domainOf(email)!));
  return rows.map((r) => toContact(r, isSuppressed(r.work_email) || isSuppressed(r.personal_email)));
}

// The part of an address after its last '@' (what domainOf computes), in each store's SQL.
const DOMAIN_SQL = {
  sqlite: (c: string) => `replace(${c}, rtrim(${c}, replace(${c}, '@', '')), '')`,
  postgres: (c: string) => `split_part(${c}, '@', -1)`,
};
const suppressedBy = (value: string) => `exists (select 1 from list_entries e where e.org_id = c.org_id and e.mode = c.mode and e.value = ${value})`;
// An address that is absent costs no probe.
const addressSuppressed = (address: string, domain: string) => `(${address} is not null and (${suppressedBy(address)} or ${suppressedBy(domain)}))`;
const readSql = (domain: (c: string) => string) => `select c.*,
  (${addressSuppressed('c.work_email', 'c.email_domain')} or ${addressSuppressed('c.personal_email', domain('c.personal_email'))}) as suppressed
  from contacts c where c.id = ? and c.org_id = ? and c.mode = ?`;
// Reading one contact is the hottest path: one fixed statement answers the row and its `suppressed`
// together (the rule of toContacts: an address or its domain is on a suppression list; email_domain
// is the stored domain of work_email), so it costs one query and, on PostgreSQL, one round trip.
// One index probe per value is cheaper than an IN list built per row.
const READ_CONTACT = statement<Row & { suppressed: number | boolean }>({ sqlite: readSql(DOMAIN_SQL.sqlite), postgres: readSql(DOMAIN_SQL.postgres) });

/** The API form of one contact; 404 when the tenant has no contact with this id. */
export async function readContact(db: Kysely<DB>, dialect: Dialect, scope: Scope, id: string): Promise<Contact> {
  const row = await READ_CONTACT.first(db, dialect, [id, scope.orgId, scope.mode]);
  if (!row) throw notFound(CONTACT_NOT_FOUND);
  return toContact(row, Boolean(row.suppressed));
}

const scoped = (db: Kysely<DB>, scope: Scope) =>
  db.selectFrom('contacts').where('contacts.org_id', '=', scope.orgId).where('contacts.mode', '=', scope.mode);

export async function findContact(db: Kysely<DB>, scope: Scope, id: string): Promise<Row> {
  const row = await scoped(db, scope).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(CONTACT_NOT_FOUND);
  return row;
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

async function titleIndexUsable(db: Kysely<DB>, dialect: Dialect, scope: Scope, title: string | undefined): Promise<number | false> {
  if (dialect !== 'sqlite' || title === undefined || [...title].length < 3) return false;
  const size = await readCounter(db, scope, 'contacts');
  return size > TITLE_SCAN_MAX ? size : false;
}

/**
 * The tenant's contacts matching the query. `byTitleIndex` starts from the title index's
 * candidates: the tenant's own indexes are switched off (unary +) so the planner cannot prefer them.
 */
function filtered(db: Kysely<DB>, dialect: Dialect, scope: Scope, query: ContactQuery, byTitleIndex = false) {
  let q = byTitleIndex
    ? db.selectFrom('contacts').where(sql`+contacts.org_id`, '=', scope.orgId).where(sql`+contacts.mode`, '=', scope.mode)
      .where(sql<SqlBool>`contacts.rowid in (select rowid from contacts_title_fts where contacts_title_fts match ${titlePhrase(query.title!)})`)
    : scoped(db, scope);
  if (query.list_id !== undefined) q = q.where('list_id', '=', query.list_id);
  if (query.company !== undefined) q = q.where('company', '=', query.company);
  if (query.work_email !== undefined) q = q.where('work_email', '=', query.work_email.trim().toLowerCase());
  if (query.title !== undefined) q = q.where(containsInsensitive(dialect, 'title', query.title));
  if (query.tag !== undefined) q = q.where(jsonArrayHas(dialect, 'tags', query.tag));
  if (query.created_after !== undefined) q = q.where('created_at', '>=', query.created_after);
  if (query.created_before !== undefined) q = q.where('created_at', '<', query.created_before);
  return q;
}

/**
 * One page, newest first. With a title filter on a large tenant, `total` (the exact number of
 * matches) picks the cheaper path: reading all matches from the index costs about one row each;
 * scanning the tenant newest first costs about (offset + take) / selectivity rows.
 */
export async function listContacts(db: Kysely<DB>, dialect: Dialect, scope: Scope, query: ContactQuery, page: PageRequest, total?: () => Promise<number>): Promise<Row[]> {
  const size = total ? await titleIndexUsable(db, dialect, scope, query.title) : false;
  const matches = size === false ? 0 : await total!();
  if (size !== false && matches * matches < (page.offset + page.take) * size) {
    let ids = filtered(db, dialect, scope, query, true).select('contacts.id');
    if (page.after !== undefined) ids = ids.where('contacts.id', '<', String(page.after));
    ids = ids.orderBy('contacts.id', 'desc').limit(page.take).offset(page.offset);
    return db.selectFrom('contacts').selectAll().where('id', 'in', ids).orderBy('id', 'desc').execute();
  }
  let q = filtered(db, dialect, scope, query).selectAll();
  if (page.after !== undefined) q = q.where('id', '<', String(page.after));
  return q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute();
}

const FILTERS = ['title', 'list_id', 'company', 'work_email', 'tag', 'created_after', 'created_before'] as const;

/**
 * The exact number of contacts matching the query. Unfiltered and by-list totals are maintained
 * counters (constant time at any size); other filters count the rows their index yields.
 */
export async function countContacts(db: Kysely<DB>, dialect: Dialect, scope: Scope, query: ContactQuery): Promise<number> {
  const used = FILTERS.filter((f) => query[f] !== undefined);
  if (used.length === 0) return readCounter(db, scope, 'contacts');
  if (used.length === 1 && used[0] === 'list_id') {
    const list = await db.selectFrom('lists').select(['member_count', 'type']).where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('id', '=', query.list_id!).executeTakeFirst();
    return list && CONTACT_LIST_TYPES.includes(list.type) ? Number(list.member_count) : 0;
  }
  const byTitleIndex = (await titleIndexUsable(db, dialect, scope, query.title)) !== false;
  const row = await filtered(db, dialect, scope, query, byTitleIndex).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Checks that a list can hold contacts. */
async function requireContactList(w: WriteContext, listId: string): Promise<void> {
  const list = await w.tx.selectFrom('lists').select('type').where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).where('id', '=', listId).executeTakeFirst();
  if (!list) throw notFound(LIST_NOT_FOUND);
  if (!CONTACT_LIST_TYPES.includes(list.type)) throw badRequest(`Contacts can only be on lists of type ${CONTACT_LIST_TYPES.join(' or ')}`);
}

const membersMoved = (w: WriteContext, listId: string, delta: number) =>
  w.tx.updateTable('lists').set((eb) => ({ member_count: eb('member_count', '+', delta) }))
    .where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).where('id', '=', listId);

async function moveMembers(w: WriteContext, listId: string, delta: number): Promise<void> {
  await membersMoved(w, listId, delta).execute();
}

/** The company of the tenant with this domain, which a contact with a matching e-mail links to. */
async function companyFor(w: WriteContext, domain: string | null): Promise<string | null> {
  if (!domain) return null;
  const company = await w.tx.selectFrom('companies').select('id').where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).where('domain', '=', domain).executeTakeFirst();
  return company?.id ?? null;
}

const deriveName = (first: string | null | undefined, last: string | null | undefined) => [first, last].filter(Boolean).join(' ') || null;

/**
 * Creating a contact reads what it depends on in one statement (the list's type, the company with
 * the e-mail's domain, whether an address is suppressed) and queues its two writes to run with the
 * write's events: on PostgreSQL the whole create is two round trips.
 */
export async function createContact(w: WriteContext, input: ContactCreate): Promise<Contact> {
  const { orgId, mode } = w.scope;
  const workEmail = lower(input.work_email) ?? null;
  const personalEmail = lower(input.personal_email) ?? null;
  const domain = domainOf(workEmail);
  const probes = [...suppressionProbes([workEmail, personalEmail])];
  const found = await w.tx.selectNoFrom((eb) => [
    eb.selectFrom('lists').select('type').where('org_id', '=', orgId).where('mode', '=', mode).where('id', '=', input.list_id).as('list_type'),
    // Without a work e-mail, '' (a domain no company has) finds none.
    eb.selectFrom('companies').select('id').where('org_id', '=', orgId).where('mode', '=', mode).where('domain', '=', domain ?? '').as('company_id'),
    sql<SqlBool>`${probes.length === 0 ? sql`0 = 1` : eb.exists(eb.selectFrom('list_entries').select('value')
      .where('org_id', '=', orgId).where('mode', '=', mode).where('value', 'in', probes))}`.as('suppressed'),
  ]).executeTakeFirstOrThrow();
  if (found.list_type === null) throw notFound(LIST_NOT_FOUND);
  if (!CONTACT_LIST_TYPES.includes(found.list_type)) throw badRequest(`Contacts can only be on lists of type ${CONTACT_LIST_TYPES.join(' or ')}`);
  const row: Row = {
    id: newId('con'), org_id: orgId, mode, list_id: input.list_id,
    name: input.name ?? deriveName(input.first_name, input.last_name), first_name: input.first_name ?? null, last_name: input.last_name ?? null,
    title: input.title ?? null, company: input.company ?? null, company_id: found.company_id,
    work_email: workEmail, email_domain: domain, personal_email: personalEmail,
    phone: input.phone ?? null, linkedin_url: input.linkedin_url ?? null, city: input.city ?? null, country: input.country ?? null,
    seniority: input.seniority ?? null, department: input.department ?? null, tags: JSON.stringify(input.tags ?? []),
    created_at: w.now, updated_at: w.now,
  };
  w.later(w.tx.insertInto('contacts').values(row));
  w.later(membersMoved(w, input.list_id, 1));
  w.count('contacts', 1);
  const contact = toContact(row, Boolean(found.suppressed));
  w.emit('contact.created', contact);
  return contact;
}

export async function updateContact(w: WriteContext, id: string, input: ContactUpdate): Promise<Contact> {
  const before = await findContact(w.tx, w.scope, id);
  const changes: Partial<Row> = { ...input, tags: input.tags === undefined ? undefined : JSON.stringify(input.tags) } as Partial<Row>;
  if (input.list_id !== undefined && input.list_id !== before.list_id) {
    await requireContactList(w, input.list_id);
    await moveMembers(w, before.list_id, -1);
    await moveMembers(w, input.list_id, 1);
  }
  if (input.work_email !== undefined) {
    changes.work_email = lower(input.work_email) ?? null;
    changes.email_domain = domainOf(changes.work_email);
    changes.company_id = await companyFor(w, changes.email_domain);
  }
  if (input.personal_email !== undefined) changes.personal_email = lower(input.personal_email) ?? null;
  if (input.tags === undefined) delete changes.tags;
  changes.updated_at = w.now;
  await w.tx.updateTable('contacts').set(changes).where('id', '=', id).where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).execute();
  const [[old], [contact]] = await Promise.all([toContacts(w.tx, w.scope, [before]), toContacts(w.tx, w.scope, [{ ...before, ...changes }])]);
  w.emit('contact.updated', contact, previous(old, input));
  return contact;
}

export async function deleteContact(w: WriteContext, id: string): Promise<{ id: string; deleted: true }> {
  const before = await findContact(w.tx, w.scope, id);
  await w.tx.deleteFrom('contacts').where('id', '=', id).where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).execute();
  await moveMembers(w, before.list_id, -1);
  w.count('contacts', -1);
  const [contact] = await toContacts(w.tx, w.scope, [before]);
  w.emit('contact.deleted', contact);
  return { id, deleted: true };
}
