// The write path, one module per concern under write/: every write runs in one transaction that
// also records its events, moves its counters, enqueues its jobs and stores its idempotent
// response, so an acknowledged write has all of them and a failed one has none.
//   write/context.ts     the write context (WriteContext): what one write reads and changes
//   write/events.ts      the events it records, and who made it (Actor)
//   write/counters.ts    tenant counters and the moves of number columns (Tally), the tenant lock
//   write/deferred.ts    statements queued to its end, rows of one shape merged into few inserts
//   write/parts.ts       parts of a write done whole or refused alone (savepoints)
//   write/jobs.ts        the jobs it enqueues (transactional outbox)
//   write/end.ts         its end: one statement on PostgreSQL, the stored responses counted
//   write/fanout.ts      the event fan-out: what the app's consumers make of the events (webhooks)
//   write/read-ahead.ts  what writes read once for many (ReadAhead, shared reads)
//   write/commit.ts      transactions of one or many writes (runWrite, writeIn)
//   write/queue.ts       group commit of the writes of requests (WriteQueue)
//   write/http.ts        a route's write and answer (mutate, respond)
export { WriteContext } from './write/context.ts';
export { bumpCounter, readCounter } from './write/counters.ts';
export type { DeferredStatement, QueuedInsert } from './write/deferred.ts';
export { actorColumns, type Actor, type PendingEvent } from './write/events.ts';
export { consumeEvents, type EventConsumer, type EventFollower, type EventWrite, type FollowedEvent } from './write/fanout.ts';
export type { Attempted } from './write/parts.ts';
export type { Ahead, ReadAhead } from './write/read-ahead.ts';
export { runWrite, writeIn, type Writer } from './write/commit.ts';
export { WriteQueue } from './write/queue.ts';
export { mutate, respond } from './write/http.ts';
