// A reply from a thread: queued in the outbox (which sends it, or in test mode only records it),
// threaded for the other side's mail client (`In-Reply-To` their latest message, `References` the
// conversation), and added to the thread as an outbound message.
import { parseJson } from '../../db/sql.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { creationTime, newId } from '../../platform/ids.ts';
import { sanitizeHtml } from '../../platform/mail/sanitize.ts';
import { queueEmail, queueSms } from '../../platform/outbox/send.ts';
import type { Row } from '../../platform/resource/define.ts';
import { getRow } from '../../platform/resource/store.ts';
import { selectIn, tenantOf } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { inbox } from './inbox.resource.ts';
import { messageRecord, type MessageRow } from './messages.ts';
import { countMessages } from './thread-writes.ts';
import type { Static } from 'typebox';
import type { ReplyBody } from './inbox.schemas.ts';

const REFERENCES = 20;

const subjectOf = (subject: string | null) => {
  const s = (subject ?? '').trim();
  return /^re\s*:/i.test(s) ? s : `Re: ${s}`.trim();
};

export async function replyInThread(w: WriteContext, threadId: string, body: Static<typeof ReplyBody>) {
  const thread = await getRow(inbox, w.tx, w.dialect, w.scope, threadId);
  if (thread.channel === 'sms') return textInThread(w, thread, body);
  const recent = await selectIn(w.tx, 'inbox_messages', w.scope)
    .select(['message_id', 'direction', 'from_address', 'reply_to', 'to_addresses'])
    .where('thread_id', '=', threadId).orderBy('id', 'desc').limit(REFERENCES).execute();
  const theirs = recent.find((m) => m.direction === 'inbound');
  const to = theirs?.reply_to ?? theirs?.from_address ?? (thread.from_address as string | null);
  if (!to) throw badRequest('The thread has no address to reply to');
  // Sent through the mailbox asked for, else the thread's (the mailbox of the message it answers).
  const mailboxId = body.mailbox_id ?? (thread.mailbox_id as string | null);
  const mailbox = mailboxId ? await selectIn(w.tx, 'mailboxes', w.scope).select(['id', 'email', 'display_name', 'connection_id']).where('id', '=', mailboxId).executeTakeFirst() : undefined;
  if (body.mailbox_id && !mailbox) throw notFound('Mailbox not found');
  const receivedAt = theirs ? (parseJson<string[]>(theirs.to_addresses) ?? []).find((a) => !/^[^@]*\+[^@]*@/.test(a)) : undefined;
  const from = body.from?.toLowerCase() ?? mailbox?.email ?? receivedAt;
  if (!from) throw badRequest('No address to reply from: give `from` or `mailbox_id`', 'from');
  const id = newId('imsg');
  const references = recent.map((m) => m.message_id).reverse();
  const inReplyTo = theirs?.message_id ?? recent[0]?.message_id ?? null;
  const subject = subjectOf(thread.subject as string | null);
  const queued = await queueEmail(w, `inbox.reply:${threadId}:${id}`, {
    from, fromName: mailbox?.display_name ?? null, to: [to], subject, text: body.body, html: body.html ?? null, inReplyTo, references,
    mailboxId: mailbox?.id ?? null, connectionId: mailbox?.connection_id ?? (thread.connection_id as string | null) ?? null,
    contactId: (thread.contact_id as string | null) ?? null, threadId, record: { type: 'inbox_thread', id: threadId },
  });
  const row: MessageRow = {
    ...tenantOf(w.scope), id, thread_id: threadId, direction: 'outbound', message_id: queued.message_id, in_reply_to: inReplyTo,
    reference_ids: JSON.stringify(references), from_address: from, from_name: null, to_addresses: JSON.stringify([to]), cc_addresses: '[]',
    reply_to: null, subject, text: body.body, html: body.html ? sanitizeHtml(body.html) : null, date: w.now, is_auto_reply: 0, auto_reply_kind: null,
    outbox_id: queued.id, connection_id: (thread.connection_id as string | null) ?? null, source: 'reply', raw_size: null,
    created_at: creationTime(id, w.now), updated_at: w.now,
  };
  await w.tx.insertInto('inbox_messages').values(row).execute();
  await countMessages(w, threadId, 1, w.now, true);
  return messageRecord(row);
}

/** A reply in a thread of texts: a text to the thread's number through its connection (its number the sender), its body only. */
async function textInThread(w: WriteContext, thread: Row, body: Static<typeof ReplyBody>) {
  if (body.html || body.mailbox_id || body.from) throw badRequest('A reply in a thread of texts is its `body` only: no `html`, `mailbox_id` or `from`');
  const id = newId('imsg');
  const to = thread.from_address as string;
  const connectionId = thread.connection_id as string | null;
  const queued = await queueSms(w, `inbox.reply:${thread.id as string}:${id}`, {
    to, text: body.body, connectionId, contactId: (thread.contact_id as string | null) ?? null, record: { type: 'inbox_thread', id: thread.id as string },
  });
  const row: MessageRow = {
    ...tenantOf(w.scope), id, thread_id: thread.id as string, direction: 'outbound', message_id: queued.message_id, in_reply_to: null,
    reference_ids: '[]', from_address: null, from_name: null, to_addresses: JSON.stringify([to]), cc_addresses: '[]',
    reply_to: null, subject: null, text: body.body, html: null, date: w.now, is_auto_reply: 0, auto_reply_kind: null,
    outbox_id: queued.id, connection_id: connectionId, source: 'reply', raw_size: null, created_at: creationTime(id, w.now), updated_at: w.now,
  };
  await w.tx.insertInto('inbox_messages').values(row).execute();
  await countMessages(w, thread.id as string, 1, w.now, true);
  return messageRecord(row);
}
