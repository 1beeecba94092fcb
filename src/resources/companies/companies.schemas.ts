import { Type, type Static } from 'typebox';
import { Nullable, PageQuery, Str, Tags, Timestamp } from '../../platform/schemas.ts';

// Field documentation, shared by the request and response schemas.
const doc = {
  name: ['Name of the company', 'Analytical Engines Ltd'],
  domain: ['Web domain, stored normalized: lower-case, without scheme, path or a leading `www.`; unique within the organization and mode. Contacts whose work e-mail has this domain are linked to the company', 'example.com'],
  industry: ['Industry', 'Software'],
  city: ['City of the headquarters', 'London'],
  country: ['Country of the headquarters', 'GB'],
  linkedin_url: ['LinkedIn company page URL', 'https://www.linkedin.com/company/analytical-engines'],
  description: ['Free-text description', 'Builds general-purpose computing machinery'],
} as const;
type Field = keyof typeof doc;

const input = (f: Field, maxLength = 200) => Type.Optional(Nullable(Str({ description: doc[f][0], maxLength, examples: [doc[f][1]] })));
const output = (f: Field) => Nullable(Type.String({ description: doc[f][0], examples: [doc[f][1]] }));
const amount = (description: string, example: number) =>
  Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description, examples: [example] })));

const EMPLOYEES = ['Number of employees', 250] as const;
const REVENUE = ['Annual revenue in whole currency units', 12_000_000] as const;

const writable = {
  domain: Type.Optional(Nullable(Str({ description: doc.domain[0], minLength: 1, maxLength: 500, examples: ['https://www.Example.com/about'] }))),
  industry: input('industry'),
  employee_count: amount(...EMPLOYEES),
  annual_revenue: amount(...REVENUE),
  city: input('city', 100),
  country: input('country', 100),
  linkedin_url: input('linkedin_url', 500),
  description: input('description', 2000),
  tags: Type.Optional(Tags),
};
const Name = Str({ description: doc.name[0], minLength: 1, maxLength: 200, examples: [doc.name[1]] });

export const CompanyCreateSchema = Type.Object({ name: Name, ...writable }, { additionalProperties: false, description: 'A new company' });
export type CompanyCreate = Static<typeof CompanyCreateSchema>;

export const CompanyUpdateSchema = Type.Object({ name: Type.Optional(Name), ...writable }, {
  additionalProperties: false, description: 'Fields to change; null clears a field',
});
export type CompanyUpdate = Static<typeof CompanyUpdateSchema>;

export const CompanySchema = Type.Object({
  id: Type.String({ description: 'Identifier of the company', examples: ['cmp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  name: Type.String({ description: doc.name[0], examples: [doc.name[1]] }),
  domain: output('domain'),
  industry: output('industry'),
  employee_count: Nullable(Type.Integer({ description: EMPLOYEES[0], examples: [EMPLOYEES[1]] })),
  annual_revenue: Nullable(Type.Integer({ description: REVENUE[0], examples: [REVENUE[1]] })),
  city: output('city'),
  country: output('country'),
  linkedin_url: output('linkedin_url'),
  description: output('description'),
  tags: Type.Array(Type.String(), { description: 'Free-form labels', examples: [['target-account']] }),
  contact_count: Type.Integer({ description: 'Contacts linked to the company through their work e-mail domain; read-only', examples: [12] }),
  created_at: Timestamp('When the company was created, unix seconds'),
  updated_at: Timestamp('When the company last changed, unix seconds'),
}, { description: 'A company' });
export type Company = Static<typeof CompanySchema>;

const Count = (description: string, example: number) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description, examples: [example] }));

export const CompanyQuerySchema = Type.Object({
  ...PageQuery,
  name: Type.Optional(Str({ description: 'Name contains this text, case-insensitively', maxLength: 200, examples: ['engines'] })),
  domain: Type.Optional(Str({ description: 'Domain, exactly, after the same normalization as on write', maxLength: 500, examples: ['example.com'] })),
  industry: Type.Optional(Str({ description: 'Industry, exactly', maxLength: 200, examples: ['Software'] })),
  country: Type.Optional(Str({ description: 'Country, exactly', maxLength: 100, examples: ['GB'] })),
  min_employees: Count('At least this many employees', 50),
  max_employees: Count('At most this many employees', 500),
}, { additionalProperties: false });
export type CompanyQuery = Static<typeof CompanyQuerySchema>;
