// The credit ledger of a tenant. The balance is a maintained counter moved in the same transaction
// as the ledger row and the work it pays for, so balance_after is always the true running balance.
import type { Selectable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { AppError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { bumpCounter, type WriteContext } from '../../platform/write.ts';

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
});

interface Entry {
  type: 'grant' | 'debit' | 'refund';
  amount: number;
  operation: string;
  resourceId?: string | null;
  description?: string | null;
}

async function record(w: WriteContext, entry: Entry, signed: number) {
  const balance = await bumpCounter(w.tx, w.scope, 'credits', signed);
  if (balance < 0) {
    // Thrown inside the transaction: the debit and the work it pays for roll back together.
    throw new AppError('payment_required', `Not enough credits: ${entry.operation} needs ${entry.amount} and the balance is ${balance + entry.amount}`);
  }
  const row: Row = {
    id: newId('txn'), org_id: w.scope.orgId, mode: w.scope.mode, type: entry.type, amount: entry.amount, balance_after: balance,
    operation: entry.operation, resource_id: entry.resourceId ?? null, description: entry.description ?? null, created_at: w.now,
  };
  await w.tx.insertInto('usage_transactions').values(row).execute();
  w.count('usage_transactions', 1);
  const txn = toTransaction(row);
  w.emit(`usage.${entry.type}`, txn);
  return txn;
}

export const grantCredits = (w: WriteContext, amount: number, description: string) =>
  record(w, { type: 'grant', amount, operation: 'grant', description }, amount);

/** Debits `amount` credits, or throws 402 (rolling back the whole write) when the balance is short. */
export const debitCredits = (w: WriteContext, amount: number, operation: string, resourceId: string, description: string) =>
  record(w, { type: 'debit', amount, operation, resourceId, description }, -amount);
