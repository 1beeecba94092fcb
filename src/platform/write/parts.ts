// The parts of a write (a record of a batch, a row of an import), each done whole or refused alone:
// run bare first, and under a savepoint each only when one of them was refused (see `attempt`).
import { CompiledQuery, type Transaction } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import { isUnavailable, isUniqueViolation } from '../error-handler.ts';
import { AppError } from '../errors.ts';

const SAVEPOINT = CompiledQuery.raw('savepoint part');
const RELEASE = CompiledQuery.raw('release savepoint part');
const ROLLBACK_TO = CompiledQuery.raw('rollback to savepoint part');

/** A part of a write (`attempt`): its value, or the error that refused it. */
export type Attempted<T> = { value: T } | { error: AppError };

/**
 * Thrown out of an unguarded write (see `attempt`) when one of its parts is refused: the
 * transaction is rolled back and the write runs again with a savepoint around each part.
 */
export class PartRefused extends Error {}

/** An error that refuses a part of a write, rather than failing the whole write. */
export const isRefusal = (error: Error) => !isUnavailable(error) && (error instanceof AppError || isUniqueViolation(error));

/** An unguarded part: its value, or `PartRefused` for the whole write when it is refused. */
export async function bare<T>(work: () => Promise<T>, end: () => Promise<void> | void): Promise<Attempted<T>> {
  try {
    const value = await work();
    await end();
    return { value };
  } catch (error) {
    throw isRefusal(error as Error) ? new PartRefused() : error;
  }
}

/**
 * A guarded part: under a savepoint, `flush`ed before it is released (the next parts must see this
 * one: a later record may name the same key); rolled back to it, and `undo` called, when it is
 * refused. Store failures are not a part's: they end the whole write.
 */
export async function underSavepoint<T>(tx: Transaction<DB>, dialect: Dialect, work: () => Promise<T>, flush: () => Promise<void>, undo: () => void): Promise<Attempted<T>> {
  await tx.executeQuery(SAVEPOINT);
  try {
    const value = await work();
    await flush();
    if (dialect === 'sqlite') await tx.executeQuery(RELEASE);
    return { value };
  } catch (error) {
    if (isUnavailable(error as Error)) throw error;
    await tx.executeQuery(ROLLBACK_TO);
    undo();
    if (error instanceof AppError) return { error };
    if (isUniqueViolation(error as Error)) return { error: new AppError('conflict', 'The record conflicts with an existing record') };
    throw error;
  }
}
