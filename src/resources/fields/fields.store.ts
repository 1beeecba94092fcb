// Custom field definitions: create, change, delete, and the listing that also shows each object's
// built-in fields, so a client can render a form from one call.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { isCurrency } from '../../platform/currency.ts';
import { badRequest, conflict, notFound, validationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { previous } from '../../platform/resource/changes.ts';
import { stripField } from '../../platform/resource/custom-field-values.ts';
import { definitionsChanged, fieldDefinitions, toDefinition, UNIQUE_TYPES, type DataType, type FieldDefinition } from '../../platform/resource/custom-fields.ts';
import type { Resource } from '../../platform/resource/define.ts';
import type { Field } from '../../platform/resource/fields.ts';
import { deleteIn, selectIn, tenantOf, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';

export type FieldRecord = Omit<FieldDefinition, 'created_at' | 'updated_at'> & { is_global: boolean; created_at: number | null; updated_at: number | null };

/** Most custom fields per object and tenant: a form, not a data model. */
export const MAX_FIELDS_PER_OBJECT = 200;

const NOT_FOUND = 'Field not found';
const KIND_TYPES: Record<Field['kind'], DataType> = {
  text: 'text', int: 'number', decimal: 'number', money: 'currency', enum: 'enum', email: 'email', url: 'url', tags: 'multi_enum', ref: 'text', json: 'text', timestamp: 'datetime', boolean: 'boolean', secret: 'text', sealed: 'boolean',
};

const custom = (d: FieldDefinition): FieldRecord => ({ ...d, is_global: false });

/** The built-in fields of an object, as read-only field records. */
export function builtInFields(r: Resource): FieldRecord[] {
  const entry = (name: string, dataType: DataType, description: string, extra: Partial<FieldRecord> = {}): FieldRecord => ({
    id: `${r.plural}.${name}`, object: r.plural, name, title: name.split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join(' '),
    data_type: dataType, is_global: true, options: null, required: false, unique: false, description, list_id: null, created_at: null, updated_at: null, ...extra,
  });
  const out = [entry('id', 'text', `Identifier of the ${r.name}`, { unique: true })];
  for (const [name, f] of Object.entries(r.fields)) {
    // A secret is no field a record shows.
    if (name === 'custom_fields' || f.secret) continue;
    out.push(entry(f.sealed?.answeredAs ?? name, KIND_TYPES[f.kind], f.description, { required: f.required, unique: f.unique, options: f.values ? { values: [...f.values] } : null }));
  }
  for (const [name, schema] of Object.entries(r.computed ?? {}) as Array<[string, { type?: string; description?: string }]>) {
    out.push(entry(name, schema.type === 'boolean' ? 'boolean' : schema.type === 'integer' ? 'number' : 'text', schema.description ?? name));
  }
  out.push(entry('created_at', 'datetime', `When the ${r.name} was created, unix seconds`), entry('updated_at', 'datetime', `When the ${r.name} last changed, unix seconds`));
  return out;
}

/** Every field of the objects asked for: built-in first, then custom ones oldest first. */
export async function listFields(db: Kysely<DB>, scope: Scope, objects: Resource[], listId?: string): Promise<FieldRecord[]> {
  const out: FieldRecord[] = [];
  for (const r of objects) {
    out.push(...builtInFields(r));
    const defs = await fieldDefinitions(db, scope, r.plural);
    out.push(...defs.filter((d) => listId === undefined || d.list_id === null || d.list_id === listId).map(custom));
  }
  return out;
}

async function getDefinition(db: Kysely<DB>, scope: Scope, id: string): Promise<FieldDefinition> {
  const row = await selectIn(db, 'fields', scope).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(NOT_FOUND);
  return toDefinition(row);
}

/** The built-in field `id` (`<object>.<name>`) names, if any. */
const builtInField = (objects: Resource[], id: string) => objects.flatMap(builtInFields).find((f) => f.id === id);

/** One field: a custom one by `fld_…` id, a built-in one by `<object>.<name>`. */
export async function readField(db: Kysely<DB>, scope: Scope, objects: Resource[], id: string): Promise<FieldRecord> {
  return builtInField(objects, id) ?? custom(await getDefinition(db, scope, id));
}

const refuseBuiltIn = (objects: Resource[], id: string) => {
  // Only a field that exists is read-only; another `<object>.<name>` is not found, as on GET.
  if (builtInField(objects, id)) throw badRequest('Built-in fields are read-only');
};

const optionError = (msg: string) => validationError([{ loc: ['body', 'options'], msg, type: 'value_error' }]);

function checkOptions(dataType: DataType, options: FieldDefinition['options'] | undefined): FieldDefinition['options'] {
  const isEnum = dataType === 'enum' || dataType === 'multi_enum';
  if (isEnum && !options?.values) throw optionError('enum and multi_enum fields need options.values');
  if (!isEnum && options?.values) throw optionError('options.values is only for enum and multi_enum fields');
  if (dataType !== 'currency' && options?.currency) throw optionError('options.currency is only for currency fields');
  if (dataType === 'currency' && options?.currency && !isCurrency(options.currency)) {
    throw validationError([{ loc: ['body', 'options', 'currency'], msg: 'value is not an ISO 4217 currency code', type: 'value_error.currency' }]);
  }
  if (dataType === 'currency') return { currency: options?.currency ?? 'USD' };
  return isEnum ? { values: options!.values } : null;
}

export interface CreateFieldInput {
  object: string; name: string; title?: string; data_type: DataType; options?: FieldDefinition['options'];
  required?: boolean; unique?: boolean; description?: string | null; list_id?: string | null;
}

export async function createField(w: WriteContext, r: Resource, input: CreateFieldInput): Promise<FieldRecord> {
  if (input.name in r.fields || builtInFields(r).some((f) => f.name === input.name)) {
    throw validationError([{ loc: ['body', 'name'], msg: `${input.name} is a built-in field of ${r.plural}`, type: 'value_error.reserved' }]);
  }
  if (input.unique && !UNIQUE_TYPES.includes(input.data_type)) {
    throw validationError([{ loc: ['body', 'unique'], msg: `Fields of type ${input.data_type} cannot be unique`, type: 'value_error' }]);
  }
  const options = checkOptions(input.data_type, input.options);
  if (input.list_id) {
    if (!('list_id' in r.fields)) throw validationError([{ loc: ['body', 'list_id'], msg: `Records of ${r.plural} are not on lists`, type: 'value_error' }]);
    const list = await selectIn(w.tx, 'lists', w.scope).select('id').where('id', '=', input.list_id).executeTakeFirst();
    if (!list) throw notFound('List not found');
  }
  const existing = await selectIn(w.tx, 'fields', w.scope).select(['id', 'name']).where('object', '=', r.plural).execute();
  const same = existing.find((f) => f.name === input.name);
  if (same) throw conflict(`${r.plural} already have a field named ${input.name} (${same.id})`);
  if (existing.length >= MAX_FIELDS_PER_OBJECT) throw conflict(`${r.plural} have ${MAX_FIELDS_PER_OBJECT} custom fields, the most allowed`);
  const row = {
    id: newId('fld'), ...tenantOf(w.scope), object: r.plural, name: input.name, title: input.title ?? input.name, data_type: input.data_type,
    options: options ? JSON.stringify(options) : null, required: input.required ? 1 : 0, unique: input.unique ? 1 : 0,
    description: input.description ?? null, list_id: input.list_id ?? null, created_at: w.now, updated_at: w.now,
  };
  await w.tx.insertInto('fields').values(row).execute();
  definitionsChanged(w);
  const record = custom(toDefinition(row));
  w.emit('field.created', record);
  return record;
}

export interface UpdateFieldInput { title?: string; description?: string | null; required?: boolean; options?: FieldDefinition['options'] }

export async function updateField(w: WriteContext, objects: Resource[], id: string, input: UpdateFieldInput): Promise<FieldRecord> {
  refuseBuiltIn(objects, id);
  const before = await getDefinition(w.tx, w.scope, id);
  const changes: Record<string, unknown> = {};
  const after: FieldDefinition = { ...before };
  if (input.title !== undefined) changes.title = after.title = input.title;
  if (input.description !== undefined) changes.description = after.description = input.description;
  if (input.required !== undefined) {
    after.required = input.required;
    changes.required = input.required ? 1 : 0;
  }
  if (input.options !== undefined) {
    const options = checkOptions(before.data_type, input.options);
    // Removing an allowed value would leave records holding it invalid: values are only added.
    const dropped = (before.options?.values ?? []).filter((v) => !options?.values?.includes(v));
    if (dropped.length > 0) throw optionError(`Allowed values cannot be removed (records may hold them): ${dropped.join(', ')}`);
    after.options = options;
    changes.options = options ? JSON.stringify(options) : null;
  }
  // Values the field has already change nothing: no write, no event.
  if (Object.keys(previous(before, after)).length === 0) return custom(before);
  changes.updated_at = w.now;
  await updateIn(w.tx, 'fields', w.scope).set(changes).where('id', '=', id).execute();
  definitionsChanged(w);
  const record = custom(await getDefinition(w.tx, w.scope, id));
  w.emit('field.updated', record, previous(custom(before), record));
  return record;
}

/**
 * Deletes the fields of a list that is being deleted, each with its `field.deleted`, so their names
 * are free again. The list's own records are deleted with it: their values are only dropped, not
 * rewritten first; any other record holding one loses it as when a field is deleted.
 */
export async function deleteListFields(w: WriteContext, objects: Resource[], listId: string): Promise<void> {
  const defs = (await selectIn(w.tx, 'fields', w.scope).selectAll().where('list_id', '=', listId).orderBy('id').execute()).map(toDefinition);
  for (const def of defs) {
    const r = objects.find((o) => o.plural === def.object);
    if (r) {
      const onList = selectIn(w.tx, r.table, w.scope).select(sql.ref('id').as('id') as never).where(sql.ref('list_id'), '=', listId);
      await deleteIn(w.tx, 'field_values', w.scope).where('field_id', '=', def.id).where('record_id', 'in', onList as never).execute();
      await stripField(w, r, def);
    }
    await deleteIn(w.tx, 'fields', w.scope).where('id', '=', def.id).execute();
    w.emit('field.deleted', custom(def));
  }
  if (defs.length > 0) definitionsChanged(w);
}

/** Deletes a custom field and removes its values from every record (in the same transaction). */
export async function deleteField(w: WriteContext, objects: Resource[], id: string): Promise<{ id: string; deleted: true }> {
  refuseBuiltIn(objects, id);
  const def = await getDefinition(w.tx, w.scope, id);
  const r = objects.find((o) => o.plural === def.object);
  if (r) await stripField(w, r, def);
  await deleteIn(w.tx, 'fields', w.scope).where('id', '=', id).execute();
  definitionsChanged(w);
  w.emit('field.deleted', custom(def));
  return { id, deleted: true };
}
