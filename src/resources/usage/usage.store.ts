// The credit ledger of a tenant. The balance is a maintained counter moved in the same transaction
// as the ledger row and the work it pays for, so balance_after is always the true running balance.
import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { AppError } from '../../platform/errors.ts';
import { nowMillis } from '../../platform/clock.ts';
import { newId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { Scope } from '../../platform/scope.ts';
import { actorOf } from '../../platform/schemas.ts';
import { actorColumns, bumpCounter, readCounter, type Actor, type WriteContext } from '../../platform/write.ts';
import type { TransactionQuery, Usage } from './usage.schemas.ts';

type Row = Selectable<DB['usage_transactions']>;

export const toTransaction = (r: Row) => ({
  id: r.id,
  type: r.type as 'grant' | 'debit' | 'refund',
  amount: Number(r.amount),
  balance_after: Number(r.balance_after),
  operation: r.operation,
  resource_id: r.resource_id,
  description: r.description,
  created_at: Number(r.created_at),
  actor: actorOf(r),
});

interface Entry {
  type: 'grant' | 'debit' | 'refund';
  amount: number;
  operation: string;
  resourceId?: string | null;
  description?: string | null;
}

async function record(w: WriteContext, entry: Entry, signed: number, actor = w.actor) {
  const balance = await bumpCounter(w.tx, w.dialect, w.scope, 'credits', signed);
  if (balance < 0) {
    // Thrown inside the transaction: the debit and the work it pays for roll back together.
    throw new AppError('payment_required', `Not enough credits: ${entry.operation} needs ${entry.amount} and the balance is ${balance + entry.amount}`);
  }
  const row: Row = {
    id: newId('txn'), org_id: w.scope.orgId, mode: w.scope.mode, type: entry.type, amount: entry.amount, balance_after: balance,
    operation: entry.operation, resource_id: entry.resourceId ?? null, description: entry.description ?? null, created_at: w.now,
    ...actorColumns(actor),
  };
  await w.tx.insertInto('usage_transactions').values(row).execute();
  w.count('usage_transactions', 1);
  const txn = toTransaction(row);
  w.emit(`usage.${entry.type}`, txn);
  return txn;
}

export const grantCredits = (w: WriteContext, amount: number, description: string) =>
  record(w, { type: 'grant', amount, operation: 'grant', description }, amount);

/** Gives back `amount` credits debited for work that did not happen (a message never sent). */
export const refundCredits = (w: WriteContext, amount: number, operation: string, resourceId: string, description: string) =>
  record(w, { type: 'refund', amount, operation, resourceId, description }, amount);

/**
 * Debits `amount` credits, or throws 402 (rolling back the whole write) when the balance is short.
 * `actor` is who it is charged to when not the write's own (a job paying for what a key started).
 */
export const debitCredits = (w: WriteContext, amount: number, operation: string, resourceId: string, description: string, actor?: Actor | null) =>
  record(w, { type: 'debit', amount, operation, resourceId, description }, -amount, actor === undefined ? w.actor : actor);

const scoped = (db: Kysely<DB>, scope: Scope) =>
  db.selectFrom('usage_transactions').where('org_id', '=', scope.orgId).where('mode', '=', scope.mode);

export function listTransactions(db: Kysely<DB>, scope: Scope, query: TransactionQuery, page: PageRequest): Promise<Row[]> {
  let q = scoped(db, scope).selectAll();
  if (query.type !== undefined) q = q.where('type', '=', query.type);
  if (page.after !== undefined) q = q.where('id', '<', String(page.after));
  return q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute();
}

/** The exact number of transactions; the unfiltered total is a maintained counter. */
export async function countTransactions(db: Kysely<DB>, scope: Scope, query: TransactionQuery): Promise<number> {
  if (query.type === undefined) return readCounter(db, scope, 'usage_transactions');
  const row = await scoped(db, scope).select((eb) => eb.fn.countAll<number>().as('n')).where('type', '=', query.type).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The current calendar month in UTC, as unix seconds [start, end). */
export function currentPeriod(now = new Date(nowMillis())): { start: number; end: number } {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  return { start: Date.UTC(year, month, 1) / 1000, end: Date.UTC(year, month + 1, 1) / 1000 };
}

/** The balance and the sums of this month's ledger, by type. */
export async function readUsage(db: Kysely<DB>, scope: Scope): Promise<Usage> {
  const { start, end } = currentPeriod();
  const [balance, sums] = await Promise.all([
    readCounter(db, scope, 'credits'),
    scoped(db, scope).select((eb) => ['type', eb.fn.sum<number>('amount').as('total'), eb.fn.countAll<number>().as('n')])
      .where('created_at', '>=', start).where('created_at', '<', end).groupBy('type').execute(),
  ]);
  const of = (type: string) => sums.find((s) => s.type === type);
  return {
    balance, period_start: start, period_end: end,
    granted: Number(of('grant')?.total ?? 0), debited: Number(of('debit')?.total ?? 0), refunded: Number(of('refund')?.total ?? 0),
    transactions: sums.reduce((n, s) => n + Number(s.n), 0),
  };
}
