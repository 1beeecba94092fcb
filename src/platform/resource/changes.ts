// What a write changes: the part of an input that differs from the record (an assert or an update
// that would change nothing is a noop: no write, no event, `updated_at` unchanged), and the earlier
// values of what changed (an event's `previous_attributes`).
import { canonicalJson } from '../canonical-json.ts';
import type { WriteContext } from '../write.ts';
import { loadAssociations, type AssociationKey, type Associations } from './associations.ts';
import { checkValue, definitionsIn } from './custom-fields.ts';
import type { Resource, Row } from './define.ts';

export const same = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);

/**
 * The part of `input` that differs from the record, compared in stored form (natural keys after
 * their normalization): an assert or an update that would change nothing writes nothing.
 */
export async function changesOf(r: Resource, w: WriteContext, row: Row, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const changes: Record<string, unknown> = {};
  const normalizers = new Map((r.assert?.keys ?? []).map((k) => [k.field, k.normalize]));
  for (const [name, value] of Object.entries(input)) {
    const f = r.fields[name];
    if (!f || f.readOnly || f.createOnly || name === 'custom_fields') continue;
    // A sealed value is never compared (each sealing differs): giving one is a change.
    if (f.sealed) {
      changes[name] = value;
      continue;
    }
    const normalize = normalizers.get(name);
    const stored = normalize && typeof value === 'string' ? (normalize(value) ?? value) : f.fromRow(f.toRow(value));
    if (!same(stored, f.fromRow(row[name]))) changes[name] = value;
  }
  const wanted = input.associations as Partial<Associations> | undefined;
  if (r.associations && wanted) {
    const current = (await loadAssociations(w.tx, w.scope, [row.id])).get(row.id)!;
    const differs = Object.entries(wanted).some(([key, ids]) => !same([...new Set(ids)].sort(), current[key as AssociationKey]));
    if (differs) changes.associations = wanted;
  }
  const given = input.custom_fields as Record<string, unknown> | undefined;
  if (given) {
    const current = (r.fields.custom_fields.fromRow(row.custom_fields) ?? {}) as Record<string, unknown>;
    const defs = new Map((await definitionsIn(w, r.plural)).map((d) => [d.name, d]));
    const changed: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(given)) {
      const def = defs.get(name);
      const checked = def && value !== null ? checkValue(def, value) : undefined;
      const stored = checked && 'value' in checked ? checked.value : value;
      // A field that is not defined goes to the write, which refuses it.
      if (!def || !same(stored, current[name])) changed[name] = value;
    }
    if (Object.keys(changed).length > 0) changes.custom_fields = changed;
  }
  return changes;
}

/**
 * The earlier values of the fields whose value differs between two forms of one record (an event's
 * `previous_attributes`): those the write was given and those it changed as a consequence (a task's
 * `completed_at`), never a value given again unchanged, nor `updated_at`.
 */
export function previous<T extends object>(before: T, after: T): Partial<T> {
  const out: Partial<T> = {};
  for (const key of Object.keys(before) as Array<keyof T>) {
    if (key !== 'updated_at' && !same(before[key], after[key])) out[key] = before[key];
  }
  return out;
}
