// The tenant-scoped store every resource gets from its definition: find-or-404, keyset lists with
// exact totals (list-query.ts, re-exported here), and create/update/delete that record their events
// (with `previous_attributes`), move their counters and apply the relations of other resources
// (restrict, cascade, set null). A resource that soft-deletes (soft-delete.ts) is read from its
// records not deleted, and its delete keeps the row.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import { shaped } from '../../db/prepared.ts';
import type { DB } from '../../db/schema.ts';
import { conflict, notFound } from '../errors.ts';
import { resourceEvent } from '../event-types.ts';
import { creationTime, newId, nowSeconds } from '../ids.ts';
import type { Scope } from '../scope.ts';
import type { Ahead, QueuedInsert, WriteContext } from '../write.ts';
import { checkCap } from './caps.ts';
import { changesOf, previous, same } from './changes.ts';
import { dropAssociationsOf, dropAssociationsTo, loadAssociations, writeAssociations, type Associations } from './associations.ts';
import { dropValues, writeCustomFields } from './custom-field-values.ts';
import type { ApiRecord, Resource, Row } from './define.ts';
import { capitalized } from './words.ts';
import { selectRow } from './list-query.ts';
import { leaveLists } from './memberships.ts';
import { updateMove } from './lifecycle.ts';
import { newSecrets } from './secrets.ts';
import { live, markDeleted, recordsIn } from './soft-delete.ts';
import { CLEARED, storeJson } from './stored-json.ts';
import { deleteIn, selectIn, tenantOf, updateIn, type TenantTable } from './tenancy.ts';

// A resource's lists live in list-query.ts; its importers read them from here as before.
export { countMatching, countRows, filtered, keysetPage, listRows, pageShape, rowsOf, selectRow, totalColumn } from './list-query.ts';

/** A resource's fields with their row readers, and its computed fields: listed once, read for every row. */
const presented = new WeakMap<Resource, { fields: Array<[column: string, (value: unknown) => unknown, answeredAs: string]>; computed: string[] }>();
function presentedOf(r: Resource) {
  let p = presented.get(r);
  // Secret fields are never part of the API form (secrets.ts); sealed ones are answered as whether they are set.
  if (!p) presented.set(r, p = { fields: Object.entries(r.fields).filter(([, f]) => !f.secret).map(([name, f]) => [name, f.fromRow, f.sealed?.answeredAs ?? name]), computed: Object.keys(r.computed ?? {}) });
  return p;
}

function toApi(r: Resource, row: Row): ApiRecord {
  const out: ApiRecord = { id: row.id };
  const { fields, computed } = presentedOf(r);
  for (const [name, fromRow, answeredAs] of fields) out[answeredAs] = fromRow(row[name]);
  for (const name of computed) out[name] = row[name] ?? null;
  out.created_at = Number(row.created_at);
  out.updated_at = Number(row.updated_at);
  r.hooks?.asOf?.(out, nowSeconds());
  return out;
}

/** The API form of rows, with their computed fields added for all of them at once. */
export async function present(r: Resource, db: Kysely<DB>, scope: Scope, rows: Row[]): Promise<ApiRecord[]> {
  const records = rows.map((row) => toApi(r, row));
  // A write's hook may already know the computed values (read with its other checks): no query then.
  const { computed } = presentedOf(r);
  const known = (row: Row) => computed.every((name) => row[name] !== undefined);
  if (rows.length > 0 && r.hooks?.enrich && !rows.every(known)) await r.hooks.enrich(db, scope, rows, records);
  if (r.associations) {
    const found = await loadAssociations(db, scope, records.map((x) => x.id), r.associations);
    for (const record of records) record.associations = found.get(record.id);
  }
  return records;
}

export const presentOne = async (r: Resource, db: Kysely<DB>, scope: Scope, row: Row) => (await present(r, db, scope, [row]))[0];

const table = (r: Resource) => r.table as TenantTable;

/**
 * The row by id, with what the resource reads alongside. Its statement is built once per resource
 * (`shaped`): building and compiling it took 9–17 µs, where the read itself takes 2.
 */
