// Assert: create-or-update on a natural key, for the resources that declare one (`assert.keys`).
// The lookup and the write run in the write's transaction, after the tenant's write lock (write.ts):
// asserts of one tenant are serialized across every process on the store, so two asserts of one key
// never both miss and both create. `noop` when the record already says everything the body says: no
// event, no `updated_at` move.
import { sql } from 'kysely';
import { AppError, validationError } from '../errors.ts';
import type { WriteContext } from '../write.ts';
import { changesOf } from './changes.ts';
import { checkValue, definitionsIn, uniqueForm, type FieldDefinition } from './custom-fields.ts';
import type { ApiRecord, Resource, Row } from './define.ts';
import { applyUpdate, createRecord, getRow, presentOne, selectRow } from './store.ts';
import { recordsIn } from './soft-delete.ts';
import { selectIn } from './tenancy.ts';

export type AssertAction = 'created' | 'updated' | 'noop';

/**
 * The unique custom field named by `?match=`, or 422 naming the parameter. (A resource without natural
 * keys, `assert.keys` empty, matches only on it: its routes require the parameter.)
 */
export async function matchField(r: Resource, w: WriteContext, match: string | undefined): Promise<FieldDefinition | undefined> {
  if (match === undefined) return undefined;
  const def = (await definitionsIn(w, r.plural)).find((d) => d.name === match);
  if (!def || !def.unique) throw validationError([{ loc: ['query', 'match'], msg: `match must name a unique custom field of ${r.plural}`, type: 'value_error' }]);
  return def;
}

/** The natural keys the input gives, in order, each as its field and its normalized value. */
export function naturalKeys(r: Resource, input: Record<string, unknown>): Array<{ field: string; value: string }> {
  return r.assert!.keys.flatMap((key) => {
    const given = input[key.field];
    const value = typeof given === 'string' ? (key.normalize ? key.normalize(given) : given) : null;
    return value ? [{ field: key.field, value }] : [];
  });
}

/**
 * The record the input names by its natural keys (in order), then by the `match` field: undefined when
 * none matches, null when the input gives no key at all.
 */
export async function findMatch(r: Resource, w: WriteContext, input: Record<string, unknown>, match: FieldDefinition | undefined): Promise<Row | undefined | null> {
  let keyed = false;
  for (const { field, value } of naturalKeys(r, input)) {
    keyed = true;
    // The oldest record with the key, picked here: `order by id` (or `min(id)`) would let SQLite walk
    // the tenant's ids in order instead of reading the key's index, a scan of the tenant.
    // Read as by id (getRow), with what the resource reads alongside: an update starts from this row.
    const rows = await selectRow(r, recordsIn(r, w.tx, w.scope), true).where(sql.ref(field), '=', value).execute() as Row[];
    if (rows.length > 0) return rows.reduce((a, b) => (b.id < a.id ? b : a));
  }
  const custom = (input.custom_fields ?? {}) as Record<string, unknown>;
  if (match && custom[match.name] !== undefined && custom[match.name] !== null) {
    const checked = checkValue(match, custom[match.name]);
    keyed = true;
    if ('error' in checked) return undefined; // the create's own validation names the error
    const holder = await selectIn(w.tx, 'field_values', w.scope).select('record_id')
      .where('field_id', '=', match.id).where('unique_value', '=', uniqueForm(checked.encoded)).executeTakeFirst();
    if (holder) return getRow(r, w.tx, w.dialect, w.scope, holder.record_id);
  }
  return keyed ? undefined : null;
}

/** Creates, updates or leaves the record the input names; see the top of this file. */
export async function assertRecord(r: Resource, w: WriteContext, input: Record<string, unknown>, match: FieldDefinition | undefined): Promise<{ action: AssertAction; record: ApiRecord }> {
  const found = await findMatch(r, w, input, match);
  if (found === null) {
    const keys = [...r.assert!.keys.map((k) => k.field), ...(match ? [`custom_fields.${match.name}`] : [])];
    throw new AppError('validation', [{ loc: ['body'], msg: `An assert needs a value of ${keys.join(' or ')} to match on`, type: 'missing' }]);
  }
  if (!found) return { action: 'created', record: await createRecord(r, w, input) };
  const changes = await changesOf(r, w, found, input);
  const old = await presentOne(r, w.tx, w.scope, found);
  if (Object.keys(changes).length === 0) return { action: 'noop', record: old };
  // The definition's instructions (`inputs`, e.g. `force`) go with the changes to the same write path.
  const instructions = Object.fromEntries(Object.entries(input).filter(([name]) => !r.fields[name] && Object.hasOwn(r.inputs?.update ?? {}, name)));
  const record = await applyUpdate(r, w, found, old, { ...changes, ...instructions });
  // The hooks may have made of the changes what the record holds already.
  return { action: record === old ? 'noop' : 'updated', record };
}
