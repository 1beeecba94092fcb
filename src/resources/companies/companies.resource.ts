// Companies. A company with a domain is linked to the tenant's contacts whose work e-mail has that
// domain: contacts link themselves on their writes, and a company's writes (re)link the contacts of
// its domain, so `company_id` agrees from both sides. `contact_count` is read, not stored.
import { Type } from 'typebox';
import { defineResource } from '../../platform/resource/define.ts';
import { int, tags, text, url } from '../../platform/resource/fields.ts';
import { afterWrite, beforeWrite, contactCount, enrich } from './companies.store.ts';
import { normalizeDomain } from './domain.ts';

const doc = (description: string, example: string | number) => ({ description, example });
const count = (description: string, example: number) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description, examples: [example] });

export const companies = defineResource({
  name: 'company', plural: 'companies', prefix: 'cmp', table: 'companies', notFound: 'Company not found',
  tag: 'Companies', tagDescription: 'Accounts, linked to contacts by e-mail domain',
  fields: {
    name: text({ required: true, min: 1, ...doc('Name of the company', 'Analytical Engines Ltd') }),
    domain: text({ unique: true, min: 1, max: 500, ...doc('Web domain, stored normalized: lower-case, without scheme, path or a leading `www.`; unique within the organization and mode. Contacts whose work e-mail has this domain are linked to the company', 'example.com') }),
    industry: text(doc('Industry', 'Software')),
    employee_count: int(doc('Number of employees', 250)),
    annual_revenue: int(doc('Annual revenue in whole currency units', 12_000_000)),
    city: text({ max: 100, ...doc('City of the headquarters', 'London') }),
    country: text({ max: 100, ...doc('Country of the headquarters', 'GB') }),
    linkedin_url: url(doc('LinkedIn company page URL', 'https://www.linkedin.com/company/analytical-engines')),
    description: text({ max: 2000, ...doc('Free-text description', 'Builds general-purpose computing machinery') }),
    tags: tags({ example: ['target-account'] }),
  },
  computed: {
    contact_count: Type.Integer({ description: 'Contacts linked to the company through their work e-mail domain; read-only', examples: [12] }),
  },
  filters: {
    name: { op: 'contains', description: 'Name contains this text, case-insensitively' },
    domain: { op: 'eq', description: 'Domain, exactly, after the same normalization as on write', normalize: (v: string) => normalizeDomain(v) ?? v },
    industry: { op: 'eq', description: 'Industry, exactly' },
    country: { op: 'eq', description: 'Country, exactly' },
    min_employees: { field: 'employee_count', op: 'gte', schema: count('At least this many employees', 50) },
    max_employees: { field: 'employee_count', op: 'lte', schema: count('At most this many employees', 500) },
  },
  search: ['name', 'domain', 'industry', 'description'],
  counter: 'companies',
  listable: true,
  customFields: true,
  assert: { keys: [{ field: 'domain', normalize: normalizeDomain }] },
  alongside: { contact_count: contactCount },
  hooks: { beforeWrite, afterWrite, enrich },
  routes: {
    docs: {
      list: { summary: 'Search company data', description: 'Lists companies, newest first, with an exact `total`. Filters combine: `name` (contains, case-insensitive), `domain` (exact, normalized like on write), `industry`, `country` (exact), `min_employees`, `max_employees`, `list_id` (on a list of type companies).' },
      create: { description: 'Creates a company and links the contacts whose work e-mail has its domain (each gets a `contact.updated` event). The domain is normalized (`https://www.Example.com/x` → `example.com`); a domain that another company of the organization already has is 409 naming that company; text that is not a domain is 422.' },
      update: { description: 'Changes the fields given. A new domain moves the links: contacts of the old domain are unlinked, those of the new one linked (each gets a `contact.updated` event). An empty body is 400 `No fields to update`.' },
      delete: { description: 'Deletes a company and unlinks its contacts (their `company_id` becomes null, each gets a `contact.updated` event); reading it afterwards is 404.' },
    },
    errors: { create: [409], update: [409] },
  },
});
