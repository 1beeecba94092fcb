// Recording one inbound text in a tenant's inbox, in one write: once per provider id (a webhook
// repeated is one message), in the sender's SMS thread (one per number) or a new one, answering the
// last text the service sent that number through the connection. An opt-out keyword (STOP,
// UNSUBSCRIBE, … as carriers and Twilio read them) suppresses the number on texts; any other text
// answering a sent one marks it replied, which finishes its sequence enrollment as an e-mail reply
// does.
import { creationTime, newId } from '../../platform/ids.ts';
import { performAction } from '../../platform/resource/lifecycle.ts';
import { presentOne } from '../../platform/resource/store.ts';
import { selectIn, tenantOf } from '../../platform/resource/tenancy.ts';
import { suppress } from '../../platform/outbox/suppressions.ts';
import { e164Of } from '../../platform/phone.ts';
import type { WriteContext } from '../../platform/write.ts';
import { inbox } from './inbox.resource.ts';
import { messageRecord, type MessageRow } from './messages.ts';
import type { Received } from './receive.ts';
import { markReplied } from './sent-outcomes.ts';
import { countMessages } from './thread-writes.ts';
import { knownMessages } from './threading.ts';

/** The keywords that opt a number out of texts (the CTIA's and Twilio's), the whole text, any case. */
export const OPT_OUT = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT', 'REVOKE']);

export interface InboundText {
  /** The provider's id of the text, unique at the provider. */
  providerId: string;
  from: string;
  to: string;
  body: string;
  connectionId: string;
}

export interface ReceivedText extends Omit<Received, 'is_auto_reply' | 'bounce'> {
  /** The number was opted out of texts by this one. */
  opted_out: boolean;
}

export async function receiveSms(w: WriteContext, text: InboundText): Promise<ReceivedText> {
  const messageId = `sms:${text.providerId}`;
  const from = e164Of(text.from) ?? text.from;
  const [known] = await knownMessages(w, [messageId]);
  if (known) return { status: 'duplicate', id: known.id, thread_id: known.thread_id, message_id: messageId, outbox_id: known.outbox_id, opted_out: false };
  const answered = await selectIn(w.tx, 'outbox_messages', w.scope).select(['id', 'contact_id', 'record_type', 'record_id', 'message_id'])
    .where('channel', '=', 'sms').where('to_addresses', '=', JSON.stringify([from])).where('connection_id', '=', text.connectionId)
    .where('sent_at', 'is not', null).orderBy('id', 'desc').limit(1).executeTakeFirst();
  let thread = await selectIn(w.tx, 'inbox_threads', w.scope).selectAll().where('channel', '=', 'sms').where('from_address', '=', from)
    .orderBy('id', 'desc').limit(1).executeTakeFirst();
  const created = !thread;
  if (!thread) {
    const id = newId(inbox.prefix);
    const at = creationTime(id, w.now);
    thread = {
      ...tenantOf(w.scope), id, channel: 'sms', subject: null, normalized_subject: null, status: 'open', snoozed_until: null, assignee: null, tags: '[]',
      from_address: from, contact_id: answered?.contact_id ?? null, sequence_id: answered?.record_type === 'sequence' ? answered.record_id : null,
      mailbox_id: null, connection_id: text.connectionId, last_message_at: null, message_count: 0, doc: null, created_at: at, updated_at: at,
    };
    await w.tx.insertInto('inbox_threads').values(thread).execute();
    w.count(inbox.counter!, 1);
  }
  const id = newId('imsg');
  const row: MessageRow = {
    ...tenantOf(w.scope), id, thread_id: thread.id, direction: 'inbound', message_id: messageId, in_reply_to: answered?.message_id ?? null, reference_ids: '[]',
    from_address: from, from_name: null, to_addresses: JSON.stringify([e164Of(text.to) ?? text.to]), cc_addresses: '[]', reply_to: null,
    subject: null, text: text.body, html: null, date: w.now, is_auto_reply: 0, auto_reply_kind: null, outbox_id: answered?.id ?? null,
    connection_id: text.connectionId, source: 'webhook', raw_size: Buffer.byteLength(text.body), created_at: creationTime(id, w.now), updated_at: w.now,
  };
  await w.tx.insertInto('inbox_messages').values(row).execute();
  const threadRow = await countMessages(w, thread.id, 1, w.now, !created, created ? undefined : thread);
  if (created) w.emit(inbox.events.created, await presentOne(inbox, w.tx, w.scope, threadRow as never));
  else if (threadRow.status !== 'open') await performAction(inbox, w, threadRow as never, 'reopen');
  w.emit('inbox_message.received', messageRecord(row));
  w.emit('sms.received', messageRecord(row));

  const optedOut = OPT_OUT.has(text.body.trim().toUpperCase());
  if (optedOut) {
    await suppress(w, { channel: 'sms', address: from, reason: 'unsubscribed', contact_id: answered?.contact_id ?? null, message_id: answered?.message_id ?? null, detail: `Texted ${text.body.trim()}` });
  } else if (answered) {
    await markReplied(w, answered.id, false, text.body);
  }
  return { status: 'recorded', id, thread_id: thread.id, message_id: messageId, outbox_id: answered?.id ?? null, opted_out: optedOut };
}
