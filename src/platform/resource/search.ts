// The search compiler: turns a search request (filters, OR-ed filter groups, full text, sort) on a
// resource into SQL on the tenant's rows, with keyset pages that work with every sort. A filter names
// a field and an operator that must fit the field's kind (400 naming it otherwise); its value must
// fit both (422 at its place in the body otherwise). Sorts are case-insensitive on text, with empty
// values last in both directions, and always end with the id, so every row has one place in the order.
import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import { containsInsensitive, jsonArrayHas, startsWithInsensitive } from '../../db/sql.ts';
import { badRequest, cursorError, validationError } from '../errors.ts';
import { versionColumn, type Version } from '../list-cache.ts';
import type { Scope } from '../scope.ts';
import type { Resource } from './define.ts';
import { searchWords, textMatch } from './search-index.ts';
import { searchFields, valueOf, whereValue, type SearchField, type ValueType } from './search-fields.ts';
import { recordsIn } from './soft-delete.ts';
import { selectIn } from './tenancy.ts';

export const OPERATORS = ['eq', 'neq', 'any_of', 'none_of', 'all_of', 'contains', 'starts_with', 'is_empty', 'is_not_empty', 'between', 'gt', 'gte', 'lt', 'lte', 'exists'] as const;
export type Operator = (typeof OPERATORS)[number];

export interface Filter {
  field: string;
  operator: Operator;
  value?: unknown;
}

export interface SearchRequest {
  filters?: Filter[];
  filter_groups?: Filter[][];
  q?: string;
  sort?: Array<{ field: string; direction?: 'asc' | 'desc' }>;
}

const ANY: Operator[] = ['is_empty', 'is_not_empty', 'exists'];
const EQUALITY: Operator[] = ['eq', 'neq', 'any_of', 'none_of', ...ANY];
export const FITTING: Record<ValueType, Operator[]> = {
  text: [...EQUALITY, 'contains', 'starts_with'],
  enum: EQUALITY,
  number: [...EQUALITY, 'between', 'gt', 'gte', 'lt', 'lte'],
  boolean: ['eq', 'neq', ...ANY],
  tags: ['any_of', 'all_of', 'none_of', ...ANY],
  json: ANY,
};
const DESCRIBED: Record<ValueType, string> = { text: 'text', enum: 'one of a set of values', number: 'a number', boolean: 'true or false', tags: 'a list of tags', json: 'a JSON document' };
const SORTABLE: ValueType[] = ['text', 'enum', 'number', 'boolean'];

/** The operators that hold when the operator named is false (they match rows without a value too). */
const NEGATION: Partial<Record<Operator, Operator>> = { neq: 'eq', none_of: 'any_of', is_empty: 'is_not_empty' };

interface Ctx {
  dialect: Dialect;
  table: string;
  fields: Map<string, SearchField>;
}

const fieldError = (loc: Array<string | number>, msg: string, type = 'value_error') => validationError([{ loc: ['body', ...loc.map(String)], msg, type }]);

function fieldOf(ctx: Ctx, name: string): SearchField {
  const f = ctx.fields.get(name);
  if (!f) throw badRequest(`Unknown field ${name}: not a field of this object`);
  return f;
}

/** Checks a scalar against the field's kind and gives its stored form. */
function scalar(f: SearchField, value: unknown, loc: Array<string | number>): unknown {
  const t = f.type === 'enum' || f.type === 'tags' ? 'text' : f.type;
  const ok = t === 'text' ? typeof value === 'string' : t === 'number' ? typeof value === 'number' && Number.isFinite(value) : typeof value === 'boolean';
  if (!ok) throw fieldError(loc, `${f.name} holds ${DESCRIBED[f.type]}: the value must be ${t === 'text' ? 'a string' : t === 'number' ? 'a number' : 'a boolean'}`, 'type_error');
  if (f.integer && !Number.isSafeInteger(value)) throw fieldError(loc, `${f.name} holds whole numbers: the value must be an integer`, 'type_error.integer');
  if ((f.type === 'enum' || f.type === 'tags') && f.values && !f.values.includes(value as string)) throw fieldError(loc, `${f.name} is one of: ${f.values.join(', ')}`, 'value_error.enum');
  return f.toStored(value);
}

function list(f: SearchField, value: unknown, loc: Array<string | number>): unknown[] {
  if (!Array.isArray(value) || value.length === 0) throw fieldError(loc, 'the value must be a non-empty array', 'type_error.list');
  return value.map((v, i) => scalar(f, v, [...loc, i]));
}