export async function findRow(r: Resource, db: Kysely<DB>, dialect: Dialect, scope: Scope, id: string): Promise<Row | undefined> {
  const read = shaped<Row>(db, dialect, `row ${r.plural}`, [scope.orgId, scope.mode, id], () => selectRow(r, recordsIn(r, db, scope), true).where(sql.ref('id'), '=', id));
  return (await read.execute()).rows[0];
}

/** The API form of one record, or 404. */
export async function readRecord(r: Resource, db: Kysely<DB>, dialect: Dialect, scope: Scope, id: string): Promise<ApiRecord> {
  if (r.hooks?.read) return r.hooks.read(db, dialect, scope, id);
  return presentOne(r, db, scope, await getRow(r, db, dialect, scope, id));
}

/** The row, or 404 with the resource's message. */
export async function getRow(r: Resource, db: Kysely<DB>, dialect: Dialect, scope: Scope, id: string): Promise<Row> {
  const row = await findRow(r, db, dialect, scope, id);
  if (!row) throw notFound(r.notFound);
  return row;
}

/** Checks in one statement that every reference given exists in the tenant (not deleted); 404 naming the first absent. */
async function checkRefs(r: Resource, w: WriteContext, values: Record<string, unknown>): Promise<void> {
  const refs = Object.entries(r.fields).filter(([name, f]) => f.ref?.check && typeof values[name] === 'string');
  if (refs.length === 0) return;
  const targetOf = (name: string, table: string) => {
    const target = r.refTargets.get(name);
    return target ? recordsIn(target, w.tx, w.scope) : selectIn(w.tx, table as TenantTable, w.scope);
  };
  const found = await w.tx.selectNoFrom(() => refs.map(([name, f]) =>
    targetOf(name, f.ref!.table).select(sql.ref('id').as('id')).where(sql.ref('id'), '=', values[name] as string).$castTo<{ id: string }>().as(name),
  ) as never).executeTakeFirstOrThrow() as Record<string, string | null>;
  for (const [name, f] of refs) {
    if (found[name] === null) throw notFound(r.refTargets.get(name)?.notFound ?? `${f.ref!.table} not found`);
  }
}

/** 409 naming the record of the tenant that already holds a unique value. */
async function uniqueConflict(r: Resource, w: WriteContext, row: Record<string, unknown>, exceptId?: string): Promise<void> {
  for (const [name, f] of Object.entries(r.fields)) {
    const value = row[name];
    if (!f.unique || value === null || value === undefined) continue;
    let q = selectIn(w.tx, table(r), w.scope).select(sql.ref('id').as('id')).where(sql.ref(name), '=', value as string);
    if (exceptId) q = q.where(sql.ref('id'), '!=', exceptId);
    const holder = (await q.executeTakeFirst()) as { id: string } | undefined;
    // On create the insert already lost to a holder (which may have gone since): always a conflict.
    if (holder || !exceptId) throw conflict(`${capitalized(name)} ${String(value)} already belongs to ${holder ? `${r.name} ${holder.id}` : `another ${r.name}`}`);
  }
}

/** The columns of a row, without the computed values a hook may have put beside them. */
function withoutComputed(r: Resource, row: Record<string, unknown>): Record<string, unknown> {
  if (!r.computed) return row;
  const out = { ...row };
  for (const name of Object.keys(r.computed)) delete out[name];
  return out;
}

const hasUnique = (r: Resource) => Object.values(r.fields).some((f) => f.unique);

/** The associations of a write's input, apart from its fields. */
function splitAssociations(r: Resource, input: Record<string, unknown>): { fields: Record<string, unknown>; associations?: Partial<Associations> } {
  if (!r.associations || !('associations' in input)) return { fields: input };
  const { associations, ...fields } = input;
  return { fields, associations: associations as Partial<Associations> };
}

/** The fields of a new record in their stored form: the input's, or their defaults. */
function newFields(r: Resource, input: Record<string, unknown>, row: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [name, f] of Object.entries(r.fields)) {
    const given = f.readOnly ? undefined : input[name];
    row[name] = f.toRow(given === undefined ? f.default : given);
  }
  return row;
}

/** What a create of `given` announces it will read (the group's `readAhead`), if anything. */
export function createAhead(r: Resource, given: Record<string, unknown>): Ahead | undefined {
  const by = r.hooks?.readAhead;
  if (!by) return undefined;
  return {
    by,
    key: () => {
      const { fields: input } = splitAssociations(r, given);
      return by.key(newFields(r, input), input);
    },
  };
}

