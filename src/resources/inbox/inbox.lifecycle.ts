// The states of a thread: `open` (needs an answer), `snoozed` (put away until a time, when the
// scheduled wake-up brings it back), `closed` (done). A new inbound message brings a snoozed or
// closed thread back to open (receive.ts); an automatic reply does not.
import { Type } from 'typebox';
import { badRequest } from '../../platform/errors.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { ActionOutcome, LifecycleDefinition } from '../../platform/resource/lifecycle.ts';
import type { WriteContext } from '../../platform/write.ts';

export const THREAD_STATES = ['open', 'snoozed', 'closed'] as const;

/** The key of a snoozed thread's wake-up job: a later snooze replaces it, a close or reopen cancels it. */
export const wakeKey = (threadId: string) => `thread.wake:${threadId}`;
/** The job kind's name and attempts (inbox.jobs.ts defines its handler). */
export const WAKE = { name: 'inbox.wake', maxAttempts: 8 };

export const SnoozeBody = Type.Object({
  until: Type.Integer({ minimum: 0, maximum: 1e11, description: 'When the thread comes back to `open`, unix seconds; must be in the future', examples: [1767225600] }),
}, { additionalProperties: false });

async function snooze(w: WriteContext, row: Row, input: Record<string, unknown>): Promise<ActionOutcome> {
  const until = Number(input.until);
  if (!Number.isInteger(until) || until <= w.now) throw badRequest('until must be in the future (unix seconds)', 'until');
  w.schedule(wakeKey(row.id), WAKE, { thread_id: row.id }, until * 1000);
  return { set: { snoozed_until: until } };
}

const unsnoozed = async (w: WriteContext, row: Row): Promise<ActionOutcome> => {
  w.cancel(wakeKey(row.id));
  return { set: { snoozed_until: null } };
};

export const THREAD_LIFECYCLE: LifecycleDefinition = {
  states: THREAD_STATES, initial: 'open',
  description: '`open` (waiting for an answer), `snoozed` (until `snoozed_until`, then open again) or `closed`; a new message from the other side reopens a snoozed or closed thread. Read-only: moved by the thread\'s operations',
  actions: {
    snooze: {
      from: ['open', 'snoozed'], to: 'snoozed', event: 'snoozed', guard: snooze, body: SnoozeBody, errors: [400],
      summary: 'Snooze a thread', eventDescription: 'A thread was snoozed until `snoozed_until`',
      description: 'Puts an open (or already snoozed) thread away until `until` (unix seconds, in the future; else 400): then it is `open` again (`thread.woke`). A message from the other side wakes it earlier.',
    },
    close: {
      from: ['open', 'snoozed'], to: 'closed', event: 'closed', guard: unsnoozed,
      summary: 'Close a thread', eventDescription: 'A thread was closed',
      description: 'Marks the thread done. A later message from the other side reopens it.',
    },
    reopen: {
      from: ['snoozed', 'closed'], to: 'open', event: 'reopened', guard: unsnoozed,
      summary: 'Reopen a thread', eventDescription: 'A snoozed or closed thread was reopened, by a person or by a new message from the other side',
      description: 'Brings a snoozed or closed thread back to `open` (a snoozed one forgets its `snoozed_until`).',
    },
    wake: {
      from: ['snoozed'], to: 'open', event: 'woke', participle: 'woken', route: false, guard: unsnoozed,
      summary: 'Wake a snoozed thread', eventDescription: 'A snoozed thread reached its `snoozed_until` and is open again',
      description: 'Taken by the scheduled wake-up at `snoozed_until`.',
    },
  },
};
