// What lists do beyond CRUD: suppression-list entries, and the members of lists of companies or deals.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { Row } from '../../platform/resource/define.ts';
import { memberOf } from '../../platform/resource/memberships.ts';
import { createRecord, getRow, present, presentOne } from '../../platform/resource/store.ts';
import { deleteIn, selectIn, tenantOf, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { CONTACT_LIST_TYPES, lists } from './lists.resource.ts';
import type { Entry } from './lists.schemas.ts';

type EntryRow = Selectable<DB['list_entries']>;

export const toEntry = (r: EntryRow): Entry => ({
  id: r.id, list_id: r.list_id, value: r.value, kind: r.kind as Entry['kind'], created_at: Number(r.created_at),
});

/** Creates a list outside a request (seeders, tools): the same write as POST /v1/lists. */
/** Checks that `listId` is a list of the tenant holding contacts (404, or 400 naming its type): what `purpose` (`A campaign audience`) must be. */
export async function requireContactList(w: WriteContext, listId: string, purpose: string): Promise<void> {
  const list = await selectIn(w.tx, 'lists', w.scope).select('type').where('id', '=', listId).executeTakeFirst();
  if (!list) throw notFound(lists.notFound);
  if (!CONTACT_LIST_TYPES.includes(list.type)) throw badRequest(`${purpose} must be a list of type ${CONTACT_LIST_TYPES.join(' or ')}; list ${listId} is of type ${list.type}`);
}

export const createList = (w: WriteContext, input: { name: string; type: string; description?: string | null }) => createRecord(lists, w, input);

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

const moveCount = (w: WriteContext, listId: string, delta: number) =>
  updateIn(w.tx, 'lists', w.scope).set((eb) => ({ member_count: eb('member_count', '+', delta), updated_at: w.now })).where('id', '=', listId).execute();

/** Adds suppression entries; values already on the list are reported, not duplicated. */
export async function addEntries(w: WriteContext, listId: string, values: string[]) {
  const list = await getRow(lists, w.tx, w.dialect, w.scope, listId);
  if (list.type !== 'suppressions') throw badRequest('Entries can only be added to lists of type suppressions');
  const normalized = [...new Set(values.map((v) => v.trim().toLowerCase()))];
  const invalid = normalized.filter((v) => !EMAIL.test(v) && !DOMAIN.test(v));
  if (invalid.length > 0) throw badRequest(`Not an e-mail address or domain: ${invalid.slice(0, 5).join(', ')}`);
  const existing = await selectIn(w.tx, 'list_entries', w.scope).selectAll().where('list_id', '=', listId).where('value', 'in', normalized).execute();
  const known = new Set(existing.map((e) => e.value));
  const fresh: EntryRow[] = normalized.filter((v) => !known.has(v)).map((value) => ({
    id: newId('ent'), ...tenantOf(w.scope), list_id: listId, value, kind: EMAIL.test(value) ? 'email' : 'domain', created_at: w.now,
  }));
  if (fresh.length > 0) {
    await w.tx.insertInto('list_entries').values(fresh).execute();
    await moveCount(w, listId, fresh.length);
    const after = await presentOne(lists, w.tx, w.scope, { ...list, member_count: Number(list.member_count) + fresh.length, updated_at: w.now });
    w.emit('list.entries_added', { ...after, added: fresh.map((e) => e.value) });
  }
  return { added: fresh.length, existing: existing.length, entries: [...existing, ...fresh].map(toEntry) };
}

export async function deleteEntry(w: WriteContext, listId: string, entryId: string): Promise<{ id: string; deleted: true }> {
  const list = await getRow(lists, w.tx, w.dialect, w.scope, listId);
  const removed = await deleteIn(w.tx, 'list_entries', w.scope).where('id', '=', entryId).where('list_id', '=', listId).returningAll().executeTakeFirst();
  if (!removed) throw notFound('Entry not found');
  await moveCount(w, listId, -1);
  w.emit('list.entry_deleted', { ...toEntry(removed), list: await presentOne(lists, w.tx, w.scope, { ...list, member_count: Number(list.member_count) - 1 }) });
  return { id: entryId, deleted: true };
}

export async function listEntries(db: Kysely<DB>, scope: Scope, listId: string, page: PageRequest) {
  let q = selectIn(db, 'list_entries', scope).selectAll().where('list_id', '=', listId);
  if (page.after !== undefined) q = q.where('id', '<', String(page.after));
  return q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute();
}

/** The resource whose records a list of this type holds as members (companies, deals), if any. */
async function memberResource(type: string) {
  const { resources } = await import('../registry.ts');
  return resources.find((r) => r.listable && r.plural === type);
}

async function memberList(db: Kysely<DB>, dialect: Dialect, scope: Scope, listId: string) {
  const list = await getRow(lists, db, dialect, scope, listId);
  const resource = await memberResource(list.type as string);
  if (!resource) throw badRequest(`Lists of type ${String(list.type)} do not hold members: contacts join a list through their list_id, suppression lists hold entries`);
  return { list, resource };
}

/** Adds records of the list's type; records already on it are reported, not duplicated; unknown ids are 404. */
export async function addMembers(w: WriteContext, listId: string, ids: string[]) {
  const { list, resource } = await memberList(w.tx, w.dialect, w.scope, listId);
  const wanted = [...new Set(ids)];
  const found = new Set((await selectIn(w.tx, resource.table, w.scope).select(sql.ref('id').as('id') as never).where(sql.ref('id'), 'in', wanted).execute()).map((r) => (r as { id: string }).id));
  const missing = wanted.filter((id) => !found.has(id));
  if (missing.length > 0) throw notFound(`${resource.notFound}: ${missing.slice(0, 5).join(', ')}`);
  const existing = new Set((await selectIn(w.tx, 'list_members', w.scope).select('record_id').where('list_id', '=', listId).where('record_id', 'in', wanted).execute()).map((m) => m.record_id));
  const fresh = wanted.filter((id) => !existing.has(id));
  if (fresh.length > 0) {
    await w.tx.insertInto('list_members').values(fresh.map((record_id) => ({ ...tenantOf(w.scope), list_id: listId, record_id, created_at: w.now }))).execute();
    await moveCount(w, listId, fresh.length);
    const after = await presentOne(lists, w.tx, w.scope, { ...list, member_count: Number(list.member_count) + fresh.length, updated_at: w.now });
    w.emit('list.members_added', { ...after, added: fresh });
  }
  return { added: fresh.length, existing: existing.size, member_count: Number(list.member_count) + fresh.length };
}

export async function removeMember(w: WriteContext, listId: string, recordId: string): Promise<{ id: string; deleted: true }> {
  const { list } = await memberList(w.tx, w.dialect, w.scope, listId);
  const removed = await deleteIn(w.tx, 'list_members', w.scope).where('list_id', '=', listId).where('record_id', '=', recordId).executeTakeFirst();
  if (Number(removed.numDeletedRows) === 0) throw notFound('Member not found');
  await moveCount(w, listId, -1);
  const after = await presentOne(lists, w.tx, w.scope, { ...list, member_count: Number(list.member_count) - 1, updated_at: w.now });
  w.emit('list.member_removed', { ...after, removed: recordId });
  return { id: recordId, deleted: true };
}

/** The list's member records, newest first, in the API form of their resource. */
export async function memberPage(db: Kysely<DB>, dialect: Dialect, scope: Scope, listId: string) {
  const { list, resource } = await memberList(db, dialect, scope, listId);
  return {
    total: Number(list.member_count),
    fetch: async (page: PageRequest) => {
      let q = selectIn(db, resource.table, scope).selectAll().where(memberOf(resource.table, listId));
      if (page.after !== undefined) q = q.where(sql.ref('id'), '<', String(page.after));
      return (await q.orderBy(sql.ref('id'), 'desc').limit(page.take).offset(page.offset).execute()) as Row[];
    },
    map: (rows: Row[]) => present(resource, db, scope, rows),
  };
}
