// Lists and suppression-list entries. Every query is bounded by the tenant's org_id and mode.
import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import type { Entry, List, ListCreate, ListQuery, ListUpdate } from './lists.schemas.ts';

type ListRow = Selectable<DB['lists']>;
type EntryRow = Selectable<DB['list_entries']>;

export const LIST_NOT_FOUND = 'List not found';

export const toList = (r: ListRow): List => ({
  id: r.id,
  name: r.name,
  type: r.type as List['type'],
  description: r.description,
  member_count: Number(r.member_count),
  created_at: Number(r.created_at),
  updated_at: Number(r.updated_at),
});

const toEntry = (r: EntryRow): Entry => ({
  id: r.id,
  list_id: r.list_id,
  value: r.value,
  kind: r.kind as Entry['kind'],
  created_at: Number(r.created_at),
});

const scoped = (db: Kysely<DB>, scope: Scope) =>
  db.selectFrom('lists').where('lists.org_id', '=', scope.orgId).where('lists.mode', '=', scope.mode);

export async function findList(db: Kysely<DB>, scope: Scope, id: string): Promise<ListRow | undefined> {
  return scoped(db, scope).selectAll().where('id', '=', id).executeTakeFirst();
}

export async function getList(db: Kysely<DB>, scope: Scope, id: string): Promise<ListRow> {
  const row = await findList(db, scope, id);
  if (!row) throw notFound(LIST_NOT_FOUND);
  return row;
}

export function listLists(db: Kysely<DB>, scope: Scope, query: ListQuery, page: PageRequest) {
  let q = scoped(db, scope).selectAll();
  if (query.type) q = q.where('type', '=', query.type);
  if (page.after !== undefined) q = q.where('id', '<', String(page.after));
  return q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute();
}

export async function countLists(db: Kysely<DB>, scope: Scope, query: ListQuery): Promise<number> {
  let q = scoped(db, scope).select((eb) => eb.fn.countAll<number>().as('n'));
  if (query.type) q = q.where('type', '=', query.type);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

export async function createList(w: WriteContext, input: ListCreate): Promise<List> {
  const row: ListRow = {
    id: newId('lst'), org_id: w.scope.orgId, mode: w.scope.mode, name: input.name, type: input.type,
    description: input.description ?? null, member_count: 0, created_at: w.now, updated_at: w.now,
  };
  await w.tx.insertInto('lists').values(row).execute();
  const list = toList(row);
  w.emit('list.created', list);
  return list;
}

export async function updateList(w: WriteContext, id: string, input: ListUpdate): Promise<List> {
  const before = await getList(w.tx, w.scope, id);
  const changes = { ...input, updated_at: w.now };
  await w.tx.updateTable('lists').set(changes).where('id', '=', id).where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).execute();
  const list = toList({ ...before, ...changes });
  w.emit('list.updated', list, previous(toList(before), input));
  return list;
}

/** The earlier values of the fields an update names (the `previous_attributes` of its event). */
export function previous<T extends object>(before: T, input: object): Partial<T> {
  const out: Partial<T> = {};
  for (const key of Object.keys(input)) if (key in before) out[key as keyof T] = before[key as keyof T];
  return out;
}

/** Deletes a list. With members it refuses unless `cascade`, which deletes them too. */
export async function deleteList(w: WriteContext, id: string, cascade: boolean): Promise<{ id: string; deleted: true }> {
  const row = await getList(w.tx, w.scope, id);
  const members = Number(row.member_count);
  if (members > 0 && !cascade) {
    throw conflict(`List has ${members} member${members === 1 ? '' : 's'}; remove them first or pass cascade=true to delete them with the list`);
  }
  const { orgId, mode } = w.scope;
  const contacts = await w.tx.deleteFrom('contacts').where('org_id', '=', orgId).where('mode', '=', mode).where('list_id', '=', id).executeTakeFirst();
  w.count('contacts', -Number(contacts.numDeletedRows));
  await w.tx.deleteFrom('list_entries').where('org_id', '=', orgId).where('mode', '=', mode).where('list_id', '=', id).execute();
  await w.tx.updateTable('campaigns').set({ list_id: null, updated_at: w.now }).where('org_id', '=', orgId).where('mode', '=', mode).where('list_id', '=', id).execute();
  await w.tx.deleteFrom('lists').where('id', '=', id).where('org_id', '=', orgId).where('mode', '=', mode).execute();
  w.emit('list.deleted', toList(row));
  return { id, deleted: true };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** Adds suppression entries; values already on the list are reported, not duplicated. */
export async function addEntries(w: WriteContext, listId: string, values: string[]) {
  const list = await getList(w.tx, w.scope, listId);
  if (list.type !== 'suppressions') throw badRequest('Entries can only be added to lists of type suppressions');
  const normalized = [...new Set(values.map((v) => v.trim().toLowerCase()))];
  const invalid = normalized.filter((v) => !EMAIL.test(v) && !DOMAIN.test(v));
  if (invalid.length > 0) throw badRequest(`Not an e-mail address or domain: ${invalid.slice(0, 5).join(', ')}`);
  const { orgId, mode } = w.scope;
  const existing = await w.tx.selectFrom('list_entries').selectAll().where('list_id', '=', listId).where('value', 'in', normalized).execute();
  const known = new Set(existing.map((e) => e.value));
  const fresh: EntryRow[] = normalized.filter((v) => !known.has(v)).map((value) => ({
    id: newId('ent'), org_id: orgId, mode, list_id: listId, value, kind: EMAIL.test(value) ? 'email' : 'domain', created_at: w.now,
  }));
  if (fresh.length > 0) {
    await w.tx.insertInto('list_entries').values(fresh).execute();
    await w.tx.updateTable('lists').set((eb) => ({ member_count: eb('member_count', '+', fresh.length), updated_at: w.now })).where('id', '=', listId).execute();
    w.emit('list.entries_added', { ...toList({ ...list, member_count: Number(list.member_count) + fresh.length, updated_at: w.now }), added: fresh.map((e) => e.value) });
  }
  return { added: fresh.length, existing: existing.length, entries: [...existing, ...fresh].map(toEntry) };
}

export async function deleteEntry(w: WriteContext, listId: string, entryId: string): Promise<{ id: string; deleted: true }> {
  const list = await getList(w.tx, w.scope, listId);
  const removed = await w.tx.deleteFrom('list_entries').where('id', '=', entryId).where('list_id', '=', listId)
    .where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).returningAll().executeTakeFirst();
  if (!removed) throw notFound('Entry not found');
  await w.tx.updateTable('lists').set((eb) => ({ member_count: eb('member_count', '-', 1), updated_at: w.now })).where('id', '=', listId).execute();
  w.emit('list.entry_deleted', { ...toEntry(removed), list: toList({ ...list, member_count: Number(list.member_count) - 1 }) });
  return { id: entryId, deleted: true };
}

export async function listEntries(db: Kysely<DB>, scope: Scope, listId: string, page: PageRequest) {
  let q = db.selectFrom('list_entries').selectAll().where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('list_id', '=', listId);
  if (page.after !== undefined) q = q.where('id', '<', String(page.after));
  return (await q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute());
}

export { toEntry };