/** The condition of one filter on a row of the table. */
function condition(ctx: Ctx, filter: Filter, loc: Array<string | number>): RawBuilder<SqlBool> {
  const f = fieldOf(ctx, filter.field);
  const op = filter.operator;
  if (!FITTING[f.type].includes(op)) {
    throw badRequest(`Operator ${op} does not fit field ${f.name}, which holds ${DESCRIBED[f.type]}; use one of: ${FITTING[f.type].join(', ')}`);
  }
  const at = [...loc, 'value'];
  const given = filter.value;
  if (['is_empty', 'is_not_empty'].includes(op) && given !== undefined) throw fieldError(at, `${op} takes no value`);
  if (op === 'exists' && given !== undefined && typeof given !== 'boolean') throw fieldError(at, 'exists takes true or false', 'type_error');
  if (op === 'exists' && given === false) return negate(whereValue(ctx.table, f, (x) => sql`${x} is not null`));
  const positive = NEGATION[op] ?? op;
  const test = predicate(ctx, f, positive, given, at);
  const where = whereValue(ctx.table, f, test);
  return positive === op ? (where as RawBuilder<SqlBool>) : negate(where);
}

// A value that is absent makes the positive condition null or false: the negation holds for it.
const negate = (where: RawBuilder<unknown>) => sql<SqlBool>`not coalesce(${where}, false)`;

function predicate(ctx: Ctx, f: SearchField, op: Operator, given: unknown, at: Array<string | number>): (x: RawBuilder<unknown>) => RawBuilder<unknown> {
  const { dialect } = ctx;
  if (f.type === 'tags') {
    if (op === 'is_not_empty' && f.custom) return (x) => sql`${x} is not null`;
    if (op === 'is_not_empty') return (x) => sql`${x} is not null and ${sql.raw(dialect === 'postgres' ? 'jsonb_array_length' : 'json_array_length')}(${x}) > 0`;
    if (op === 'exists') return (x) => sql`${x} is not null`;
    const values = list(f, given, at) as string[];
    // Built-in tags are a JSON array; a custom multi_enum is one text `|a|b|` in its value row.
    const has = (x: RawBuilder<unknown>) => values.map((v) => (f.custom ? containsInsensitive(dialect, x, `|${v}|`) : jsonArrayHas(dialect, x, v)));
    return (x) => sql`(${sql.join(has(x), sql.raw(op === 'all_of' ? ' and ' : ' or '))})`;
  }
  switch (op) {
    case 'exists': return (x) => sql`${x} is not null`;
    case 'is_not_empty': return f.type === 'text' || f.type === 'enum' ? (x) => sql`(${x} is not null and ${x} <> '')` : (x) => sql`${x} is not null`;
    case 'eq': { const v = scalar(f, given, at); return (x) => sql`${x} = ${v}`; }
    case 'any_of': { const vs = list(f, given, at); return (x) => sql`${x} in (${sql.join(vs)})`; }
    case 'contains': case 'starts_with': {
      const v = scalar(f, given, at) as string;
      if (v === '') throw fieldError(at, `${op} needs at least one character`);
      return (x) => (op === 'contains' ? containsInsensitive(dialect, x, v) : startsWithInsensitive(dialect, x, v));
    }
    case 'between': {
      if (!Array.isArray(given) || given.length !== 2) throw fieldError(at, 'between takes [low, high], both included', 'type_error.list');
      const [lo, hi] = given.map((v, i) => scalar(f, v, [...at, i]));
      return (x) => sql`${x} between ${lo} and ${hi}`;
    }
    default: {
      const v = scalar(f, given, at);
      const cmp = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op as 'gt'];
      return (x) => sql`${x} ${sql.raw(cmp)} ${v}`;
    }
  }
}

const all = (conds: RawBuilder<SqlBool>[]) => sql<SqlBool>`(${sql.join(conds, sql` and `)})`;

/** The fields a request names, for loading the tenant's custom fields only when it names one. */
const namedFields = (req: SearchRequest) => [...(req.filters ?? []), ...(req.filter_groups ?? []).flat(), ...(req.sort ?? [])].map((f) => f.field);

export interface CompiledSearch {
  /** The tenant's matching rows (not yet paged or ordered). */
  where: RawBuilder<SqlBool>[];
  /** Sort keys (value expression and direction), then the id. */
  keys: Array<{ expr: RawBuilder<unknown>; direction: 'asc' | 'desc'; type: ValueType; custom?: SearchField['custom'] }>;
}