export async function createRecord(r: Resource, w: WriteContext, given: Record<string, unknown>): Promise<ApiRecord> {
  const { fields: input, associations } = splitAssociations(r, given);
  const id = newId(r.prefix);
  const created = creationTime(id, w.now);
  const row = newFields(r, input, { id, ...tenantOf(w.scope), created_at: created, updated_at: created });
  const secrets = newSecrets(r, row);
  await checkRefs(r, w, input);
  if (r.customFields) await writeCustomFields(r, w, row, input.custom_fields);
  await r.hooks?.beforeWrite?.(w, row, { input });
  await checkCap(r, w, row);
  // The record's stored text (stored-json.ts) is known once it is presented, at the end.
  if (r.storedJson) row.doc = null;
  let queued: QueuedInsert | undefined;
  // The insert's text is the same for every record of the group: built once (`shaped`).
  const values = withoutComputed(r, row);
  if (hasUnique(r)) {
    const columns = Object.keys(values).filter((c) => values[c] !== undefined);
    const params = columns.map((c) => values[c]);
    // The unique index decides between concurrent writers of one value; the loser names the winner.
    const uniques = Object.entries(r.fields).filter(([, f]) => f.unique).map(([name]) => name);
    // Unique indexes leave nulls out (`where <field> is not null`); the conflict target says so too.
    const inserted = await shaped(w.tx, w.dialect, `create unique ${table(r)} ${columns.join()}`, params, () =>
      w.tx.insertInto(table(r)).values(values as never).onConflict((oc) => uniques.reduce((t, u) => t.where(sql.ref(u), 'is not', null), oc.columns(['org_id', 'mode', ...uniques] as never)).doNothing()).returning(sql.ref('id').as('id') as never)).execute();
    if (inserted.rows.length === 0) await uniqueConflict(r, w, row);
  } else {
    queued = w.insertLater(table(r), values);
  }
  if (r.counter) w.count(r.counter, 1);
  if (r.associations) await writeAssociations(r, w, row.id as string, associations);
  await r.hooks?.afterWrite?.(w, row as Row, { input });
  const record = await presentOne(r, w.tx, w.scope, row as Row);
  if (r.storedJson) storeJson(r, w, record, queued);
  w.emit(resourceEvent(r.name, 'created'), record);
  // The secrets made are answered here, once: neither the event nor any read holds them.
  return secrets ? { ...record, ...secrets } : record;
}

export async function updateRecord(r: Resource, w: WriteContext, id: string, update: Record<string, unknown>): Promise<ApiRecord> {
  const given = await updateMove(r, w, id, update);
  const before = await getRow(r, w.tx, w.dialect, w.scope, id);
  const old = await presentOne(r, w.tx, w.scope, before);
  if (Object.keys(await changesOf(r, w, before, given)).length === 0 && !r.hooks?.writesUnchanged?.(before, given)) return old;
  return applyUpdate(r, w, before, old, given);
}

/**
 * Writes `given` over the row `before` (presented: `old`), where the caller found that it changes
 * something; what the hooks make of it may still be what the row holds, and then nothing is written.
 */
