// Indexes for the equality filters of list endpoints, each ending in `id`. A filtered page is "the
// rows with this value, newest id first", with an exact total: with the id in the index both are a
// range of it. Without, SQLite serves `order by id` from the tenant's id index and reads the whole
// tenant to find a rare value (a `work_email` that no contact has read 1,000,000 rows), and counting
// visits every matching row in the table. `company` is compared case-insensitively, so its index
// holds `lower(company)`.
import { sql, type Kysely } from 'kysely';

const REPLACED = ['contacts_email', 'contacts_company', 'contacts_company_id', 'campaigns_list', 'deals_company'];

const INDEXES: Array<[name: string, table: string, columns: string]> = [
  ['contacts_email', 'contacts', 'work_email, id'],
  ['contacts_company', 'contacts', 'lower(company), id'],
  ['contacts_company_id', 'contacts', 'company_id, id'],
  ['companies_industry', 'companies', 'industry, id'],
  ['companies_country', 'companies', 'country, id'],
  ['campaigns_status', 'campaigns', 'status, id'],
  ['campaigns_list', 'campaigns', 'list_id, id'],
  ['deals_company', 'deals', 'company_id, id'],
];

export const filterIndexes = {
  async up(db: Kysely<unknown>): Promise<void> {
    for (const name of REPLACED) await db.schema.dropIndex(name).ifExists().execute();
    for (const [name, table, columns] of INDEXES) {
      await sql`create index ${sql.id(name)} on ${sql.id(table)} (org_id, mode, ${sql.raw(columns)})`.execute(db);
    }
  },
};