/** Checks and compiles a search request of `r` for the tenant. */
export async function compileSearch(r: Resource, db: Kysely<DB>, dialect: Dialect, scope: Scope, req: SearchRequest): Promise<CompiledSearch> {
  const ctx: Ctx = { dialect, table: r.table, fields: await searchFields(db, r, scope, namedFields(req)) };
  const where: RawBuilder<SqlBool>[] = (req.filters ?? []).map((f, i) => condition(ctx, f, ['filters', i]));
  const groups = req.filter_groups ?? [];
  if (groups.length > 0) where.push(sql<SqlBool>`(${sql.join(groups.map((g, i) => all(g.map((f, j) => condition(ctx, f, ['filter_groups', i, j])))), sql` or `)})`);
  if (req.q !== undefined) {
    const words = searchWords(req.q);
    if (words.length === 0) throw badRequest('q has no words to search for: give letters or digits', 'q');
    where.push(textMatch(dialect, r.table, r.search ?? [], words));
  }
  const keys: CompiledSearch['keys'] = (req.sort ?? []).map((s) => {
    const f = fieldOf(ctx, s.field);
    if (!SORTABLE.includes(f.type)) throw badRequest(`Cannot sort by ${f.name}, which holds ${DESCRIBED[f.type]}`);
    const value = valueOf(ctx.table, f);
    // Text sorts ignore case; PostgreSQL compares in code-point order like SQLite, whatever its locale.
    const expr = f.type === 'text' || f.type === 'enum' ? (dialect === 'postgres' ? sql`(lower(${value}) collate "C")` : sql`lower(${value})`) : value;
    return { expr, direction: s.direction ?? 'asc', type: f.type, custom: f.custom };
  });
  return { where, keys };
}

/** The tenant's rows matching the compiled search. */
export function matching(r: Resource, db: Kysely<DB>, scope: Scope, c: CompiledSearch) {
  let q = recordsIn(r, db, scope);
  for (const w of c.where) q = q.where(w);
  return q;
}

const FALSE = sql<SqlBool>`1 = 0`;

/** Rows strictly after the key `after` in the order of `keys` (empty values last), then id descending. */
function afterKey(table: string, c: CompiledSearch, after: unknown[]): RawBuilder<SqlBool> {
  const id = sql.ref(`${table}.id`);
  const options: RawBuilder<SqlBool>[] = [];
  const equal: RawBuilder<SqlBool>[] = [];
  for (const [i, k] of c.keys.entries()) {
    const v = after[i];
    const later = v === null ? FALSE : sql<SqlBool>`(${k.expr} ${sql.raw(k.direction === 'asc' ? '>' : '<')} ${v} or ${k.expr} is null)`;
    options.push(equal.length ? all([...equal, later]) : later);
    equal.push(v === null ? sql<SqlBool>`${k.expr} is null` : sql<SqlBool>`${k.expr} = ${v}`);
  }
  const lastId = sql<SqlBool>`${id} < ${after[c.keys.length]}`;
  options.push(equal.length ? all([...equal, lastId]) : lastId);
  return sql<SqlBool>`(${sql.join(options, sql` or `)})`;
}

/** Reads a key carried by a cursor: one value per sort key, then the id. */
export function parseKey(c: CompiledSearch, raw: string | number): unknown[] {
  let key: unknown;
  try {
    key = JSON.parse(String(raw));
  } catch {
    key = undefined;
  }
  const fits = Array.isArray(key) && key.length === c.keys.length + 1 && typeof key[c.keys.length] === 'string' &&
    c.keys.every((k, i) => key[i] === null || typeof key[i] === (k.type === 'number' || k.type === 'boolean' ? 'number' : 'string'));
  if (!fits) throw cursorError('Malformed cursor: pass back a next_cursor exactly as returned');
  return key as unknown[];
}

type PageRequest = { after?: unknown[]; offset: number; take: number };
type Page = Array<{ row: Record<string, unknown> & { id: string }; key: string }>;

/**
 * One page of the search: rows with their sort key (`key`) in order, after `after` when given.
 * `version`, when given, is read beside the rows of a scanned page (see `listRows`); a page read
 * along a custom field's index leaves it to be read apart.
 */
