// What an inbound message tells about a message the service sent: it was answered (by a person, or
// automatically: recorded as `reply.received` with `is_auto_reply`, but not as a reply), or its
// delivery failed. Recorded on the outbox message by the outbox's own outcomes (status, time, the
// event; a hard bounce suppresses the address it bounced for).
import { returnDate } from '../../platform/mail/return-date.ts';
import { recordOutcome } from '../../platform/outbox/outcomes.ts';
import type { WriteContext } from '../../platform/write.ts';

/** The message was answered; an automatic answer's `text` may say when its writer is back (return-date.ts). */
export async function markReplied(w: WriteContext, outboxId: string, automatic: boolean, text: string | null): Promise<void> {
  await recordOutcome(w, outboxId, 'replied', { isAutoReply: automatic, returnsAt: automatic ? returnDate(text, w.now) : undefined });
}

export async function markBounced(w: WriteContext, outboxId: string, bounce: { hard: boolean; reason?: string; address: string | null }): Promise<void> {
  await recordOutcome(w, outboxId, 'bounced', { hard: bounce.hard, reason: bounce.reason, ...(bounce.address ? { addresses: [bounce.address] } : {}) });
}
