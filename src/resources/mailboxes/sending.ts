// A mailbox's side of a send (the outbox's send job and the mailbox's test call it in the
// transaction that records the attempt): the mailbox's row is locked (PostgreSQL: `for update`;
// SQLite runs one write at a time), its sends of the last day and hour counted from the outbox, and
// the send goes ahead only when both have room; the attempt is then recorded before the lock is let
// go, so two processes never both take the last place.
import { conflict } from '../../platform/errors.ts';
import type { Row } from '../../platform/resource/define.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { allowanceOf, nextFreeSlot, sentBy } from './limits.ts';

export type Held = { room: true } | { retryAt: number; reason: string } | { gone: string };

const gone = (id: string) => ({ gone: `The mailbox ${id} was deleted before the message was sent` });

/**
 * The mailbox `id` locked for the rest of this write's transaction, with one more message counted
 * against it, when it has room for one more now; else when it will have room. The caller records
 * the attempt in the same transaction. The mailbox and its count are read once per transaction (the
 * tenant's writes hold its lock until the commit: no other can send meanwhile), and the transaction
 * counts its own attempts, so a group commit's sends of one mailbox pay for one read of it.
 */
export async function holdMailbox(w: WriteContext, id: string): Promise<Held> {
  const held = await w.shared(`mailbox-hold:${id}`, async () => {
    let read = selectIn(w.tx, 'mailboxes', w.scope).selectAll().where('id', '=', id);
    if (w.dialect === 'postgres') read = read.forUpdate();
    const mailbox = await read.executeTakeFirst() as Row | undefined;
    return { mailbox, sent: mailbox ? (await sentBy(w.tx, w.scope, [id], w.now)).get(id)! : { day: 0, hour: 0 } };
  });
  const { mailbox, sent } = held;
  if (!mailbox) return gone(id);
  const allowance = allowanceOf(mailbox as never, sent, w.now);
  if (allowance.remaining_this_hour < 1) {
    const window = allowance.remaining_today < 1 ? `its limit of ${allowance.today} messages in 24 hours` : `its limit of ${allowance.this_hour} messages an hour`;
    return { retryAt: await nextFreeSlot(w.tx, w.scope, id, allowance, sent, w.now), reason: `The mailbox ${mailbox.email as string} is at ${window}` };
  }
  sent.day++;
  sent.hour++;
  return { room: true };
}

/** 409 for a test asked of a mailbox at its limit, naming when it has room again. */
export const atLimit = (held: { retryAt: number; reason: string }) =>
  conflict(`${held.reason}: it has room again at ${new Date(held.retryAt * 1000).toISOString()}`);
