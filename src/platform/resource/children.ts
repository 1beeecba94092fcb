// Children: records that live under a record of another resource, in a table of their own (a deal's
// contacts, its evidence; next a sequence's steps). A child is named within its parent by a key (the
// id of the contact it puts on the deal, an evidence key). A definition names its parent; from it
// come the schemas, the tenant-scoped store below and the routes (children-routes.ts): the list, the
// write and the delete under `/v1/<parent>/{id}/<path>`, each answering the parent's 404 for an
// unknown parent and recording the parent's events (`deal.contact_added`, `…_updated`, `…_removed`).
import { sql, type Kysely, type SqlBool } from 'kysely';
import { Type, type TSchema } from 'typebox';
import type { DB } from '../../db/schema.ts';
import { notFound } from '../errors.ts';
import type { EventType } from '../event-types.ts';
import type { PageRequest } from '../pagination.ts';
import { Nullable, pascal } from '../schemas.ts';
import type { Scope } from '../scope.ts';
import type { WriteContext } from '../write.ts';
import { same } from './changes.ts';
import type { ApiRecord, Resource, Row } from './define.ts';
import type { Field } from './fields.ts';
import { notDeleted } from './soft-delete.ts';
import { getRow, present, presentOne } from './store.ts';
import { deleteIn, rowsByIds, selectIn, tenantOf, updateIn, type TenantTable } from './tenancy.ts';

export type ChildRow = Record<string, unknown> & { created_at: number; updated_at: number };
type RouteDocs = { summary?: string; description?: string; operationId?: string };

export interface ChildrenDefinition {
  /** The resource whose records have the children. */
  parent: Resource;
  /** Singular, for events and texts: `contact` makes `deal.contact_added`, `deal.contact_updated`, `deal.contact_removed`. */
  name: string;
  /** The URL segment under a parent record: `contacts` makes `/v1/deals/{id}/contacts`. */
  path: string;
  table: TenantTable;
  /** The column holding the parent's id (`deal_id`). */
  parentColumn: string;
  /**
   * What names a child within its parent: its column (also its path parameter), its schema in an
   * answer, and in a body or a path where that differs (a body's key checked by a pattern, a path's
   * not: an unknown key is a 404 there). With `ref`, the key is the id of a record of that resource,
   * which must exist in the tenant (else its 404); answers carry that record in full as member `as`,
   * events only name it.
   */
  key: { column: string; schema: TSchema; input?: TSchema; param?: TSchema; ref?: { resource: Resource; as: string }; generated?: string; paramName?: string };
  /**
   * A number column the children are listed by, smallest first (a sequence's `step_order`), in
   * place of their keys, last first.
   */
  orderBy?: string;
  /** The stored fields a client writes. */
  fields: Record<string, Field>;
  /** Answered but not stored: filled by `hooks.enrich` (an evidence key's title). */
  computed?: Record<string, TSchema>;
  /**
   * How a client writes a child. `put`: `PUT …/<path>/{key}` puts it on the parent or changes the
   * fields given (200); fields left out are kept, and a put that changes nothing writes and records
   * nothing. `post`: `POST …/<path>` with the key in the body records a new child (201) or records a
   * known one again, its fields replaced by the body's (200). With `key.generated` (an id prefix)
   * the body carries no key: every post records a new child under a new id.
   */
  write: 'put' | 'post';
  /**
   * `PATCH …/<path>/{key}` too: changes the fields given of a child the parent has (else the
   * child's 404), as a put would; an empty body is 400 `No fields to update`.
   */
  patch?: boolean;
  /** The 404 of a delete of a child the parent does not have: `Contact is not on this deal`. */
  notFound: string;
  /**
   * The member of the parent's events that carries the child (`contact_link`); the members naming a
   * removed child in the delete's answer (`id`) and in the removed event (`contact_id`); the delete
   * answer's schema title, if it has one.
   */
  members: { event: string; removed: string; removedEvent: string; removedTitle?: string };
  /** Descriptions of a child, of its timestamps and of each route; docs override the generated texts. */
  description: string;
  timestamps: { created: string; updated: string };
  docs?: Partial<Record<'list' | 'write' | 'patch' | 'delete', RouteDocs>>;
  hooks?: {
    /**
     * Checks a write once the parent, the key's record and the child were read, before anything is
     * written; may complete `input` (a default it computes), which is what is then written.
     */
    beforeWrite?(w: WriteContext, input: Record<string, unknown>, ctx: { parent: Row; existing?: ChildRow }): Promise<void>;
    /** After a child was taken off (renumbering what follows it). */
    afterRemove?(w: WriteContext, parent: Row, key: string): Promise<void>;
    /** Adds the computed fields to a page of children, with one query for all of them. */
    enrich?(db: Kysely<DB>, scope: Scope, rows: ChildRow[], records: ApiRecord[]): Promise<void>;
  };
}

export interface Children extends ChildrenDefinition {
  schemas: { record: TSchema; body: TSchema; patch: TSchema; params: TSchema; removed: TSchema };
}

