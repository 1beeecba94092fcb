// What mailboxes do beyond plain CRUD: the connection must be an e-mail one; turning the warm-up on
// starts it now; `allowance` is computed when read, from the outbox (limits.ts).
import { AppError, notFound } from '../../platform/errors.ts';
import { nowSeconds } from '../../platform/ids.ts';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { allowanceOf, sentBy, warmupOf } from './limits.ts';

export const CONNECTION_NOT_FOUND = 'Connection not found';

/** The connection a mailbox names must exist (404) and be an e-mail one (422). */
async function checkConnection(w: WriteContext, id: string): Promise<void> {
  const found = await selectIn(w.tx, 'connections', w.scope).select(['kind']).where('id', '=', id).executeTakeFirst();
  if (!found) throw notFound(CONNECTION_NOT_FOUND);
  if (found.kind !== 'email') throw new AppError('validation', `Connection ${id} is of kind ${found.kind}: a mailbox sends through an email connection`, { param: 'connection_id' });
}

// Hooks are function declarations: mailboxes.resource.ts and this file import each other.
export async function beforeWrite(w: WriteContext, row: Record<string, unknown>, { before }: { before?: Row }): Promise<void> {
  if (typeof row.connection_id === 'string' && row.connection_id !== before?.connection_id) await checkConnection(w, row.connection_id);
  if (row.warmup === undefined) return;
  // A warm-up given in part keeps the rest as it was; turning it on starts it now.
  const given = warmupOf(row.warmup);
  const was = before ? warmupOf(before.warmup) : undefined;
  const warmup = { ...(was ?? given), ...given };
  if (was) {
    const input = JSON.parse(row.warmup as string) as Record<string, unknown>;
    if (input.start === undefined) warmup.start = was.start;
    if (input.increment_per_day === undefined) warmup.increment_per_day = was.increment_per_day;
  }
  row.warmup = JSON.stringify(warmup);
  if (!warmup.enabled) row.warmup_started_at = null;
  else if (!was?.enabled) row.warmup_started_at = w.now;
}

export async function enrich(db: Kysely<DB>, scope: Scope, rows: Row[], records: ApiRecord[]): Promise<void> {
  const now = nowSeconds();
  const sent = await sentBy(db, scope, rows.map((r) => r.id), now);
  records.forEach((record, i) => {
    record.allowance = allowanceOf(rows[i] as never, sent.get(rows[i].id)!, now);
  });
}

/** Checks that every mailbox named is one of the tenant's, in one statement (else 404 `Mailbox not found`). */
export async function requireMailboxes(w: WriteContext, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const found = new Set((await selectIn(w.tx, 'mailboxes', w.scope).select('id').where('id', 'in', ids).execute()).map((m) => m.id));
  if (ids.some((id) => !found.has(id))) throw notFound('Mailbox not found');
}
