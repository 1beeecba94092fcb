// What companies do beyond the kernel's CRUD: the normalized domain, the contacts it links, and
// `contact_count`.
import { sql, type Kysely } from 'kysely';
import { dialectOf, type Dialect } from '../../db/database.ts';
import { statement } from '../../db/prepared.ts';
import { inTextList, textList } from '../../db/sql.ts';
import type { DB } from '../../db/schema.ts';
import { validationError } from '../../platform/errors.ts';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { present } from '../../platform/resource/store.ts';
import { selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { contacts } from '../contacts/contacts.resource.ts';
import { normalizeDomain } from './domain.ts';

/** The company's `contact_count`, read with the company (the resource's `alongside`) on the company_id index. */
export const contactCount = (table: string) =>
  sql<number>`(select cast(count(*) as integer) from contacts c where c.org_id = ${sql.ref(`${table}.org_id`)} and c.mode = ${sql.ref(`${table}.mode`)} and c.company_id = ${sql.ref(`${table}.id`)})`;

// The contacts of each of the companies named by id, the ids one parameter (an array, JSON on
// SQLite): one text for any number of them, counted on the company_id index.
const countsSql = (dialect: Dialect) => `select company_id, count(*) as n from contacts where org_id = ? and mode = ? and company_id ${inTextList(dialect)} group by company_id`;
const CONTACT_COUNTS = statement<{ company_id: string; n: number | string }>({ sqlite: countsSql('sqlite'), postgres: countsSql('postgres') });

/** Adds `contact_count` to companies read without it (a page on SQLite, a search, an export, a write's answer). */
export async function enrich(db: Kysely<DB>, scope: Scope, rows: Row[], records: ApiRecord[]): Promise<void> {
  const dialect = dialectOf(db);
  const counts = await CONTACT_COUNTS.all(db, dialect, [scope.orgId, scope.mode, textList(dialect, rows.map((r) => r.id))]);
  const byId = new Map(counts.map((c) => [c.company_id, Number(c.n)]));
  rows.forEach((r, i) => {
    records[i].contact_count = byId.get(r.id) ?? 0;
  });
}

/** Stores the domain normalized, or refuses text that is no domain (422 naming the field). */
export async function beforeWrite(_w: WriteContext, row: Record<string, unknown>): Promise<void> {
  if (row.domain === undefined || row.domain === null) return;
  const domain = normalizeDomain(row.domain as string);
  if (!domain) throw validationError([{ loc: ['body', 'domain'], msg: 'value is not a valid domain', type: 'value_error.domain' }]);
  row.domain = domain;
}

/** Points `company_id` of the contacts that match, and records `contact.updated` for each that moved. */
async function setCompany(w: WriteContext, match: { column: 'company_id' | 'email_domain'; value: string }, companyId: string | null): Promise<void> {
  const rows = await selectIn(w.tx, 'contacts', w.scope).selectAll().where(match.column, '=', match.value).execute() as unknown as Row[];
  const moved = rows.filter((r) => r.company_id !== companyId);
  if (moved.length === 0) return;
  await updateIn(w.tx, 'contacts', w.scope).set({ company_id: companyId, updated_at: w.now }).where('id', 'in', moved.map((r) => r.id)).execute();
  const after = await present(contacts, w.tx, w.scope, moved.map((r) => ({ ...r, company_id: companyId, updated_at: w.now })));
  after.forEach((record, i) => w.emit(contacts.events.updated, record, { company_id: moved[i].company_id }));
}

/** A company's domain links its contacts: unlink those of the old domain, link those of the new one. */
export async function afterWrite(w: WriteContext, row: Row, ctx: { before?: Row }): Promise<void> {
  const { before } = ctx;
  if (before && row.domain === before.domain) return;
  // The count read with the company is the old domain's: the record is presented with it counted again.
  delete row.contact_count;
  if (before?.domain) await setCompany(w, { column: 'company_id', value: row.id }, null);
  if (row.domain) await setCompany(w, { column: 'email_domain', value: row.domain as string }, row.id);
}
