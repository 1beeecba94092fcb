// Recording one inbound message in a tenant's inbox, in one write: recorded once per Message-ID (a
// message polled twice, or polled and posted, is one message), placed in its thread (threading.ts)
// or in a new one, and what it means for the message it answers: a person's reply to a sent message
// marks the send replied (`reply.received`); an automatic reply is kept in the thread and recorded as
// `reply.received` with `is_auto_reply`, but counts as no answer; a delivery status notification
// marks the send bounced (a hard bounce suppresses the address).
import { parseJson } from '../../db/sql.ts';
import { creationTime, newId } from '../../platform/ids.ts';
import type { InboundMail } from '../../platform/mail/parse.ts';
import { performAction } from '../../platform/resource/lifecycle.ts';
import { presentOne } from '../../platform/resource/store.ts';
import { selectIn, tenantOf, updateIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { inbox } from './inbox.resource.ts';
import { messageRecord, type MessageRow } from './messages.ts';
import { markBounced, markReplied } from './sent-outcomes.ts';
import { countMessages } from './thread-writes.ts';
import { knownMessages, normalizeSubject, placeMessage, referred, type Answered } from './threading.ts';

export interface Arrival {
  /** `imap` (polled) or `webhook` (posted by a provider). */
  source: 'imap' | 'webhook';
  connectionId: string | null;
}

export interface Received {
  /** `recorded`, or `duplicate` when the tenant already has a message of this Message-ID. */
  status: 'recorded' | 'duplicate';
  thread_id: string;
  message_id: string;
  id: string;
  is_auto_reply: boolean;
  /** The sent message it answers (its outbox id), if any. */
  outbox_id: string | null;
  /** For a delivery status notification: the bounce it reported (`hard` or `soft`), if any. */
  bounce: 'hard' | 'soft' | null;
}

const json = (value: unknown) => JSON.stringify(value);

/** A new thread for a message that belongs to none (its counts follow when messages are added). */
async function newThread(w: WriteContext, mail: InboundMail, arrival: Arrival, contactId: string | null, answered: Answered | null): Promise<string> {
  const id = newId(inbox.prefix);
  const at = creationTime(id, w.now);
  await w.tx.insertInto('inbox_threads').values({
    ...tenantOf(w.scope), id, channel: 'email', subject: answered ? await sentSubject(w, answered) ?? mail.subject : mail.subject,
    normalized_subject: normalizeSubject(mail.subject), status: 'open', snoozed_until: null, assignee: null, tags: '[]',
    from_address: mail.from?.address ?? null, contact_id: contactId, sequence_id: answered?.sequenceId ?? null,
    mailbox_id: answered?.mailboxId ?? null, connection_id: arrival.connectionId ?? answered?.connectionId ?? null,
    last_message_at: null, message_count: 0, doc: null, created_at: at, updated_at: at,
  }).execute();
  w.count(inbox.counter!, 1);
  return id;
}

const sentSubject = async (w: WriteContext, answered: Answered) =>
  (await selectIn(w.tx, 'outbox_messages', w.scope).select('subject').where('id', '=', answered.outboxId).executeTakeFirst())?.subject ?? null;

/** The sent message a reply answers, put first in the reply's new thread, so the thread reads as the conversation. */
async function addSent(w: WriteContext, threadId: string, answered: Answered): Promise<MessageRow | undefined> {
  const sent = await selectIn(w.tx, 'outbox_messages', w.scope).selectAll().where('id', '=', answered.outboxId).executeTakeFirst();
  if (!sent) return undefined;
  const id = newId('imsg');
  const row: MessageRow = {
    ...tenantOf(w.scope), id, thread_id: threadId, direction: 'outbound', message_id: answered.messageId, in_reply_to: null, reference_ids: '[]',
    from_address: sent.from_address, from_name: null, to_addresses: JSON.stringify(parseJson<string[]>(sent.to_addresses) ?? []), cc_addresses: '[]', reply_to: null,
    subject: sent.subject, text: sent.text, html: sent.html, date: sent.sent_at ?? sent.created_at, is_auto_reply: 0, auto_reply_kind: null,
    outbox_id: sent.id, connection_id: sent.connection_id, source: 'outbox', raw_size: null, created_at: creationTime(id, w.now), updated_at: w.now,
  };
  await w.tx.insertInto('inbox_messages').values(row).execute();
  await updateIn(w.tx, 'outbox_messages', w.scope).set({ thread_id: threadId, updated_at: w.now }).where('id', '=', sent.id).execute();
  return row;
}

/** Records `mail` in the tenant's inbox (see the top of this file); the service's secret checks reply addresses. */
export async function receiveMail(w: WriteContext, secret: string, mail: InboundMail, arrival: Arrival): Promise<Received> {
  // The message itself (recorded before?) and those it refers to, in one read.
  const report = mail.report;
  const found = await knownMessages(w, [mail.messageId, ...(report ? [] : referred(mail))]);
  const known = found.find((k) => k.message_id === mail.messageId);
  if (known) {
    return { status: 'duplicate', id: known.id, thread_id: known.thread_id, message_id: mail.messageId, is_auto_reply: Boolean(known.is_auto_reply), outbox_id: known.outbox_id, bounce: null };
  }
  // A report is about the message it names, whatever its own headers say.
  const placed = report?.originalMessageId
    ? await placeMessage(w, secret, { ...mail, inReplyTo: report.originalMessageId, references: [], to: [], cc: [] })
    : await placeMessage(w, secret, mail, found);
  const automatic = report ? 'delivery_status' : mail.autoReply;
  let threadId = placed.threadId;
  let created = false;
  if (!threadId) {
    threadId = await newThread(w, mail, arrival, placed.contactId, placed.answered);
    created = true;
    const first = placed.answered ? await addSent(w, threadId, placed.answered) : undefined;
    if (first) await countMessages(w, threadId, 1, Number(first.date), false);
  }
  const id = newId('imsg');
  const date = mail.date ?? w.now;
  const row: MessageRow = {
    ...tenantOf(w.scope), id, thread_id: threadId, direction: 'inbound', message_id: mail.messageId, in_reply_to: mail.inReplyTo, reference_ids: json(mail.references),
    from_address: mail.from?.address ?? null, from_name: mail.from?.name ?? null, to_addresses: json(mail.to.map((a) => a.address)), cc_addresses: json(mail.cc.map((a) => a.address)),
    reply_to: mail.replyTo[0]?.address ?? null, subject: mail.subject, text: mail.text, html: mail.html, date,
    is_auto_reply: automatic ? 1 : 0, auto_reply_kind: automatic, outbox_id: placed.answered?.outboxId ?? null, connection_id: arrival.connectionId,
    source: arrival.source, raw_size: mail.size, created_at: creationTime(id, w.now), updated_at: w.now,
  };
  await w.tx.insertInto('inbox_messages').values(row).execute();
  const threadRow = await countMessages(w, threadId, 1, Math.max(date, 0), !created, placed.counts);
  const message = messageRecord(row);
  if (created) w.emit(inbox.events.created, await presentOne(inbox, w.tx, w.scope, threadRow as never));
  else if (!automatic && threadRow.status !== 'open') await performAction(inbox, w, threadRow as never, 'reopen');
  w.emit('inbox_message.received', message);

  const answered = placed.answered;
  let bounce: Received['bounce'] = null;
  if (report && answered && report.bounce) {
    bounce = report.bounce;
    const recipient = report.recipients.find((r) => r.action === 'failed')?.address ?? null;
    await markBounced(w, answered.outboxId, { hard: bounce === 'hard', reason: report.reason ?? undefined, address: recipient });
  } else if (answered && !report) {
    await markReplied(w, answered.outboxId, Boolean(automatic), mail.text);
  }
  return { status: 'recorded', id, thread_id: threadId, message_id: mail.messageId, is_auto_reply: Boolean(automatic), outbox_id: answered?.outboxId ?? null, bounce };
}
