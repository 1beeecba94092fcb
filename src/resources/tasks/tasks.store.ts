// What tasks do beyond plain CRUD: `completed_at` follows `status` (set on completing, cleared on
// reopening), the move is recorded as `task.completed` or `task.reopened`, `overdue` (open and
// past `due_at`) is computed at the time of reading, never stored, and an assignee that is a member
// id must name a member (members/assignee.ts).
import { sql, type SqlBool } from 'kysely';
import { nowSeconds } from '../../platform/ids.ts';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { presentOne } from '../../platform/resource/store.ts';
import type { WriteContext } from '../../platform/write.ts';
import { checkAssignee } from '../members/assignee.ts';
import { tasks } from './tasks.resource.ts';

/** True for the rows of `table` that are open and past their due time now. */
export const overdueWhere = (table: string) =>
  sql<SqlBool>`(${sql.ref(`${table}.status`)} = 'open' and ${sql.ref(`${table}.due_at`)} < ${nowSeconds()})`;

/** The `status` filter: a stored status, or `overdue` (open tasks past their due time). */
export const statusWhere = (table: string, status: string) =>
  status === 'overdue' ? overdueWhere(table) : sql<SqlBool>`${sql.ref(`${table}.status`)} = ${status}`;

/** `overdue` as 1 or 0, for searching and sorting on it. */
export const overdueValue = (table: string) => sql<number>`case when ${overdueWhere(table)} then 1 else 0 end`;

export const isOverdue = (task: Record<string, unknown>, now = nowSeconds()) =>
  task.status === 'open' && task.due_at !== null && task.due_at !== undefined && Number(task.due_at) < now;

// Hooks are function declarations: tasks.resource.ts and this file import each other.
export async function beforeWrite(w: WriteContext, row: Record<string, unknown>, { before }: { before?: Row }): Promise<void> {
  // A member id must name a member when given, and when the task is reopened: no open task names a
  // member that was deleted (a completed one keeps the id it had, as a record of who did it).
  const reopened = before?.status === 'completed' && row.status === 'open';
  if ((row.assignee !== undefined && row.assignee !== before?.assignee) || reopened) await checkAssignee(w.tx, w.scope, row.assignee === undefined ? before?.assignee : row.assignee);
  if (row.status === undefined || row.status === before?.status) return;
  row.completed_at = row.status === 'completed' ? w.now : null;
}

export async function afterWrite(w: WriteContext, row: Row, { before }: { before?: Row }): Promise<void> {
  if (!before || before.status === row.status) return;
  const record = await presentOne(tasks, w.tx, w.scope, row);
  w.emit(row.status === 'completed' ? 'task.completed' : 'task.reopened', record, { status: before.status, completed_at: before.completed_at === null ? null : Number(before.completed_at) });
}

export async function enrich(_db: unknown, _scope: unknown, _rows: Row[], records: ApiRecord[]): Promise<void> {
  const now = nowSeconds();
  for (const record of records) record.overdue = isOverdue(record, now);
}
