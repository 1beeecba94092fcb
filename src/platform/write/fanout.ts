// The platform's event fan-out: what else the events of a write cause, decided by the consumers the
// app registers where it is built (src/app.ts, src/worker.ts, src/cli.ts): webhook deliveries first,
// destinations and workflows next. A consumer turns a write's events into a statement run with the
// write's end (on PostgreSQL in the same round trip), so what it causes commits with the events or
// not at all. A follower does more: it reads and writes in the write's own transaction before its
// end (a reply finishes the sender's sequence enrollment, with that enrollment's event), so it is
// given the write itself, and only the events of the types it follows. The platform knows no
// consumer nor follower: it is told them.
import type { Transaction } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { EventType } from '../event-types.ts';
import type { DB } from '../../db/schema.ts';
import type { Scope } from '../scope.ts';
import type { DeferredStatement } from './deferred.ts';
import type { PendingEvent } from './events.ts';
import type { WriteContext } from './context.ts';

/** What a consumer sees of the write: its transaction, its tenant, its store. */
export interface EventWrite {
  readonly tx: Transaction<DB>;
  readonly scope: Scope;
  readonly dialect: Dialect;
}

/** The statement a write's events cause, if any. It must not read what the write's end writes. */
export type EventConsumer = (w: EventWrite, events: readonly PendingEvent[]) => DeferredStatement | undefined;

/** An event of a write as a follower gets it: its type and object. */
export interface FollowedEvent {
  type: EventType;
  object: Record<string, unknown> & { id: string };
  /** The earlier values of what changed, when the event records them. */
  previous: Record<string, unknown> | null;
}

/** Reads and writes in the write of the events it follows, before the write's end. */
export interface EventFollower {
  types: readonly EventType[];
  follow(w: WriteContext, events: readonly FollowedEvent[]): Promise<void>;
}

// Per process: every app built in it (tests build many) and its workers share them.
const consumers: EventConsumer[] = [];
const followers: EventFollower[] = [];

/** Registers consumers and followers of every write's events, in order; one registered again is not added twice. */
export function consumeEvents(registered: ReadonlyArray<EventConsumer | EventFollower>): void {
  for (const one of registered) {
    if (typeof one === 'function') {
      if (!consumers.includes(one)) consumers.push(one);
    } else if (!followers.includes(one)) followers.push(one);
  }
}

/** Rounds of following: a follower's own events are followed too, up to this depth. */
const MAX_ROUNDS = 4;

/** Lets the followers act on `events` (from `from` on) and on the events they record in turn. */
export async function follow(w: WriteContext, events: readonly PendingEvent[], from: number): Promise<void> {
  for (let round = 0; round < MAX_ROUNDS && from < events.length && followers.length > 0; round++) {
    const until = events.length;
    for (const follower of followers) {
      const mine = events.slice(from, until).filter((e) => follower.types.includes(e.type));
      if (mine.length > 0) {
        await follower.follow(w, mine.map((e) => ({
          type: e.type,
          object: (JSON.parse(e.data) as { object: FollowedEvent['object'] }).object,
          previous: e.previous_attributes ? JSON.parse(e.previous_attributes) as Record<string, unknown> : null,
        })));
      }
    }
    from = until;
  }
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
