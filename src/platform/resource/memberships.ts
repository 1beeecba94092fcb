// List membership of records (lists of type companies or deals hold their records). A resource whose
// definition says `listable: true` gets the `list_id` filter, and its deleted records leave their lists
// (whose member_count follows), so membership stays exact whatever removes a record.
import { sql, type SqlBool } from 'kysely';
import type { WriteContext } from '../write.ts';
import { deleteIn, updateIn } from './tenancy.ts';

/** The condition "the row of `table` is a member of list `listId`", for the `list_id` filter. */
export const memberOf = (table: string, listId: string) =>
  sql<SqlBool>`exists (select 1 from list_members m where m.org_id = ${sql.ref(`${table}.org_id`)} and m.mode = ${sql.ref(`${table}.mode`)} and m.list_id = ${listId} and m.record_id = ${sql.ref(`${table}.id`)})`;

/** Removes a deleted record from every list it was on. */
export async function leaveLists(w: WriteContext, recordId: string): Promise<void> {
  const left = await deleteIn(w.tx, 'list_members', w.scope).where('record_id', '=', recordId).returning('list_id').execute();
  for (const { list_id } of left) {
    await updateIn(w.tx, 'lists', w.scope).set((eb) => ({ member_count: eb('member_count', '-', 1), updated_at: w.now })).where('id', '=', list_id).execute();
  }
}
