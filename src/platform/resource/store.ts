// The tenant-scoped store every resource gets from its definition: find-or-404, keyset lists with
// exact totals, and create/update/delete that record their events (with `previous_attributes`), move
// their counters and apply the relations of other resources (restrict, cascade, set null).
import { sql, type Compilable, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import { shaped } from '../../db/prepared.ts';
import type { DB } from '../../db/schema.ts';
import { containsPattern, jsonArrayHolds, jsonArrayParam, likeInsensitive } from '../../db/sql.ts';
import { conflict, notFound } from '../errors.ts';
import { resourceEvent } from '../event-types.ts';
import { CREATION_LAG_SECONDS, creationTime, firstIdAt, newId, nowSeconds } from '../ids.ts';
import { TOTAL_COLUMN, versionColumn, type Version } from '../list-cache.ts';
import type { PageRequest } from '../pagination.ts';
import type { Scope } from '../scope.ts';
import { readCounter, type Ahead, type QueuedInsert, type WriteContext } from '../write.ts';
import { changesOf, previous, same } from './changes.ts';
import { dropAssociationsOf, dropAssociationsTo, loadAssociations, writeAssociations, type Associations } from './associations.ts';
import { dropValues, hasCustomFilters, whereCustomFields, writeCustomFields } from './custom-field-values.ts';
import { capitalized, type ApiRecord, type FilterOp, type Resource, type Row } from './define.ts';
import { leaveLists, memberOf } from './memberships.ts';
import { CLEARED, storeJson } from './stored-json.ts';
import { deleteIn, selectIn, tenantOf, updateIn, type TenantTable } from './tenancy.ts';

type Query = Record<string, unknown>;

/** A resource's fields with their row readers, and its computed fields: listed once, read for every row. */
const presented = new WeakMap<Resource, { fields: Array<[string, (value: unknown) => unknown]>; computed: string[] }>();
function presentedOf(r: Resource) {
  let p = presented.get(r);
  if (!p) presented.set(r, p = { fields: Object.entries(r.fields).map(([name, f]) => [name, f.fromRow]), computed: Object.keys(r.computed ?? {}) });
  return p;
}

function toApi(r: Resource, row: Row): ApiRecord {
  const out: ApiRecord = { id: row.id };
  const { fields, computed } = presentedOf(r);
  for (const [name, fromRow] of fields) out[name] = fromRow(row[name]);
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
 * The row's columns, the values the resource reads alongside (see `alongside`) and, given a scope,
 * its data version, and given `total` (`totalColumn`) the exact total of the page's filters.
 */
export function selectRow<Q extends ReturnType<typeof selectIn>>(r: Resource, q: Q, alongside: boolean, versionOf?: Scope, total?: ReturnType<typeof totalColumn>) {
  const all = q.selectAll();
  const more = [
    ...(alongside && r.alongside ? Object.entries(r.alongside).map(([name, expr]) => expr(r.table).as(name)) : []),
    ...(versionOf ? [versionColumn(versionOf)] : []),
    ...(total ? [total] : []),
  ];
  return more.length === 0 ? all : all.select(more as never) as unknown as typeof all;
}

/**
 * The row by id, with what the resource reads alongside. Its statement is built once per resource
 * (`shaped`): building and compiling it took 9–17 µs, where the read itself takes 2.
 */
export async function findRow(r: Resource, db: Kysely<DB>, dialect: Dialect, scope: Scope, id: string): Promise<Row | undefined> {
  const read = shaped<Row>(db, dialect, `row ${r.plural}`, [scope.orgId, scope.mode, id], () => selectRow(r, selectIn(db, table(r), scope), true).where(sql.ref('id'), '=', id));
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

type Filter = Resource['resolvedFilters'][number];
const usedFilters = (r: Resource, query: Query) => r.resolvedFilters.filter((f) => query[f.param] !== undefined);
const filterValue = (f: Filter, query: Query) => (f.normalize?.(query[f.param] as never) ?? query[f.param]) as string | number;

/** Where a filter's condition applies: its column, the resource's table, the store. */
interface FilterTarget { column: string; table: string; dialect: Dialect }
interface FilterOpSql {
  /** The parameter the condition binds for the query's value; the value itself when absent. */
  bind?: (value: string | number, dialect: Dialect) => unknown;
  condition: (bound: unknown, on: FilterTarget) => Expression<SqlBool>;
}
const compare = (op: '=' | '>=' | '<=' | '<'): FilterOpSql['condition'] => (bound, { column }) => sql<SqlBool>`${sql.ref(column)} ${sql.raw(op)} ${bound}`;

/**
 * Each filter op's parameter and condition. Both `filtered` (which builds the condition) and
 * `filterShape` (which lists a statement's parameters) read them here. `where` has SQL of its own,
 * whose text may depend on the value: no entry.
 */
const FILTER_OPS: Record<Exclude<FilterOp, 'where'>, FilterOpSql> = {
  eq: { condition: compare('=') },
  gte: { condition: compare('>=') },
  lte: { condition: compare('<=') },
  lt: { condition: compare('<') },
  eq_ci: { bind: (value) => String(value).toLowerCase(), condition: (bound, { column }) => sql<SqlBool>`lower(${sql.ref(column)}) = ${bound}` },
  contains: { bind: (value) => containsPattern(String(value)), condition: (bound, { column, dialect }) => likeInsensitive(dialect, column, bound as string) },
  has: { bind: (value, dialect) => jsonArrayParam(dialect, String(value)), condition: (bound, { column, dialect }) => jsonArrayHolds(dialect, column, bound as string) },
  member_of: { bind: (value) => String(value), condition: (bound, { table }) => memberOf(table, bound as string) },
};

/** The parameter a filter other than `where` binds for the query's value. */
function bound(f: Filter, dialect: Dialect, query: Query): unknown {
  const value = filterValue(f, query);
  const bind = FILTER_OPS[f.op as Exclude<FilterOp, 'where'>].bind;
  return bind ? bind(value, dialect) : value;
}

/**
 * The tenant's rows matching the query's filters; `base` replaces the tenant-scoped start (a group's
 * own index path), and must be scoped to the tenant itself.
 */
export function filtered(r: Resource, db: Kysely<DB>, dialect: Dialect, scope: Scope, query: Query, base?: ReturnType<typeof selectIn>) {
  let q = base ?? selectIn(db, table(r), scope);
  for (const f of usedFilters(r, query)) {
    q = q.where(f.op === 'where' ? f.where!(r.table, String(filterValue(f, query))) : FILTER_OPS[f.op].condition(bound(f, dialect, query), { column: f.column, table: r.table, dialect }));
  }
  return r.customFields ? whereCustomFields(db, scope, q as never, query) as typeof q : q;
}

type Selected = ReturnType<ReturnType<typeof filtered>['selectAll']>;

/** A statement's shape (what its text depends on) and its parameters, in the order the text binds them. */
interface Shape {
  shape: string;
  params: unknown[];
}

/**
 * The shape of `filtered`'s statement and the parameters it binds, when its text depends on nothing
 * but which filters are used: not when a filter is a custom field's (its definition shapes the text)
 * or has SQL of its own (`where`, whose text may depend on the value). A page and its count are
 * then built once per shape and run directly (`shaped`): building, compiling and running a page of
 * 50 deals through the query builder cost 126 µs of CPU more on SQLite, 311 µs on PostgreSQL.
 */
function filterShape(r: Resource, dialect: Dialect, scope: Scope, query: Query): Shape | undefined {
  if (hasCustomFilters(query)) return undefined;
  const used = usedFilters(r, query);
  const params: unknown[] = [scope.orgId, scope.mode];
  for (const f of used) {
    if (f.op === 'where') return undefined;
    params.push(bound(f, dialect, query));
  }
  return { shape: `${r.plural} ${used.map((f) => f.param).join()}`, params };
}

/**
 * The same for a page of `keysetPage`, with the data version read beside its rows when `versioned`,
 * and the exact total of its filters after it when `totalled` (`totalColumn`).
 */
export function pageShape(r: Resource, dialect: Dialect, scope: Scope, query: Query, page: PageRequest, versioned: boolean, totalled = false): Shape | undefined {
  const filters = filterShape(r, dialect, scope, query);
  if (!filters) return undefined;
  const bounds = idRange(r, query);
  const after = page.after === undefined ? [] : [String(page.after)];
  return {
    shape: `${filters.shape} ${bounds.map(([op]) => op).join('')}${after.length > 0 ? ' after' : ''}${versioned ? ' version' : ''}${totalled ? ' total' : ''}`,
    params: [...(versioned ? [scope.orgId, scope.mode] : []), ...(totalled ? filters.params : []), ...filters.params, ...bounds.map(([, id]) => id), ...after, page.take, page.offset],
  };
}

/**
 * The exact number of rows matching the query, as a column a page's statement selects beside its
 * rows (`TOTAL_COLUMN`, read by `Version.from`): on PostgreSQL the page and its total are then one
 * statement, at one snapshot, where a statement is a round trip.
 */
export const totalColumn = (r: Resource, db: Kysely<DB>, dialect: Dialect, scope: Scope, query: Query) =>
  filtered(r, db, dialect, scope, query).select((eb) => eb.fn.countAll<number>().as('n')).as(TOTAL_COLUMN);

/** The rows of `build`'s statement: built once per shape when there is one (see filterShape). */
export async function rowsOf<R>(db: Kysely<DB>, dialect: Dialect, kind: string, shape: Shape | undefined, build: () => Compilable<R> & { execute(): Promise<R[]> }): Promise<R[]> {
  if (!shape) return build().execute();
  return (await shaped<R>(db, dialect, `${kind} ${shape.shape}`, shape.params, build).execute()).rows;
}

/**
 * The ids a record created in the query's `created_at` range can have. Ids carry the millisecond
 * they were minted in, and a record's `created_at` is at most CREATION_LAG_SECONDS before it
 * (`creationTime`), never after: so a page walks the key over that id range, where the index on
 * `created_at` would yield the whole range to be sorted by id (seconds for a range of a million).
 */
function idRange(r: Resource, query: Query): Array<['>=' | '<', string]> {
  const bounds: Array<['>=' | '<', string]> = [];
  for (const f of usedFilters(r, query)) {
    if (f.column !== 'created_at') continue;
    const seconds = Number(query[f.param]);
    if (f.op === 'gte') bounds.push(['>=', firstIdAt(r.prefix, seconds * 1000)]);
    else if (f.op === 'lt' || f.op === 'lte') bounds.push(['<', firstIdAt(r.prefix, (seconds + (f.op === 'lte' ? 1 : 0) + CREATION_LAG_SECONDS) * 1000)]);
  }
  return bounds;
}

/** One page of the query's rows `q` in keyset order (newest first). */
export function keysetPage(r: Resource, q: Selected, query: Query, page: PageRequest): Selected {
  for (const [op, id] of idRange(r, query)) q = q.where(sql.ref('id'), op, id);
  if (page.after !== undefined) q = q.where(sql.ref('id'), '<', String(page.after));
  return q.orderBy(sql.ref('id'), 'desc').limit(page.take).offset(page.offset);
}

/**
 * One page in keyset order (newest first). `version` reads the tenant's data version beside each
 * row (list-cache.ts), for a page whose total needs it, and `totalled` the total itself too (when
 * none is kept for the filters); a group's own page query (`hooks.list`) gets both.
 */
export async function listRows(r: Resource, db: Kysely<DB>, dialect: Dialect, scope: Scope, query: Query, page: PageRequest, total: () => Promise<number>, version?: Version, totalled = false): Promise<Row[]> {
  if (r.hooks?.list) return r.hooks.list(db, dialect, scope, query, page, total, version, totalled);
  const counted = version !== undefined && totalled && !r.hooks?.count && !countedByCounter(r, query);
  const build = () => keysetPage(r, selectRow(r, filtered(r, db, dialect, scope, query), dialect === 'postgres', version && scope, counted ? totalColumn(r, db, dialect, scope, query) : undefined), query, page);
  const rows = rowsOf(db, dialect, 'rows', pageShape(r, dialect, scope, query, page, version !== undefined, counted), build) as Promise<Row[]>;
  return version ? version.from(rows) : rows;
}

/** The query's total is the resource's maintained counter: it is unfiltered. */
const countedByCounter = (r: Resource, query: Query) => r.counter !== undefined && usedFilters(r, query).length === 0 && !hasCustomFilters(query);

/** The exact number of rows matching the query; unfiltered, the maintained counter when there is one. */
export async function countRows(r: Resource, db: Kysely<DB>, dialect: Dialect, scope: Scope, query: Query): Promise<number> {
  if (r.hooks?.count) return r.hooks.count(db, dialect, scope, query);
  if (countedByCounter(r, query)) return readCounter(db, scope, r.counter!);
  return countMatching(r, db, dialect, scope, query);
}

/** The `count(*)` of the rows matching the query's filters, built once per shape. */
export async function countMatching(r: Resource, db: Kysely<DB>, dialect: Dialect, scope: Scope, query: Query): Promise<number> {
  const build = () => filtered(r, db, dialect, scope, query).select((eb) => eb.fn.countAll<number>().as('n'));
  const [row] = await rowsOf(db, dialect, 'count', filterShape(r, dialect, scope, query), build);
  return Number(row.n);
}

/** Checks in one statement that every reference given exists in the tenant; 404 naming the first absent. */
async function checkRefs(r: Resource, w: WriteContext, values: Record<string, unknown>): Promise<void> {
  const refs = Object.entries(r.fields).filter(([name, f]) => f.ref?.check && typeof values[name] === 'string');
  if (refs.length === 0) return;
  const found = await w.tx.selectNoFrom(() => refs.map(([name, f]) =>
    selectIn(w.tx, f.ref!.table as TenantTable, w.scope).select(sql.ref('id').as('id')).where(sql.ref('id'), '=', values[name] as string).$castTo<{ id: string }>().as(name),
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
  await checkRefs(r, w, input);
  if (r.customFields) await writeCustomFields(r, w, row, input.custom_fields);
  await r.hooks?.beforeWrite?.(w, row, { input });
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
  return record;
}

export async function updateRecord(r: Resource, w: WriteContext, id: string, given: Record<string, unknown>): Promise<ApiRecord> {
  const before = await getRow(r, w.tx, w.dialect, w.scope, id);
  const old = await presentOne(r, w.tx, w.scope, before);
  if (Object.keys(await changesOf(r, w, before, given)).length === 0) return old;
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
  const read = (name: string, value: unknown) => (r.fields[name] ? r.fields[name].fromRow(value) : value);
  if (!associations && input.custom_fields === undefined && Object.entries(changes).every(([name, value]) => same(read(name, value), read(name, before[name])))) return old;
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

/** Applies the relations of other resources to a row about to be deleted. */
async function applyDependents(r: Resource, w: WriteContext, id: string): Promise<void> {
  for (const dep of r.dependents) {
    const children = () => selectIn(w.tx, table(dep.resource), w.scope).where(sql.ref(dep.column), '=', id);
    if (dep.onDelete === 'restrict') {
      const { n } = await children().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      if (Number(n) > 0) throw conflict(`${capitalized(r.name)} has ${n} ${dep.resource.plural}; delete or move them first`);
    } else if (dep.onDelete === 'cascade') {
      if (dep.resource.customFields) await dropValues(w, children().select(sql.ref('id').as('id')) as never);
      if (dep.resource.associatedBy.length > 0) await dropAssociationsTo(w, children().select(sql.ref('id').as('id')) as never);
      const result = await deleteIn(w.tx, table(dep.resource), w.scope).where(sql.ref(dep.column), '=', id).executeTakeFirst();
      if (dep.resource.counter) w.count(dep.resource.counter, -Number(result.numDeletedRows));
    } else {
      // Each record that loses its reference changes: it gets a new updated_at and its event.
      const rows = (await children().selectAll().execute()) as Row[];
      if (rows.length === 0) continue;
      await updateIn(w.tx, table(dep.resource), w.scope).set({ [dep.column]: null, updated_at: w.now, ...(dep.resource.storedJson ? CLEARED : {}) } as never).where(sql.ref(dep.column), '=', id).execute();
      const records = await present(dep.resource, w.tx, w.scope, rows.map((row) => ({ ...row, [dep.column]: null, updated_at: w.now })));
      for (const record of records) w.emit(resourceEvent(dep.resource.name, 'updated'), record, { [dep.column]: id });
    }
  }
}

export async function deleteRecord(r: Resource, w: WriteContext, id: string, query: Record<string, unknown> = {}): Promise<{ id: string; deleted: true }> {
  const before = await getRow(r, w.tx, w.dialect, w.scope, id);
  await r.hooks?.beforeDelete?.(w, before, query);
  const record = await presentOne(r, w.tx, w.scope, before);
  await applyDependents(r, w, id);
  await deleteIn(w.tx, table(r), w.scope).where(sql.ref('id'), '=', id).execute();
  if (r.listable) await leaveLists(w, id);
  if (r.associations) await dropAssociationsOf(w, id);
  if (r.associatedBy.length > 0) await dropAssociationsTo(w, [id]);
  if (r.customFields) await dropValues(w, [id]);
  if (r.counter) w.count(r.counter, -1);
  w.emit(resourceEvent(r.name, 'deleted'), record);
  return { id, deleted: true };
}
