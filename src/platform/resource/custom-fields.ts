// Custom fields of the resources that opt in (`customFields: true`): a tenant defines fields per
// object (the `fields` table); a record carries `custom_fields: {name: value}` in its own column,
// validated on every write against the definitions. This module reads the definitions and checks
// and encodes values; custom-field-values.ts keeps the `field_values` index that filters, the search
// engine and `unique` read.
import { Type } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { isHttpUrl, NOT_HTTP_URL } from '../http-url.ts';
import { parseJson } from '../../db/sql.ts';
import type { FieldError } from '../errors.ts';
import type { Scope } from '../scope.ts';
import type { WriteContext } from '../write.ts';
import type { Field } from './fields.ts';
import { selectIn } from './tenancy.ts';

export const DATA_TYPES = ['text', 'number', 'boolean', 'date', 'datetime', 'enum', 'multi_enum', 'email', 'url', 'currency'] as const;
export type DataType = (typeof DATA_TYPES)[number];

/** Types whose values can be marked unique (one record per value). */
export const UNIQUE_TYPES: readonly DataType[] = ['text', 'number', 'email', 'url', 'currency'];

export interface FieldDefinition {
  id: string;
  object: string;
  name: string;
  title: string;
  data_type: DataType;
  options: { values?: string[]; currency?: string } | null;
  required: boolean;
  unique: boolean;
  description: string | null;
  list_id: string | null;
  created_at: number;
  updated_at: number;
}

export const toDefinition = (row: DB['fields']): FieldDefinition => ({
  id: row.id, object: row.object, name: row.name, title: row.title, data_type: row.data_type as DataType,
  options: (parseJson(row.options) as FieldDefinition['options']) ?? null,
  required: Boolean(row.required), unique: Boolean(row.unique), description: row.description, list_id: row.list_id,
  created_at: Number(row.created_at), updated_at: Number(row.updated_at),
});

/**
 * The tenant's custom field definitions of `object` (a resource's plural), oldest first. Read from
 * the store each time (one indexed query), so a definition changed by any process applies at once;
 * the search engine and the write path call it once per request.
 */
export async function fieldDefinitions(db: Kysely<DB>, scope: Scope, object: string): Promise<FieldDefinition[]> {
  const rows = await selectIn(db, 'fields', scope).selectAll().where('object', '=', object).orderBy('id').execute();
  return rows.map(toDefinition);
}

const SHARED_NAME = 'field definitions of ';

/**
 * `fieldDefinitions` in a write, read once per transaction (`WriteContext.shared`): a batch of a
 * hundred records, or the hundred creates that share one group commit, would otherwise read them
 * a hundred times.
 */
export const definitionsIn = (w: WriteContext, object: string): Promise<FieldDefinition[]> =>
  w.shared(SHARED_NAME + object, () => fieldDefinitions(w.tx, w.scope, object));

/** The write changed field definitions: its transaction's next reads of them go to the store. */
export const definitionsChanged = (w: WriteContext): void => w.changed(SHARED_NAME);

/** Whether a definition applies to a record on list `listId`: a global one, or one of that list. */
export const appliesTo = (def: FieldDefinition, listId: unknown) => def.list_id === null || def.list_id === listId;

/** The `custom_fields` member of an opted-in resource (stored as JSON; answered as an object, `{}` when empty). */
export const customFieldsField = (): Field => {
  const description = 'Values of the custom fields defined for this object (`GET /v1/fields`), by field name; null in an update clears a field';
  return {
    kind: 'json', description,
    input: Type.Object({}, { additionalProperties: true, maxProperties: 200, description, examples: [{ industry_segment: 'enterprise', seats: 40 }] }),
    output: Type.Object({}, { additionalProperties: true, description, examples: [{ industry_segment: 'enterprise', seats: 40 }] }),
    required: false, nullable: false, readOnly: false, createOnly: false, default: {}, unique: false,
    toRow: (v) => JSON.stringify(v ?? {}),
    fromRow: (v) => (parseJson(v) as Record<string, unknown> | null) ?? {},
  };
};

