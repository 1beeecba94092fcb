// Soft delete (a definition's `softDelete`): DELETE stamps `deleted_at` and keeps the row, so what
// names the record (messages sent, history, analytics) still finds it, while the API no longer does.
// Every kernel read of the resource's records starts from `recordsIn`, so a deleted one is absent
// from reads by id, lists, totals, filters, searches and reference checks alike: 404 as an id that
// never existed. The table needs a nullable `deleted_at` column, and its indexes leave deleted rows
// out (`where deleted_at is null`), so they never lengthen the tenant's lists or counts.
import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Scope } from '../scope.ts';
import type { WriteContext } from '../write.ts';
import type { ResourceDefinition } from './define.ts';
import { selectIn, updateIn, type TenantTable } from './tenancy.ts';

/** The condition that keeps a table's records not deleted, for a read that starts elsewhere (a join, an `exists`). */
export const notDeleted = (table: string) => sql<SqlBool>`${sql.ref(`${table}.deleted_at`)} is null`;

/** `q` (a select or an update of the resource's table) without the records of `r` a soft delete took out. */
export function live<Q extends { where(condition: RawBuilder<SqlBool>): Q }>(r: ResourceDefinition, q: Q): Q {
  return r.softDelete ? q.where(notDeleted(r.table)) : q;
}

/** The tenant's records of `r`: `selectIn` of its table, without those it soft-deleted. */
export const recordsIn = (r: ResourceDefinition, db: Kysely<DB>, scope: Scope) => live(r, selectIn(db, r.table as TenantTable, scope));

/** Takes the record out of the API, keeping its row. */
export async function markDeleted(r: ResourceDefinition, w: WriteContext, id: string): Promise<void> {
  await updateIn(w.tx, r.table as TenantTable, w.scope).set({ deleted_at: w.now } as never).where(sql.ref('id'), '=', id).execute();
}
