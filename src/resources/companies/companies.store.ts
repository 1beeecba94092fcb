// Companies. A company with a domain is linked to the tenant's contacts whose work e-mail has that
// domain: contacts link themselves on their writes, and a company's writes (re)link the contacts of
// its domain, so `company_id` agrees from both sides. `contact_count` is read, not stored:
// one grouped count per page on the contacts_company_id index.
import type { Kysely, Selectable } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import { containsInsensitive, parseJson } from '../../db/sql.ts';
import { conflict, notFound, validationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { Scope } from '../../platform/scope.ts';
import { readCounter, type WriteContext } from '../../platform/write.ts';
import { previous } from '../lists/lists.store.ts';
import type { Company, CompanyCreate, CompanyQuery, CompanyUpdate } from './companies.schemas.ts';
import { normalizeDomain } from './domain.ts';

type Row = Selectable<DB['companies']>;

export const COMPANY_NOT_FOUND = 'Company not found';

const toCompany = (r: Row, contactCount: number): Company => ({
  id: r.id, name: r.name, domain: r.domain, industry: r.industry,
  employee_count: r.employee_count === null ? null : Number(r.employee_count),
  annual_revenue: r.annual_revenue === null ? null : Number(r.annual_revenue),
  city: r.city, country: r.country, linkedin_url: r.linkedin_url, description: r.description,
  tags: parseJson<string[]>(r.tags), contact_count: contactCount,
  created_at: Number(r.created_at), updated_at: Number(r.updated_at),
});

/** The API form of rows, with `contact_count` counted for all of them at once. */
export async function toCompanies(db: Kysely<DB>, scope: Scope, rows: Row[]): Promise<Company[]> {
  if (rows.length === 0) return [];
  const counts = await db.selectFrom('contacts').select((eb) => ['company_id', eb.fn.countAll<number>().as('n')])
    .where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('company_id', 'in', rows.map((r) => r.id))
    .groupBy('company_id').execute();
  const byId = new Map(counts.map((c) => [c.company_id, Number(c.n)]));
  return rows.map((r) => toCompany(r, byId.get(r.id) ?? 0));
}

const scoped = (db: Kysely<DB>, scope: Scope) =>
  db.selectFrom('companies').where('companies.org_id', '=', scope.orgId).where('companies.mode', '=', scope.mode);

export async function findCompany(db: Kysely<DB>, scope: Scope, id: string): Promise<Row> {
  const row = await scoped(db, scope).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(COMPANY_NOT_FOUND);
  return row;
}

function filtered(db: Kysely<DB>, dialect: Dialect, scope: Scope, query: CompanyQuery) {
  let q = scoped(db, scope);
  if (query.name !== undefined) q = q.where(containsInsensitive(dialect, 'name', query.name));
  // Text that is no domain matches no company, as stored domains are all normalized.
  if (query.domain !== undefined) q = q.where('domain', '=', normalizeDomain(query.domain) ?? query.domain);
  if (query.industry !== undefined) q = q.where('industry', '=', query.industry);
  if (query.country !== undefined) q = q.where('country', '=', query.country);
  if (query.min_employees !== undefined) q = q.where('employee_count', '>=', query.min_employees);
  if (query.max_employees !== undefined) q = q.where('employee_count', '<=', query.max_employees);
  return q;
}

export function listCompanies(db: Kysely<DB>, dialect: Dialect, scope: Scope, query: CompanyQuery, page: PageRequest): Promise<Row[]> {
  let q = filtered(db, dialect, scope, query).selectAll();
  if (page.after !== undefined) q = q.where('id', '<', String(page.after));
  return q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute();
}

const FILTERS = ['name', 'domain', 'industry', 'country', 'min_employees', 'max_employees'] as const;

/** The exact number of companies matching the query; the unfiltered total is a maintained counter. */
export async function countCompanies(db: Kysely<DB>, dialect: Dialect, scope: Scope, query: CompanyQuery): Promise<number> {
  if (FILTERS.every((f) => query[f] === undefined)) return readCounter(db, scope, 'companies');
  const row = await filtered(db, dialect, scope, query).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The normalized domain of a body, or a 422 naming the field. */
function domainOf(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  const domain = normalizeDomain(value);
  if (!domain) throw validationError([{ loc: ['body', 'domain'], msg: 'value is not a valid domain', type: 'value_error.domain' }]);
  return domain;
}

async function holderOf(w: WriteContext, domain: string): Promise<string | undefined> {
  return (await scoped(w.tx, w.scope).select('id').where('domain', '=', domain).executeTakeFirst())?.id;
}

const domainTaken = (domain: string, holder: string | undefined) =>
  conflict(holder ? `Domain ${domain} already belongs to company ${holder}` : `Domain ${domain} already belongs to another company`);

/** Points the contacts of `domain` at the company, after unlinking those it had. */
async function relinkContacts(w: WriteContext, companyId: string, domain: string | null, hadContacts: boolean): Promise<void> {
  const contacts = () => w.tx.updateTable('contacts').where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode);
  if (hadContacts) await contacts().set({ company_id: null }).where('company_id', '=', companyId).execute();
  if (domain) await contacts().set({ company_id: companyId }).where('email_domain', '=', domain).execute();
}

export async function createCompany(w: WriteContext, input: CompanyCreate): Promise<Company> {
  const row: Row = {
    id: newId('cmp'), org_id: w.scope.orgId, mode: w.scope.mode, name: input.name, domain: domainOf(input.domain),
    industry: input.industry ?? null, employee_count: input.employee_count ?? null, annual_revenue: input.annual_revenue ?? null,
    city: input.city ?? null, country: input.country ?? null, linkedin_url: input.linkedin_url ?? null,
    description: input.description ?? null, tags: JSON.stringify(input.tags ?? []), created_at: w.now, updated_at: w.now,
  };
  // The unique index decides between concurrent creators of one domain; the loser names the winner.
  const inserted = await w.tx.insertInto('companies').values(row)
    .onConflict((oc) => oc.columns(['org_id', 'mode', 'domain']).where('domain', 'is not', null).doNothing())
    .returning('id').executeTakeFirst();
  if (!inserted) throw domainTaken(row.domain!, await holderOf(w, row.domain!));
  await relinkContacts(w, row.id, row.domain, false);
  w.count('companies', 1);
  const [company] = await toCompanies(w.tx, w.scope, [row]);
  w.emit('company.created', company);
  return company;
}

export async function updateCompany(w: WriteContext, id: string, input: CompanyUpdate): Promise<Company> {
  const before = await findCompany(w.tx, w.scope, id);
  const changes = { ...input, updated_at: w.now } as Partial<Row>;
  if (input.tags !== undefined) changes.tags = JSON.stringify(input.tags);
  let domainChanged = false;
  if (input.domain !== undefined) {
    changes.domain = domainOf(input.domain);
    domainChanged = changes.domain !== before.domain;
    const holder = domainChanged && changes.domain ? await holderOf(w, changes.domain) : undefined;
    if (holder) throw domainTaken(changes.domain!, holder);
  }
  await w.tx.updateTable('companies').set(changes).where('id', '=', id).where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).execute();
  const [old] = await toCompanies(w.tx, w.scope, [before]);
  if (domainChanged) await relinkContacts(w, id, changes.domain ?? null, old.contact_count > 0);
  const [company] = await toCompanies(w.tx, w.scope, [{ ...before, ...changes }]);
  w.emit('company.updated', company, previous(old, input));
  return company;
}

export async function deleteCompany(w: WriteContext, id: string): Promise<{ id: string; deleted: true }> {
  const before = await findCompany(w.tx, w.scope, id);
  const [company] = await toCompanies(w.tx, w.scope, [before]);
  await w.tx.deleteFrom('companies').where('id', '=', id).where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).execute();
  if (company.contact_count > 0) await relinkContacts(w, id, null, true);
  w.count('companies', -1);
  w.emit('company.deleted', company);
  return { id, deleted: true };
}
