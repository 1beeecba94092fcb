// Who work is assigned to. An assignee (a task's; later an inbox thread's, a deal's owner) is either
// a member, named by id, or free text of the client's own (a name, an e-mail). A value that starts
// with `mem_` names a member: it must be one of the tenant's, so a mistyped id is 404 rather than a
// task nobody is assigned. It is answered as given (the id), never replaced by the member.
import { sql, type Kysely, type SqlBool } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { conflict, notFound } from '../../platform/errors.ts';
import { selectIn, type TenantTable } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';

export const MEMBER_NOT_FOUND = 'Member not found';
export const MEMBER_ID_PREFIX = 'mem_';

export const isMemberId = (value: unknown): value is string => typeof value === 'string' && value.startsWith(MEMBER_ID_PREFIX);

/** Checks an assignee about to be written: a member id must name a member of the tenant (404), free text passes. */
export async function checkAssignee(db: Kysely<DB>, scope: Scope, value: unknown): Promise<void> {
  if (!isMemberId(value)) return;
  const found = await selectIn(db, 'members', scope).select(sql.ref('id').as('id')).where(sql.ref('id'), '=', value).executeTakeFirst();
  if (!found) throw notFound(MEMBER_NOT_FOUND);
}

/**
 * Where members are assigned work that is still to be done, one line per kind: a member who holds
 * any cannot be deleted (409) until it is reassigned or done. Finished work keeps the id as it was
 * given, as a record of who did it.
 */
const OPEN_ASSIGNMENTS: Array<{ table: TenantTable; column: string; open: (table: string) => ReturnType<typeof sql<SqlBool>>; words: [one: string, many: string] }> = [
  { table: 'tasks', column: 'assignee', open: (t) => sql<SqlBool>`${sql.ref(`${t}.status`)} = 'open'`, words: ['open task', 'open tasks'] },
];

/** 409 while the member is the assignee of open work (the count of the first kind that holds it). */
export async function refuseWhileAssigned(db: Kysely<DB>, scope: Scope, memberId: string): Promise<void> {
  for (const { table, column, open, words } of OPEN_ASSIGNMENTS) {
    const { n } = await selectIn(db, table, scope).where(sql.ref(`${table}.${column}`), '=', memberId).where(open(table))
      .select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const count = Number(n);
    if (count > 0) throw conflict(`Member is the assignee of ${count} ${count === 1 ? words[0] : words[1]}; reassign or complete them first, or set is_active to false to keep the member`);
  }
}
