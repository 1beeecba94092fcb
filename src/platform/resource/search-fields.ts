// The fields a search can filter and sort on: every stored built-in field of the resource (plus id,
// created_at and updated_at) and, when the custom-fields module provides them, the tenant's custom
// fields as `custom_fields.<name>`. Each field says which kind of value it holds (which operators fit)
// and how to reach its value in SQL: a column of the row, or a value row of `field_values`.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Scope } from '../scope.ts';
import type { Resource } from './define.ts';

/** What a field holds, which decides the operators that fit it. */
export type ValueType = 'text' | 'enum' | 'number' | 'boolean' | 'tags' | 'json';

export interface SearchField {
  name: string;
  type: ValueType;
  /** Whole numbers only (the built-in number columns are bigint). */
  integer?: boolean;
  /** The allowed values of an enum field. */
  values?: readonly string[];
  /** The stored form of a value given by a client (e-mail addresses lower-case, booleans 0/1). */
  toStored: (value: unknown) => unknown;
  /** The built-in column, or absent for a custom field (see `custom`) or a computed one (see `expr`). */
  column?: string;
  /** A computed field (`searchComputed` of the definition): its value as an expression on the row. */
  expr?: (table: string) => RawBuilder<unknown>;
  /** A custom field: its definition id and the `field_values` column holding its value. */
  custom?: { id: string; valueColumn: 'value_text' | 'value_num' };
}

/** One custom field definition of a tenant, as the custom-fields module gives it. */
export interface CustomFieldDefinition {
  id: string;
  name: string;
  data_type: string;
  /** The choices of an `enum` or `multi_enum` field. */
  options?: { values?: readonly string[] } | null;
}

/** Provided by the custom-fields module: the tenant's definitions of the resource's custom fields. */
export interface CustomFieldCatalog {
  definitions(db: Kysely<DB>, resource: Resource, scope: Scope): Promise<CustomFieldDefinition[]>;
}

let catalog: CustomFieldCatalog | undefined;

/** Makes custom fields searchable (called once by the custom-fields module when it loads). */
export function useCustomFieldCatalog(c: CustomFieldCatalog | undefined): void {
  catalog = c;
}

const KIND_TYPES: Record<string, ValueType> = {
  text: 'text', email: 'text', url: 'text', ref: 'text', enum: 'enum',
  int: 'number', decimal: 'number', money: 'number', timestamp: 'number', boolean: 'boolean', tags: 'tags', json: 'json',
};

/**
 * How a custom field's data type is compared, and where `field_values` keeps its value: numbers,
 * currencies, dates, datetimes and booleans (0/1) in `value_num`; text, e-mail, url and enum in
 * `value_text`; a multi_enum as one text `|a|b|` of its sorted values.
 */
const CUSTOM_TYPES: Record<string, { type: ValueType; valueColumn: 'value_text' | 'value_num' }> = {
  text: { type: 'text', valueColumn: 'value_text' },
  email: { type: 'text', valueColumn: 'value_text' },
  url: { type: 'text', valueColumn: 'value_text' },
  enum: { type: 'enum', valueColumn: 'value_text' },
  multi_enum: { type: 'tags', valueColumn: 'value_text' },
  number: { type: 'number', valueColumn: 'value_num' },
  currency: { type: 'number', valueColumn: 'value_num' },
  date: { type: 'number', valueColumn: 'value_num' },
  datetime: { type: 'number', valueColumn: 'value_num' },
  boolean: { type: 'boolean', valueColumn: 'value_num' },
};

const same = (v: unknown) => v;
const asNumber = (v: unknown) => (typeof v === 'boolean' ? (v ? 1 : 0) : v);
// Custom text values are stored Unicode NFC (custom-fields.ts): a value searched for is compared in
// the same form, so `e\u0301` finds the `é` stored.
const nfc = (v: unknown) => (typeof v === 'string' ? v.normalize('NFC') : v);
const lowerCase = (v: unknown) => (typeof v === 'string' ? v.normalize('NFC').trim().toLowerCase() : v);

/** The built-in fields of `r` that a search can name. */
export function builtInFields(r: Resource): Map<string, SearchField> {
  const out = new Map<string, SearchField>();
  out.set('id', { name: 'id', type: 'text', toStored: same, column: 'id' });
  for (const [name, f] of Object.entries(r.fields)) {
    const type = KIND_TYPES[f.kind];
    out.set(name, { name, type, integer: type === 'number' && f.kind !== 'decimal', values: f.values, column: name, toStored: f.kind === 'tags' ? same : f.toRow });
  }
  for (const [name, c] of Object.entries(r.searchComputed ?? {})) out.set(name, { name, type: c.type, integer: c.type === 'number', toStored: asNumber, expr: c.expr });
  out.set('created_at', { name: 'created_at', type: 'number', integer: true, toStored: same, column: 'created_at' });
  out.set('updated_at', { name: 'updated_at', type: 'number', integer: true, toStored: same, column: 'updated_at' });
  return out;
}

export const CUSTOM_PREFIX = 'custom_fields.';

/** The fields of `r` a search of this tenant can name: built-in, and custom when `names` asks for any. */
export async function searchFields(db: Kysely<DB>, r: Resource, scope: Scope, names: string[]): Promise<Map<string, SearchField>> {
  const fields = builtInFields(r);
  if (!catalog || !names.some((n) => n.startsWith(CUSTOM_PREFIX))) return fields;
  for (const d of await catalog.definitions(db, r, scope)) {
    const t = CUSTOM_TYPES[d.data_type];
    if (!t) continue;
    const toStored = t.valueColumn === 'value_num' ? asNumber : d.data_type === 'email' ? lowerCase : nfc;
    fields.set(`${CUSTOM_PREFIX}${d.name}`, { name: `${CUSTOM_PREFIX}${d.name}`, type: t.type, values: d.options?.values, toStored, custom: { id: d.id, valueColumn: t.valueColumn } });
  }
  return fields;
}

/** `field_values` rows of the record in `table` for the custom field (its value in `value`). */
function valueRows(table: string, f: SearchField) {
  return sql`from field_values fv where fv.org_id = ${sql.ref(`${table}.org_id`)} and fv.mode = ${sql.ref(`${table}.mode`)} and fv.field_id = ${f.custom!.id} and fv.record_id = ${sql.ref(`${table}.id`)}`;
}

/** The field's value for a row of `table`: its column, or its custom value (null when unset). */
export function valueOf(table: string, f: SearchField): RawBuilder<unknown> {
  if (f.expr) return f.expr(table);
  if (f.column) return sql`${sql.ref(`${table}.${f.column}`)}`;
  return sql`(select ${sql.ref(`fv.${f.custom!.valueColumn}`)} ${valueRows(table, f)})`;
}

/**
 * A condition on the field's value, as `exists` over its value row for a custom field (so the
 * `(org_id, mode, field_id, value_…, record_id)` indexes answer it) and directly on the column for a
 * built-in one. `test` builds the condition on a value expression.
 */
export function whereValue(table: string, f: SearchField, test: (value: RawBuilder<unknown>) => RawBuilder<unknown>): RawBuilder<unknown> {
  if (f.expr) return test(f.expr(table));
  if (f.column) return test(sql`${sql.ref(`${table}.${f.column}`)}`);
  return sql`exists (select 1 ${valueRows(table, f)} and ${test(sql.ref(`fv.${f.custom!.valueColumn}`) as unknown as RawBuilder<unknown>)})`;
}