export async function applyUpdate(r: Resource, w: WriteContext, before: Row, old: ApiRecord, given: Record<string, unknown>): Promise<ApiRecord> {
  const { fields: input, associations } = splitAssociations(r, given);
  const id = before.id as string;
  const changes: Record<string, unknown> = {};
  // Members that are no field (the definition's `inputs`) reach the hooks through `input` only.
  for (const [name, value] of Object.entries(input)) if (r.fields[name]) changes[name] = r.fields[name].toRow(value);
  const changedRefs = Object.fromEntries(Object.entries(input).filter(([name, v]) => r.fields[name]?.ref && v !== before[name]));
  await checkRefs(r, w, changedRefs);
  if (r.customFields) await writeCustomFields(r, w, changes, input.custom_fields, before);
  await r.hooks?.beforeWrite?.(w, changes, { before, input });
  // What the hooks made of the input (normalized, defaults filled in) may be what the record holds
  // (compared as read: PostgreSQL answers a JSON column parsed, a 64-bit integer as text).
  const read = (name: string, value: unknown) => (r.fields[name] && !r.fields[name].sealed ? r.fields[name].fromRow(value) : value);
  if (!associations && input.custom_fields === undefined && Object.entries(changes).every(([name, value]) => same(read(name, value), read(name, before[name])))) return old;
  await checkCap(r, w, changes, before);
  const uniqueChanged = Object.fromEntries(Object.entries(changes).filter(([name, v]) => r.fields[name]?.unique && v !== before[name]));
  if (Object.keys(uniqueChanged).length > 0) await uniqueConflict(r, w, uniqueChanged, id);
  changes.updated_at = w.now;
  await updateIn(w.tx, table(r), w.scope).set(withoutComputed(r, changes) as never).where(sql.ref('id'), '=', id).execute();
  if (associations) await writeAssociations(r, w, id, associations);
  const after = { ...before, ...changes } as Row;
  await r.hooks?.afterWrite?.(w, after, { before, input });
  const record = await presentOne(r, w.tx, w.scope, after);
  if (r.storedJson) storeJson(r, w, record);
  w.emit(resourceEvent(r.name, 'updated'), record, previous(old, record));
  return record;
}

/**
 * Applies the relations of other resources to a row about to be deleted, to their records not
 * deleted. A soft delete keeps the records of its cascades, as it keeps its own row.
 */
async function applyDependents(r: Resource, w: WriteContext, id: string): Promise<void> {
  for (const dep of r.dependents) {
    const children = () => recordsIn(dep.resource, w.tx, w.scope).where(sql.ref(dep.column), '=', id);
    if (dep.onDelete === 'restrict') {
      const { n } = await children().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      if (Number(n) > 0) throw conflict(`${capitalized(r.name)} has ${n} ${dep.resource.plural}; delete or move them first`);
    } else if (dep.onDelete === 'cascade') {
      if (r.softDelete) continue;
      if (dep.resource.customFields) await dropValues(w, children().select(sql.ref('id').as('id')) as never);
      if (dep.resource.associatedBy.length > 0) await dropAssociationsTo(w, children().select(sql.ref('id').as('id')) as never);
      const result = await deleteIn(w.tx, table(dep.resource), w.scope).where(sql.ref(dep.column), '=', id).executeTakeFirst();
      if (dep.resource.counter) w.count(dep.resource.counter, -Number(result.numDeletedRows));
    } else {
      // Each record that loses its reference changes: it gets a new updated_at and its event.
      const rows = (await children().selectAll().execute()) as Row[];
      if (rows.length === 0) continue;
      await live(dep.resource, updateIn(w.tx, table(dep.resource), w.scope).set({ [dep.column]: null, updated_at: w.now, ...(dep.resource.storedJson ? CLEARED : {}) } as never).where(sql.ref(dep.column), '=', id)).execute();
      const records = await present(dep.resource, w.tx, w.scope, rows.map((row) => ({ ...row, [dep.column]: null, updated_at: w.now })));
      for (const record of records) w.emit(resourceEvent(dep.resource.name, 'updated'), record, { [dep.column]: id });
    }
  }
}

/**
 * Deletes the record, or with `softDelete` stamps it deleted and keeps its row; either way its links
 * (list memberships, associations, custom field values) go, since nothing may reach it through them.
 */
export async function deleteRecord(r: Resource, w: WriteContext, id: string, query: Record<string, unknown> = {}): Promise<{ id: string; deleted: true }> {
  const before = await getRow(r, w.tx, w.dialect, w.scope, id);
  await r.hooks?.beforeDelete?.(w, before, query);
  const record = await presentOne(r, w.tx, w.scope, before);
  await applyDependents(r, w, id);
  if (r.softDelete) await markDeleted(r, w, id);
  else await deleteIn(w.tx, table(r), w.scope).where(sql.ref('id'), '=', id).execute();
  if (r.listable) await leaveLists(w, id);
  if (r.associations) await dropAssociationsOf(w, id);
  if (r.associatedBy.length > 0) await dropAssociationsTo(w, [id]);
  if (r.customFields) await dropValues(w, [id]);
  if (r.counter) w.count(r.counter, -1);
  w.emit(resourceEvent(r.name, 'deleted'), record);
  return { id, deleted: true };
}