/** The path parameter naming a child: its key's column unless that is the parent's own `id`. */
export const keyParam = (c: ChildrenDefinition) => c.key.paramName ?? c.key.column;

/** Defines the children of a resource's records; see the top of this file. */
export function defineChildren(c: ChildrenDefinition): Children {
  const { parent, key } = c;
  const example = [`${parent.prefix}_01JD8X4M6R2T9Q3V5W7Y8Z0A1B`];
  const record: Record<string, TSchema> = {
    [c.parentColumn]: Type.String({ description: `The ${parent.name}`, examples: example }),
    [key.column]: key.schema,
  };
  for (const [name, f] of Object.entries(c.fields)) record[name] = f.output;
  Object.assign(record, c.computed ?? {}, {
    created_at: Type.Integer({ description: c.timestamps.created, examples: [1767225600] }),
    updated_at: Type.Integer({ description: c.timestamps.updated, examples: [1767225600] }),
  }, key.ref ? { [key.ref.as]: key.ref.resource.schemas.record } : {});
  const fields: Record<string, TSchema> = {};
  for (const [name, f] of Object.entries(c.fields)) fields[name] = Type.Optional(f.nullable ? Nullable(f.input) : f.input);
  const body = c.write === 'post' && !key.generated ? { [key.column]: key.input ?? key.schema, ...fields } : fields;
  return {
    ...c,
    schemas: {
      record: Type.Object(record, { description: c.description }),
      body: Type.Object(body, { additionalProperties: false, description: c.write === 'post' ? `${pascal(c.name)} to record on the ${parent.name}` : c.description }),
      patch: Type.Object(fields, { additionalProperties: false, description: `Fields of the ${c.name} to change; null clears one` }),
      params: Type.Object({ id: parent.schemas.params.properties.id, [keyParam(c)]: key.param ?? key.schema }),
      removed: Type.Object({
        [c.members.removed]: Type.String({ description: `The \`${key.column}\` of the ${c.name} removed` }),
        deleted: Type.Literal(true, { description: 'Always true' }),
      }, { ...(c.members.removedTitle ? { title: c.members.removedTitle } : {}), description: `The ${c.name} was removed from the ${parent.name}` }),
    },
  };
}

const tableOf = (c: Children) => c.table;
const ofParent = (c: Children, db: Kysely<DB>, scope: Scope, parentId: string) =>
  selectIn(db, tableOf(c), scope).where(sql.ref(c.parentColumn), '=', parentId);

/** The children as events carry them: their columns and computed fields; a key's record only named. */
async function eventForms(c: Children, db: Kysely<DB>, scope: Scope, rows: ChildRow[]): Promise<ApiRecord[]> {
  const records = rows.map((row) => {
    const out: Record<string, unknown> = { [c.parentColumn]: row[c.parentColumn], [c.key.column]: row[c.key.column] };
    for (const [name, f] of Object.entries(c.fields)) out[name] = f.fromRow(row[name]);
    return { ...out, created_at: Number(row.created_at), updated_at: Number(row.updated_at) } as unknown as ApiRecord;
  });
  if (rows.length > 0) await c.hooks?.enrich?.(db, scope, rows, records);
  return records;
}

/** The children as the routes answer them: with the key's record in full (read unless given). */
export async function presentChildren(c: Children, db: Kysely<DB>, scope: Scope, rows: ChildRow[], known?: Row[]): Promise<ApiRecord[]> {
  return expand(c, db, scope, await eventForms(c, db, scope, rows), known);
}

/** Event forms of children with the key's record added (read unless given). */
async function expand(c: Children, db: Kysely<DB>, scope: Scope, records: ApiRecord[], known?: Row[]): Promise<ApiRecord[]> {
  const ref = c.key.ref;
  if (!ref) return records;
  const targets = known ?? (await rowsByIds(db, ref.resource.table, scope, records.map((record) => String(record[c.key.column])))) as unknown as Row[];
  const byId = new Map((await present(ref.resource, db, scope, targets)).map((t) => [t.id, t]));
  return records.map((record) => ({ ...record, [ref.as]: byId.get(String(record[c.key.column])) }));
}

/** The parent's API form with the child under `member`, for the parent's events. */
const withChild = async (c: Children, w: WriteContext, parentRow: Row, member: string, child: unknown) =>
  ({ ...(await presentOne(c.parent, w.tx, w.scope, parentRow)), [member]: child });

const eventType = (c: Children, what: 'added' | 'updated' | 'removed') => `${c.parent.name}.${c.name}_${what}` as EventType;

/**
 * Writes the child `key` of the parent (see `write` for what a put and a post do, `patch` for a
 * patch); answers it as the routes do, and whether it is new. Unknown parent, key record or (for a
 * patch) child: their 404s, in that order.
 */