export async function searchPage(r: Resource, db: Kysely<DB>, scope: Scope, c: CompiledSearch, page: PageRequest, version?: Version): Promise<Page> {
  const [k, more] = c.keys;
  if (k?.custom?.valueColumn === 'value_num' && !more && page.offset === 0) {
    const indexed = await indexedPage(r, db, scope, c, page);
    if (indexed) return indexed;
  }
  return scannedPage(r, db, scope, c, page, version);
}

/** Value rows read per step of an indexed page, and the most read before it gives up for a scan. */
const CANDIDATES = 200;
const MAX_CANDIDATES = 5000;

/**
 * A page sorted by one custom number field, read in the order of its value index: the next value
 * rows after the cursor, then those of their records that match the search, until the page is full.
 * The cost follows the page, not the tenant, at any depth. Records without a value come last (by id,
 * newest first), through the scanning path. Undefined when the search's filters keep so few of the
 * candidates that a scan of the matching rows is cheaper.
 */
async function indexedPage(r: Resource, db: Kysely<DB>, scope: Scope, c: CompiledSearch, page: PageRequest): Promise<Page | undefined> {
  const k = c.keys[0];
  const out: Page = [];
  let after = page.after;
  let read = 0;
  while (after?.[0] !== null && out.length < page.take) {
    if (read >= MAX_CANDIDATES) return undefined;
    const values = () => selectIn(db, 'field_values', scope).select(['record_id', 'value_num']).where('field_id', '=', k.custom!.id).where('value_num', 'is not', null);
    // After the cursor: the rest of its value's ties, then the values beyond it. Two plain ranges of
    // the index, each read in order (one `or` of both makes PostgreSQL sort every row after the cursor).
    const candidates = after ? await values().where('value_num', '=', after[0] as number).where('record_id', '<', after[1] as string).orderBy('record_id', 'desc').limit(CANDIDATES).execute() : [];
    if (candidates.length < CANDIDATES) {
      const beyond = after ? values().where('value_num', k.direction === 'asc' ? '>' : '<', after[0] as number) : values();
      candidates.push(...await beyond.orderBy('value_num', k.direction).orderBy('record_id', 'desc').limit(CANDIDATES - candidates.length).execute());
    }
    read += candidates.length;
    if (candidates.length > 0) {
      const rows = await matching(r, db, scope, c).selectAll().where(sql.ref(`${r.table}.id`), 'in', candidates.map((v) => v.record_id)).execute() as Array<Page[number]['row']>;
      const byId = new Map(rows.map((row) => [row.id, row]));
      for (const v of candidates) {
        const row = byId.get(v.record_id);
        if (row && out.length < page.take) out.push({ row, key: JSON.stringify([Number(v.value_num), row.id]) });
      }
      const last = candidates[candidates.length - 1];
      after = [Number(last.value_num), last.record_id];
    }
    if (candidates.length < CANDIDATES) after = [null, '~']; // every value read: the records without one follow
  }
  if (out.length < page.take) out.push(...await scannedPage(r, db, scope, c, { after: after ?? [null, '~'], offset: 0, take: page.take - out.length }));
  return out;
}

async function scannedPage(r: Resource, db: Kysely<DB>, scope: Scope, c: CompiledSearch, page: PageRequest, version?: Version): Promise<Page> {
  let q = matching(r, db, scope, c).selectAll();
  for (const [i, k] of c.keys.entries()) q = q.select(k.expr.as(`sort_key_${i}`) as never);
  if (version) q = q.select(versionColumn(scope) as never);
  if (page.after) q = q.where(afterKey(r.table, c, page.after));
  for (const k of c.keys) q = q.orderBy(sql`${k.expr} ${sql.raw(k.direction)} nulls last`);
  const read = q.orderBy(sql.ref(`${r.table}.id`), 'desc').limit(page.take).offset(page.offset).execute() as Promise<Array<Record<string, unknown> & { id: string }>>;
  const rows = await (version ? version.from(read) : read);
  return rows.map((row) => {
    const key = c.keys.map((k, i) => {
      const v = row[`sort_key_${i}`];
      delete row[`sort_key_${i}`];
      return v === null || v === undefined ? null : k.type === 'number' || k.type === 'boolean' ? Number(v) : String(v);
    });
    return { row, key: JSON.stringify([...key, row.id]) };
  });
}

/** The exact number of rows matching the compiled search. */
export async function searchCount(r: Resource, db: Kysely<DB>, scope: Scope, c: CompiledSearch): Promise<number> {
  const row = await matching(r, db, scope, c).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
