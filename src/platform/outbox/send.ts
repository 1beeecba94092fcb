// Queuing a message: one outbox row, written with the write that asks for it, and the job that sends
// it (committed together: a message is asked for exactly when its cause is). The row is keyed by the
// send's key (what is sent: a thread's reply, a sequence step for one enrollment), so asking again
// answers the first row; and its Message-ID is made from that key before any provider call, so the
// sender, a reply and a bounce all name the same message whatever happens to the process.
import { createHash } from 'node:crypto';
import { newId, creationTime } from '../ids.ts';
import { presentOne } from '../resource/store.ts';
import { selectIn, tenantOf } from '../resource/tenancy.ts';
import type { WriteContext } from '../write.ts';
import { outboxMessages } from './outbox.resource.ts';
import { listUnsubscribeHeaders, normalizeAddress, suppressionOf, unsubscribeLink } from './suppressions.ts';

export interface OutgoingEmail {
  from: string;
  fromName?: string | null;
  to: string[];
  replyTo?: string | null;
  subject: string;
  text?: string | null;
  html?: string | null;
  headers?: Record<string, string>;
  /** The Message-ID this one answers (a reply), and the thread's earlier ones. */
  inReplyTo?: string | null;
  references?: string[];
  mailboxId?: string | null;
  connectionId?: string | null;
  contactId?: string | null;
  record?: { type: string; id: string } | null;
  stepId?: string | null;
  threadId?: string | null;
  /** Marketing mail carries a one-click unsubscribe link per recipient (RFC 8058); replies do not. */
  marketing?: boolean;
}

/** The send job's kind as a write names it (its handler lives with the outbox's API group). */
export const OUTBOX_SEND = { name: 'outbox.send', maxAttempts: 8 };
export interface SendPayload { id: string }

/** The Message-ID of the send keyed `sendKey` of a tenant, on the sender's domain. */
export function messageIdFor(w: WriteContext, sendKey: string, from: string): string {
  const digest = createHash('sha256').update(`${w.scope.orgId}\n${w.scope.mode}\n${sendKey}`).digest('hex').slice(0, 40);
  return `<${digest}@${from.slice(from.lastIndexOf('@') + 1).toLowerCase()}>`;
}

/**
 * Queues `message` under `sendKey` (unique per tenant): the row and its send job, with the write; a
 * key asked before answers the first message unchanged. A suppressed recipient makes it
 * `suppressed`: recorded, never sent. `options.runAt` (milliseconds) delays the job: a caller that
 * sends at once itself leaves it as a guard that records the send interrupted if the process stops.
 */
export async function queueEmail(w: WriteContext, sendKey: string, message: OutgoingEmail, options: { runAt?: number } = {}): Promise<{ id: string; message_id: string; status: string; created: boolean }> {
  const known = await selectIn(w.tx, 'outbox_messages', w.scope).select(['id', 'message_id', 'status']).where('send_key', '=', sendKey).executeTakeFirst();
  if (known) return { id: known.id, message_id: known.message_id ?? '', status: known.status, created: false };
  const to = [...new Set(message.to.map((a) => normalizeAddress('email', a)))];
  const messageId = messageIdFor(w, sendKey, message.from);
  let suppressed: string | undefined;
  for (const address of to) {
    const found = await suppressionOf(w.tx, w.scope, 'email', address);
    if (found) suppressed = `${address} is suppressed (${found.reason})`;
  }
  const headers: Record<string, string> = { ...message.headers };
  if (message.inReplyTo) headers['In-Reply-To'] = message.inReplyTo;
  if (message.references?.length) headers.References = message.references.join(' ');
  if (message.marketing && !suppressed) {
    const link = unsubscribeLink(w, { channel: 'email', address: to[0], contact_id: message.contactId ?? null, message_id: messageId });
    Object.assign(headers, listUnsubscribeHeaders(link.url));
  }
  const id = newId('msg');
  const at = creationTime(id, w.now);
  const row = {
    ...tenantOf(w.scope), id, channel: 'email', status: suppressed ? 'suppressed' : 'queued', provider: w.scope.mode === 'test' ? 'local' : 'pending',
    connection_id: message.connectionId ?? null, mailbox_id: message.mailboxId ?? null, send_key: sendKey, message_id: messageId,
    from_address: message.fromName ? `${message.fromName} <${message.from}>` : message.from, to_addresses: JSON.stringify(to),
    subject: message.subject, text: message.text ?? null, html: message.html ?? null, headers: JSON.stringify(headers),
    record_type: message.record?.type ?? null, record_id: message.record?.id ?? null, step_id: message.stepId ?? null,
    contact_id: message.contactId ?? null, thread_id: message.threadId ?? null, provider_answer: null, error: suppressed ?? null,
    attempts: 0, attempted_at: null, sent_at: null, delivered_at: null, opened_at: null, clicked_at: null, replied_at: null, bounced_at: null,
    created_at: at, updated_at: at,
  };
  await w.tx.insertInto('outbox_messages').values(row).execute();
  if (!suppressed) w.enqueue(OUTBOX_SEND, { id } satisfies SendPayload, options);
  else w.emit('message.failed', await presentOne(outboxMessages, w.tx, w.scope, row));
  return { id, message_id: messageId, status: row.status, created: true };
}