export async function writeChild(c: Children, w: WriteContext, parentId: string, key: string, input: Record<string, unknown>, how: 'put' | 'post' | 'patch' = c.write): Promise<{ child: ApiRecord; created: boolean }> {
  const parentRow = await getRow(c.parent, w.tx, w.dialect, w.scope, parentId);
  const target = c.key.ref && how !== 'patch' ? [await getRow(c.key.ref.resource, w.tx, w.dialect, w.scope, key)] : undefined;
  const existing = await ofParent(c, w.tx, w.scope, parentId).where(sql.ref(c.key.column), '=', key).selectAll().executeTakeFirst() as ChildRow | undefined;
  if (how === 'patch' && !existing) throw notFound(c.notFound);
  input = { ...input, [c.key.column]: key };
  await c.hooks?.beforeWrite?.(w, input, { parent: parentRow, existing });
  const values: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(c.fields)) {
    if (input[name] !== undefined) values[name] = f.toRow(input[name]);
    else if (!existing || how === 'post') values[name] = f.default === undefined || f.default === null ? null : f.toRow(f.default);
  }
  const changed = Object.keys(values).filter((name) => how === 'post' || !same(c.fields[name].fromRow(values[name]), c.fields[name].fromRow(existing?.[name])));
  // A put or patch that changes nothing: nothing is written, no event, `updated_at` stays.
  if (existing && changed.length === 0) return { child: (await presentChildren(c, w.tx, w.scope, [existing], target))[0], created: false };
  let row: ChildRow;
  if (existing) {
    row = { ...existing, ...values, updated_at: w.now };
    await updateIn(w.tx, tableOf(c), w.scope).set({ ...values, updated_at: w.now } as never)
      .where(sql.ref(c.parentColumn), '=', parentId).where(sql.ref(c.key.column), '=', key).execute();
  } else {
    row = { ...tenantOf(w.scope), [c.parentColumn]: parentId, [c.key.column]: key, ...values, created_at: w.now, updated_at: w.now };
    await w.tx.insertInto(tableOf(c)).values(row as never).execute();
  }
  const [event] = await eventForms(c, w.tx, w.scope, [row]);
  const [child] = await expand(c, w.tx, w.scope, [event], target);
  const previous = existing ? Object.fromEntries(changed.map((name) => [name, c.fields[name].fromRow(existing[name])])) : null;
  w.emit(eventType(c, existing ? 'updated' : 'added'), await withChild(c, w, parentRow, c.members.event, event), previous);
  return { child, created: !existing };
}

/** Takes the child `key` off the parent; 404 with the parent's message, or the child's when it is not there. */
export async function removeChild(c: Children, w: WriteContext, parentId: string, key: string): Promise<Record<string, unknown>> {
  const parentRow = await getRow(c.parent, w.tx, w.dialect, w.scope, parentId);
  const removed = await deleteIn(w.tx, tableOf(c), w.scope).where(sql.ref(c.parentColumn), '=', parentId).where(sql.ref(c.key.column), '=', key).executeTakeFirst();
  if (Number(removed.numDeletedRows) === 0) throw notFound(c.notFound);
  await c.hooks?.afterRemove?.(w, parentRow, key);
  w.emit(eventType(c, 'removed'), await withChild(c, w, parentRow, c.members.removedEvent, key));
  return { [c.members.removed]: key, deleted: true };
}

/**
 * A page of a parent's children by key, last key first, with their exact total. Children whose key
 * names a record that is gone (or soft-deleted) are not listed: a list's cascade deletes its
 * contacts without their hooks, so a link can outlive its contact until the next write.
 */
export function childrenPage(c: Children, db: Kysely<DB>, scope: Scope, parentId: string) {
  const ref = c.key.ref;
  const children = () => {
    const q = ofParent(c, db, scope, parentId);
    if (!ref) return q;
    const t = ref.resource.table;
    const kept = ref.resource.softDelete ? sql` and ${notDeleted('r')}` : sql``;
    return q.where(sql<SqlBool>`exists (select 1 from ${sql.table(t)} r where r.org_id = ${sql.ref(`${c.table}.org_id`)} and r.mode = ${sql.ref(`${c.table}.mode`)} and r.id = ${sql.ref(`${c.table}.${c.key.column}`)}${kept})`);
  };
  return {
    count: async () => Number((await children().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n),
    fetch: async (page: PageRequest) => {
      let q = children().selectAll();
      if (c.orderBy) {
        if (page.after !== undefined) q = q.where(sql.ref(c.orderBy), '>', Number(page.after));
        return (await q.orderBy(sql.ref(c.orderBy)).limit(page.take).offset(page.offset).execute()) as ChildRow[];
      }
      if (page.after !== undefined) q = q.where(sql.ref(c.key.column), '<', String(page.after));
      return (await q.orderBy(sql.ref(c.key.column), 'desc').limit(page.take).offset(page.offset).execute()) as ChildRow[];
    },
    keyOf: (row: ChildRow) => (c.orderBy ? Number(row[c.orderBy]) : String(row[c.key.column])),
    map: (rows: ChildRow[]) => presentChildren(c, db, scope, rows),
  };
}
