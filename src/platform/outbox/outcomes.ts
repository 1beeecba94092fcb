// What became of a sent message, from whoever learns it: the local driver at once, a delivery
// status notification or a reply read from a mailbox, or a test's `simulate`. Each outcome is
// recorded once (the first opening, the first click), with its event; a hard bounce suppresses the
// addresses it bounced for on the message's channel, so they are never sent to again.
import { updateIn, selectIn } from '../resource/tenancy.ts';
import { presentOne } from '../resource/store.ts';
import type { Row } from '../resource/define.ts';
import type { WriteContext } from '../write.ts';
import { outboxMessages } from './outbox.resource.ts';
import { suppress, type Channel } from './suppressions.ts';
import { parseJson } from '../../db/sql.ts';

export const OUTCOMES = ['delivered', 'bounced', 'opened', 'clicked', 'replied'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface OutcomeDetail {
  /** Why it bounced (the server's reply), or what the reply was. */
  reason?: string;
  /** A bounce for good (a mailbox that does not exist): the address is suppressed. True unless said. */
  hard?: boolean;
  /** For a reply: whether it was an automatic one (out of office), which counts as no reply. */
  isAutoReply?: boolean;
  /** For an automatic reply: when it says its writer is back (unix seconds), if it says. */
  returnsAt?: number;
  /** The recipients it bounced for; all of them unless given. */
  addresses?: string[];
}

const COLUMN: Record<Outcome, 'delivered_at' | 'bounced_at' | 'opened_at' | 'clicked_at' | 'replied_at'> = {
  delivered: 'delivered_at', bounced: 'bounced_at', opened: 'opened_at', clicked: 'clicked_at', replied: 'replied_at',
};

/**
 * Records `outcome` of the outbox message `id`; false when the message does not exist or the outcome
 * was recorded before (it then changes nothing). A bounce after a delivery replaces it (a server
 * may accept and bounce later); a delivery after a bounce is ignored.
 */
export async function recordOutcome(w: WriteContext, id: string, outcome: Outcome, detail: OutcomeDetail = {}): Promise<boolean> {
  const row = await selectIn(w.tx, 'outbox_messages', w.scope).selectAll().where('id', '=', id).executeTakeFirst() as Row | undefined;
  if (!row) return false;
  const column = COLUMN[outcome];
  // An automatic reply is recorded as the reply event only: the message was not answered by a person.
  const counts = !(outcome === 'replied' && detail.isAutoReply);
  if (counts && row[column] !== null) return false;
  if (outcome === 'delivered' && row.status === 'bounced') return false;
  const changes: Record<string, unknown> = { updated_at: w.now };
  if (counts) changes[column] = w.now;
  if (outcome === 'delivered') changes.status = 'delivered';
  if (outcome === 'bounced') Object.assign(changes, { status: 'bounced', error: detail.reason ?? 'The message bounced' });
  if (outcome === 'opened' || outcome === 'clicked' || outcome === 'replied') {
    // Opening, clicking or answering a message proves it arrived.
    if (row.status === 'sent') Object.assign(changes, { status: 'delivered', delivered_at: row.delivered_at ?? w.now });
  }
  await updateIn(w.tx, 'outbox_messages', w.scope).set(changes as never).where('id', '=', id).execute();
  const record = await presentOne(outboxMessages, w.tx, w.scope, { ...row, ...changes } as Row);
  if (outcome === 'replied') w.emit('reply.received', { ...record, is_auto_reply: Boolean(detail.isAutoReply), returns_at: detail.isAutoReply ? detail.returnsAt ?? null : null });
  else w.emit(`message.${outcome}`, record);
  if (outcome === 'bounced' && detail.hard !== false) {
    const addresses = detail.addresses ?? parseJson<string[]>(row.to_addresses);
    for (const address of addresses) {
      await suppress(w, { channel: row.channel as Channel, address, reason: 'hard_bounce', contact_id: row.contact_id as string | null, message_id: row.message_id as string | null, detail: detail.reason });
    }
  }
  return true;
}
