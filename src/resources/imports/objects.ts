// What can be imported, and how a CSV row becomes the body of an API write. An importable object is a
// kernel resource with natural keys (for upsert and update) and a way to put its records on a list:
// contacts carry their list in `list_id`, companies (and deals, later) are members of lists. Deals
// need assert keys first, and their creates queue an upsert of their stage's totals, which the
// queued creates of an import (see imports.jobs.ts) would repeat on one row in one statement.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { validationError, type FieldError } from '../../platform/errors.ts';
import { fieldDefinitions, type FieldDefinition } from '../../platform/resource/custom-fields.ts';
import type { Resource } from '../../platform/resource/define.ts';
import type { Scope } from '../../platform/scope.ts';
import { companies } from '../companies/companies.resource.ts';
import { contacts } from '../contacts/contacts.resource.ts';
import { fromSpreadsheetText } from './csv.ts';

export interface Importable {
  resource: Resource;
  /** How `list_id` puts a record on a list: its own field, or a membership. */
  list: 'field' | 'members';
  /** Header spellings (normalized: lower-case, words joined by `_`) that mean a field. */
  synonyms: Record<string, string>;
}

export const IMPORTABLE = {
  contacts: {
    resource: contacts, list: 'field',
    synonyms: {
      email: 'work_email', e_mail: 'work_email', email_address: 'work_email', work_e_mail: 'work_email', business_email: 'work_email',
      job_title: 'title', position: 'title', company_name: 'company', organization: 'company', full_name: 'name',
      first: 'first_name', given_name: 'first_name', firstname: 'first_name', last: 'last_name', surname: 'last_name', family_name: 'last_name', lastname: 'last_name',
      phone_number: 'phone', mobile: 'phone', telephone: 'phone', linkedin: 'linkedin_url', linkedin_profile: 'linkedin_url', private_email: 'personal_email',
    },
  },
  companies: {
    resource: companies, list: 'members',
    synonyms: {
      company: 'name', company_name: 'name', website: 'domain', url: 'domain', web_domain: 'domain', employees: 'employee_count',
      revenue: 'annual_revenue', linkedin: 'linkedin_url', linkedin_page: 'linkedin_url',
    },
  },
} as const satisfies Record<string, Importable>;

export type ImportObject = keyof typeof IMPORTABLE;
export const IMPORT_OBJECTS = Object.keys(IMPORTABLE) as ImportObject[];

/** Targets a column can be mapped to: the writable fields of the create body, and `custom_fields.<name>`. */
export function writableFields(r: Resource): string[] {
  return Object.entries(r.fields).filter(([name, f]) => !f.readOnly && name !== 'custom_fields').map(([name]) => name);
}

const normalizeHeader = (header: string) => header.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');

/** The target of each header that names a field (by name, synonym or custom field); others are left out. */
export function guessMapping(object: ImportObject, header: string[], defs: FieldDefinition[]): Record<string, string> {
  const { resource, synonyms } = IMPORTABLE[object];
  const fields = new Set(writableFields(resource));
  const custom = new Set(defs.map((d) => d.name));
  const mapping: Record<string, string> = {};
  const taken = new Set<string>();
  for (const column of header) {
    const key = normalizeHeader(column);
    const bare = key.replace(/^custom_fields_/, '');
    const target = fields.has(key) ? key
      : (synonyms as Record<string, string>)[key] ?? (custom.has(bare) ? `custom_fields.${bare}` : undefined);
    if (target && !taken.has(target) && !(column in mapping)) {
      mapping[column] = target;
      taken.add(target);
    }
  }
  return mapping;
}

/** Refuses a mapping naming a column the file lacks or a target that is no field (422, one error each). */
export function checkMapping(object: ImportObject, header: string[], mapping: Record<string, string | null>, defs: FieldDefinition[]): void {
  const fields = new Set(writableFields(IMPORTABLE[object].resource));
  const custom = new Set(defs.map((d) => d.name));
  const columns = new Set(header);
  const errors: FieldError[] = [];
  const targets = new Set<string>();
  for (const [column, target] of Object.entries(mapping)) {
    const loc = ['body', 'mapping', column];
    if (!columns.has(column)) errors.push({ loc, msg: `The file has no column ${column}`, type: 'value_error' });
    if (target === null || target === '') continue;
    const name = target.startsWith('custom_fields.') ? target.slice('custom_fields.'.length) : undefined;
    if (name !== undefined ? !custom.has(name) : !fields.has(target)) {
      errors.push({ loc, msg: name !== undefined ? `No custom field ${name} is defined for ${object}` : `${target} is not a writable field of ${object}`, type: 'value_error' });
    }
    if (targets.has(target)) errors.push({ loc, msg: `Two columns are mapped to ${target}`, type: 'value_error' });
    targets.add(target);
  }
  if (errors.length > 0) throw validationError(errors);
}

export const importDefinitions = (db: Kysely<DB>, scope: Scope, object: ImportObject) => fieldDefinitions(db, scope, IMPORTABLE[object].resource.plural);

const NUMBER = /^-?\d+(\.\d+)?$/;
const splitList = (text: string) => text.split(/[|,;]/).map((s) => s.trim()).filter(Boolean);

function convert(kind: string, text: string): unknown {
  switch (kind) {
    case 'int': case 'decimal': case 'money': case 'timestamp': case 'number': case 'currency': case 'datetime':
      return NUMBER.test(text.replace(/[\s_]/g, '')) ? Number(text.replace(/[\s_]/g, '')) : text;
    case 'boolean': {
      const t = text.toLowerCase();
      return ['true', 'yes', 'y', '1'].includes(t) ? true : ['false', 'no', 'n', '0'].includes(t) ? false : text;
    }
    case 'tags': case 'multi_enum':
      return splitList(text);
    case 'json':
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    default:
      return text;
  }
}

/**
 * The body of the write a row stands for: each mapped cell converted from text to its field's type
 * (numbers, booleans, lists of tags), the `'` that escapes a formula in a spreadsheet (as an export
 * writes it) taken off; empty cells are left out. Validation is the API's, afterwards.
 */
export function rowInput(r: Resource, columns: Array<{ index: number; target: string }>, record: string[], defs: Map<string, FieldDefinition>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const { index, target } of columns) {
    const text = fromSpreadsheetText((record[index] ?? '').trim());
    if (text === '') continue;
    if (target.startsWith('custom_fields.')) {
      const name = target.slice('custom_fields.'.length);
      const custom = (input.custom_fields ??= {}) as Record<string, unknown>;
      custom[name] = convert(defs.get(name)?.data_type ?? 'text', text);
    } else {
      input[target] = convert(r.fields[target]?.kind ?? 'text', text);
    }
  }
  return input;
}