/** How a value is indexed in `field_values`. */
export interface Encoded {
  text: string | null;
  num: number | null;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MAX_TEXT = 10_000;
const storable = (v: string) => !v.includes('\u0000') && !/\p{Cs}/u.test(v);

/**
 * A text value as stored and compared: Unicode NFC (`é` typed as one character or as `e` and a
 * combining accent is one value) without white space around it, so a unique field cannot hold the
 * same text twice in forms a reader cannot tell apart.
 */
export const canonicalText = (v: string) => v.normalize('NFC').trim();

type Checked = { value: unknown; encoded: Encoded } | { error: [string, string] };

/** Checks one value against its definition: the stored value and its index form, or [msg, type]. */
export function checkValue(def: FieldDefinition, value: unknown): Checked {
  const ok = (v: unknown, text: string | null, num: number | null): Checked => ({ value: v, encoded: { text, num } });
  const values = def.options?.values ?? [];
  // No store can hold NUL or a lone UTF-16 surrogate: refused here like everywhere else.
  const strings = typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v) => typeof v === 'string') : [];
  if (strings.some((v) => !storable(v))) return { error: ['String contains characters that are not allowed', 'string_pattern_mismatch'] };
  switch (def.data_type) {
    case 'text': {
      if (typeof value !== 'string') return { error: ['Input should be a valid string', 'string_type'] };
      const text = canonicalText(value);
      if (text.length > MAX_TEXT) return { error: [`String should have at most ${MAX_TEXT} characters`, 'string_too_long'] };
      return ok(text, text, null);
    }
    case 'number':
    case 'currency':
      if (typeof value !== 'number' || !Number.isFinite(value)) return { error: ['Input should be a valid number', 'number_type'] };
      return ok(value, null, value);
    case 'boolean':
      if (typeof value !== 'boolean') return { error: ['Input should be a valid boolean', 'boolean_type'] };
      return ok(value, null, value ? 1 : 0);
    case 'date': {
      const m = typeof value === 'string' ? DATE.exec(value) : null;
      const at = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
      if (!m || Number.isNaN(at) || new Date(at).toISOString().slice(0, 10) !== value) return { error: ['Input should be a valid date, YYYY-MM-DD', 'date_type'] };
      return ok(value, null, at / 1000);
    }
    case 'datetime':
      if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > 1e11) return { error: ['Input should be a time in unix seconds', 'datetime_type'] };
      return ok(value, null, value as number);
    case 'enum':
      if (typeof value !== 'string' || !values.includes(value)) return { error: [`Input should be one of: ${values.join(', ')}`, 'enum'] };
      return ok(value, value, null);
    case 'multi_enum': {
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || !values.includes(v))) return { error: [`Input should be a list of: ${values.join(', ')}`, 'enum'] };
      const sorted = [...new Set(value as string[])].sort();
      return ok(sorted, sorted.length ? `|${sorted.join('|')}|` : null, null);
    }
    case 'email': {
      const email = typeof value === 'string' ? canonicalText(value).toLowerCase() : '';
      if (!EMAIL.test(email) || email.length > 320) return { error: ['value is not a valid email address', 'value_error.email'] };
      return ok(email, email, null);
    }
    case 'url': {
      const url = typeof value === 'string' ? value.normalize('NFC') : '';
      if (url.length > 2000 || !isHttpUrl(url)) return { error: [NOT_HTTP_URL, 'value_error.url'] };
      return ok(url, url, null);
    }
  }
}

/** The unique form of an encoded value (what the unique index compares). */
export const uniqueForm = (e: Encoded): string | null => e.text ?? (e.num === null ? null : String(e.num));

export interface CheckedInput {
  /** The record's values after the write, by name. */
  values: Record<string, unknown>;
  /** The fields the write sets or clears, with their index form (null: cleared). */
  changed: Array<{ def: FieldDefinition; encoded: Encoded | null }>;
}

/**
 * Validates the `custom_fields` of a write (`given`) over the record's values (`current`, absent on
 * create), with every definition of the object (`defs`) and the record's list after the write. A
 * record holds values only of the fields that apply to it: the values of a list's fields go when
 * the record moves to another list, null for such a field is accepted (there is nothing to clear)
 * and any other value refused. On create, required fields that apply must be given; an update
 * changes only the names it gives (null clears). Throws nothing: returns the field errors, each
 * naming `custom_fields.<name>`.
 */
export function checkInput(defs: FieldDefinition[], listId: unknown, given: Record<string, unknown> | undefined, current: Record<string, unknown> | undefined): CheckedInput | FieldError[] {
  const byName = new Map(defs.map((d) => [d.name, d]));
  const errors: FieldError[] = [];
  const values: Record<string, unknown> = { ...(current ?? {}) };
  const changed: CheckedInput['changed'] = [];
  const loc = (name: string) => ['body', 'custom_fields', name];
  const clear = (def: FieldDefinition) => {
    if (!(def.name in values)) return;
    delete values[def.name];
    changed.push({ def, encoded: null });
  };
  for (const name of Object.keys(values)) {
    const def = byName.get(name);
    if (def && !appliesTo(def, listId)) clear(def);
  }
  for (const [name, value] of Object.entries(given ?? {})) {
    const def = byName.get(name);
    if (!def) {
      errors.push({ loc: loc(name), msg: 'No custom field of this name is defined for this object (see GET /v1/fields)', type: 'extra_forbidden' });
      continue;
    }
    const applies = appliesTo(def, listId);
    if (value === null) {
      if (def.required && applies) errors.push({ loc: loc(name), msg: 'Field required', type: 'missing' });
      else clear(def);
      continue;
    }
    if (!applies) {
      errors.push({ loc: loc(name), msg: `Custom field ${name} applies only to ${def.object} on list ${def.list_id}`, type: 'extra_forbidden' });
      continue;
    }
    const checked = checkValue(def, value);
    if ('error' in checked) errors.push({ loc: loc(name), msg: checked.error[0], type: checked.error[1] });
    else {
      values[name] = checked.value;
      changed.push({ def, encoded: checked.encoded });
    }
  }
  if (current === undefined) {
    for (const def of defs) {
      if (def.required && appliesTo(def, listId) && values[def.name] === undefined && !errors.some((e) => e.loc[2] === def.name)) errors.push({ loc: loc(def.name), msg: 'Field required', type: 'missing' });
    }
  }
  return errors.length > 0 ? errors : { values, changed };
}
