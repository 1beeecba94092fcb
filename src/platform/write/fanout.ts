// The platform's event fan-out: what else the events of a write cause, decided by the consumers the
// app registers where it is built (src/app.ts, src/worker.ts, src/cli.ts): webhook deliveries first,
// destinations and workflows next. A consumer turns a write's events into a statement run with the
// write's end (on PostgreSQL in the same round trip), so what it causes commits with the events or
// not at all. The platform knows no consumer: it is told them.
import type { Transaction } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import type { Scope } from '../scope.ts';
import type { DeferredStatement } from './deferred.ts';
import type { PendingEvent } from './events.ts';

/** What a consumer sees of the write: its transaction, its tenant, its store. */
export interface EventWrite {
  readonly tx: Transaction<DB>;
  readonly scope: Scope;
  readonly dialect: Dialect;
}

/** The statement a write's events cause, if any. It must not read what the write's end writes. */
export type EventConsumer = (w: EventWrite, events: readonly PendingEvent[]) => DeferredStatement | undefined;

// Per process: every app built in it (tests build many) and its workers share them.
const consumers: EventConsumer[] = [];

/** Registers consumers of every write's events, in order; one registered again is not added twice. */
export function consumeEvents(registered: readonly EventConsumer[]): void {
  for (const consumer of registered) if (!consumers.includes(consumer)) consumers.push(consumer);
}

/** The statements the consumers make of `events`, in the order they were registered. */
export function fanOut(w: EventWrite, events: readonly PendingEvent[]): DeferredStatement[] {
  const statements: DeferredStatement[] = [];
  for (const consumer of consumers) {
    const statement = consumer(w, events);
    if (statement) statements.push(statement);
  }
  return statements;
}
