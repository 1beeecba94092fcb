// The write and read side of custom field values: a write of an opted-in resource validates its
// `custom_fields`, stores them in the record's column and keeps `field_values` (one row per record
// and set field) in the same transaction; list filters `custom_fields.<name>=` read that index.
import { sql, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { shaped } from '../../db/prepared.ts';
import type { DB } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { conflict, validationError, type FieldError } from '../errors.ts';
import type { Scope } from '../scope.ts';
import type { WriteContext } from '../write.ts';
import type { Resource, Row } from './define.ts';
import { CLEARED } from './stored-json.ts';
import { appliesTo, checkInput, checkValue, definitionsIn, fieldDefinitions, uniqueForm, type FieldDefinition } from './custom-fields.ts';
import { deleteIn, selectIn, tenantOf, updateIn, type TenantTable } from './tenancy.ts';

const asObject = (v: unknown) => (parseJson(v) as Record<string, unknown> | null) ?? {};

/**
 * Validates the write's `custom_fields` (`given`; undefined when the write names none) and sets the
 * stored column in `row`; writes the changed values to `field_values`. `before` is absent on create.
 * A unique value another record holds is 409 naming that record. A record moved to another list
 * loses the values of its former list's fields (in `row`, so the update's event names them).
 */
export async function writeCustomFields(r: Resource, w: WriteContext, row: Record<string, unknown>, given: unknown, before?: Row): Promise<void> {
  const listId = row.list_id !== undefined ? row.list_id : before?.list_id;
  const moved = before !== undefined && listId !== before.list_id;
  if (before && given === undefined && !moved) return;
  const id = (before?.id ?? row.id) as string;
  const defs = await definitionsIn(w, r.plural);
  const current = before ? asObject(before.custom_fields) : undefined;
  if (!before && given === undefined && !defs.some((d) => d.required && appliesTo(d, listId))) return;
  const checked = checkInput(defs, listId, given as Record<string, unknown> | undefined, current);
  if (Array.isArray(checked)) throw validationError(checked);
  // A move that leaves no value behind changes no custom field.
  if (given === undefined && before && checked.changed.length === 0) return;
  row.custom_fields = JSON.stringify(checked.values);
  if (checked.changed.length === 0) return;

  for (const { def, encoded } of checked.changed) {
    const unique = def.unique && encoded ? uniqueForm(encoded) : null;
    if (unique === null) continue;
    const holder = await selectIn(w.tx, 'field_values', w.scope).select('record_id')
      .where('field_id', '=', def.id).where('unique_value', '=', unique).where('record_id', '!=', id).executeTakeFirst();
    if (holder) throw conflict(`Custom field ${def.name} value ${unique} already belongs to ${r.name} ${holder.record_id}`);
  }
  if (before) {
    await deleteIn(w.tx, 'field_values', w.scope).where('record_id', '=', id)
      .where('field_id', 'in', checked.changed.map((c) => c.def.id)).execute();
  }
  const rows = checked.changed.filter((c) => c.encoded).map(({ def, encoded }) => ({
    ...tenantOf(w.scope), field_id: def.id, record_id: id, value_text: encoded!.text, value_num: encoded!.num,
    unique_value: def.unique ? uniqueForm(encoded!) : null,
  }));
  // The unique index is the last word: a writer that got past the check above still cannot hold a
  // value another record holds (the central error handler answers the violation with 409). A new
  // record's values go with its row (`insertLater`), unless one is unique: the next record's check
  // must see it.
  if (rows.length === 0) return;
  if (before || rows.some((row) => row.unique_value !== null)) {
    await shaped(w.tx, w.dialect, `field_values ${rows.length}`, rows.flatMap(Object.values), () => w.tx.insertInto('field_values').values(rows)).execute();
  } else {
    for (const row of rows) w.insertLater('field_values', row);
  }
}

/** Drops the values of deleted records (`ids`: their ids, or a subquery yielding them). */
export async function dropValues(w: WriteContext, ids: string[] | ReturnType<typeof selectIn>): Promise<void> {
  await deleteIn(w.tx, 'field_values', w.scope).where('record_id', 'in', ids as never).execute();
}

/**
 * Removes a deleted field from every record that holds it (the column's JSON and the index rows),
 * so no record answers or validates against a field that no longer exists. Records keep their
 * `updated_at`: the definition changed, not the record.
 */
export async function stripField(w: WriteContext, r: Resource, def: FieldDefinition): Promise<void> {
  const holders = selectIn(w.tx, 'field_values', w.scope).select('record_id').where('field_id', '=', def.id);
  const path = `$.${def.name}`;
  const removed = w.dialect === 'postgres' ? sql`custom_fields - ${def.name}::text` : sql`json_remove(custom_fields, ${path})`;
  await updateIn(w.tx, r.table as TenantTable, w.scope).set({ custom_fields: removed, ...(r.storedJson ? CLEARED : {}) } as never).where(sql.ref('id'), 'in', holders as never).execute();
  await deleteIn(w.tx, 'field_values', w.scope).where('field_id', '=', def.id).execute();
}

/** Query parameters of custom field filters: `custom_fields.<name>`. */
export const CUSTOM_FILTER = /^custom_fields\.([a-z][a-z0-9_]{0,62})$/;

/** The resolved custom field filters of a list query (set by `resolveCustomFilters`). */
export const CUSTOM_FILTERS = Symbol('custom field filters');

interface ResolvedFilter {
  def: FieldDefinition;
  text: string | null;
  num: number | null;
}

const queryValue = (def: FieldDefinition, raw: string): unknown => {
  if (def.data_type === 'number' || def.data_type === 'currency' || def.data_type === 'datetime') return raw.trim() === '' ? raw : Number(raw);
  if (def.data_type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  if (def.data_type === 'multi_enum') return [raw];
  return raw;
};

/**
 * Turns the `custom_fields.<name>` parameters of a list query into filters on `field_values`; an
 * unknown name or a value its type refuses is 422 naming the parameter.
 */
export async function resolveCustomFilters(r: Resource, db: Kysely<DB>, scope: Scope, query: Record<string, unknown>): Promise<Record<string, unknown>> {
  const params = Object.keys(query).filter((k) => CUSTOM_FILTER.test(k));
  if (!r.customFields || params.length === 0) return query;
  const defs = new Map((await fieldDefinitions(db, scope, r.plural)).map((d) => [d.name, d]));
  const errors: FieldError[] = [];
  const resolved: ResolvedFilter[] = [];
  for (const param of params) {
    const def = defs.get(CUSTOM_FILTER.exec(param)![1]);
    const raw = String(Array.isArray(query[param]) ? (query[param] as unknown[])[0] : query[param]);
    if (!def) {
      errors.push({ loc: ['query', param], msg: 'No custom field of this name is defined for this object', type: 'extra_forbidden' });
      continue;
    }
    const checked = checkValue(def, queryValue(def, raw));
    if ('error' in checked) errors.push({ loc: ['query', param], msg: checked.error[0], type: checked.error[1] });
    else resolved.push({ def, ...checked.encoded });
  }
  if (errors.length > 0) throw validationError(errors);
  return Object.assign({ ...query }, { [CUSTOM_FILTERS]: resolved });
}

/** True when a list query filters on custom fields (so no maintained total answers it). */
export const hasCustomFilters = (query: object) => ((query as Record<symbol, unknown[] | undefined>)[CUSTOM_FILTERS]?.length ?? 0) > 0;

const likeEscaped = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Adds the resolved custom field filters of `query` to a tenant-scoped select of `r`'s records. */
export function whereCustomFields<Q extends SelectQueryBuilder<DB, never, object>>(db: Kysely<DB>, scope: Scope, q: Q, query: Record<string | symbol, unknown>): Q {
  const filters = query[CUSTOM_FILTERS] as ResolvedFilter[] | undefined;
  for (const f of filters ?? []) {
    let ids = selectIn(db, 'field_values', scope).select('record_id').where('field_id', '=', f.def.id);
    if (f.def.data_type === 'multi_enum') ids = ids.where(sql<SqlBool>`value_text like ${`%${likeEscaped(f.text!)}%`} escape '\\'`);
    else if (f.text !== null) ids = ids.where('value_text', '=', f.text);
    else ids = ids.where('value_num', '=', f.num);
    q = q.where(sql.ref('id'), 'in', ids as never) as Q;
  }
  return q;
}
