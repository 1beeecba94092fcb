// Queuing a message, an e-mail or a text: one outbox row, written with the write that asks for it,
// and the job that sends it (committed together: a message is asked for exactly when its cause is).
// The row is keyed by the send's key (what is sent: a thread's reply, a sequence step for one
// enrollment), so asking again answers the first row; and its id (an e-mail's Message-ID) is made
// from that key before any provider call, so the sender, a reply and a bounce all name the same
// message whatever happens to the process.
import { createHash } from 'node:crypto';
import { newId, creationTime } from '../ids.ts';
import { presentOne } from '../resource/store.ts';
import { selectIn, tenantOf } from '../resource/tenancy.ts';
import type { WriteContext } from '../write.ts';
import { outboxMessages } from './outbox.resource.ts';
import { addressProblem, listUnsubscribeHeaders, normalizeAddress, suppressionOf, suppressionsOf, unsubscribeLink, type Channel } from './suppressions.ts';

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

export interface OutgoingSms {
  /** The recipient, in E.164 form. */
  to: string;
  text: string;
  /** The sender's number; omitted, the provider's own (its connection's, or the local driver's). */
  from?: string | null;
  connectionId?: string | null;
  contactId?: string | null;
  record?: { type: string; id: string } | null;
  stepId?: string | null;
}

export interface Queued {
  id: string;
  message_id: string;
  status: string;
  created: boolean;
}

const digestOf = (w: WriteContext, sendKey: string) => createHash('sha256').update(`${w.scope.orgId}\n${w.scope.mode}\n${sendKey}`).digest('hex').slice(0, 40);

/** The Message-ID of the send keyed `sendKey` of a tenant, on the sender's domain. */
export function messageIdFor(w: WriteContext, sendKey: string, from: string): string {
  return `<${digestOf(w, sendKey)}@${from.slice(from.lastIndexOf('@') + 1).toLowerCase()}>`;
}

/** The id of the text keyed `sendKey` of a tenant (its `message_id`, and its reference at the provider). */
export const textIdFor = (w: WriteContext, sendKey: string): string => `sms_${digestOf(w, sendKey)}`;

/**
 * What the sends of a batch (a scheduler's run) would each read before queuing, read for all of
 * them at once: the messages queued before under their keys, and which of their recipients are
 * suppressed. Sends queued with it insert their rows with the write's end, in one statement for the
 * batch, so nothing in that write may read them back.
 */
export interface SendsAhead {
  /** The keys read, and the message of each one queued before (or in this write). */
  keys: Set<string>;
  known: Map<string, Queued>;
  /** The recipients read (channel and normalized address), and the reason of each suppressed one. */
  recipients: Set<string>;
  suppressed: Map<string, string>;
}

export interface Send { sendKey: string; channel: Channel; to: readonly string[] }

const recipientOf = (channel: Channel, address: string) => `${channel}\n${address}`;
const queuedBefore = (r: { id: string; message_id: string | null; status: string }): Queued => ({ id: r.id, message_id: r.message_id ?? '', status: r.status, created: false });
/** Bound values of one read: well inside both stores' limits. */
const CHUNK = 500;

export async function readSendsAhead(w: WriteContext, sends: readonly Send[]): Promise<SendsAhead> {
  const ahead: SendsAhead = { keys: new Set(sends.map((x) => x.sendKey)), known: new Map(), recipients: new Set(), suppressed: new Map() };
  const keys = [...ahead.keys];
  for (let i = 0; i < keys.length; i += CHUNK) {
    const rows = await selectIn(w.tx, 'outbox_messages', w.scope).select(['id', 'message_id', 'status', 'send_key']).where('send_key', 'in', keys.slice(i, i + CHUNK)).execute();
    for (const r of rows) ahead.known.set(r.send_key!, queuedBefore(r));
  }
  const byChannel = new Map<Channel, string[]>();
  for (const x of sends) {
    let addresses = byChannel.get(x.channel);
    if (!addresses) byChannel.set(x.channel, (addresses = []));
    for (const a of x.to) addresses.push(normalizeAddress(x.channel, a));
  }
  for (const [channel, addresses] of byChannel) {
    for (let i = 0; i < addresses.length; i += CHUNK) {
      const chunk = addresses.slice(i, i + CHUNK);
      const found = await suppressionsOf(w.tx, w.scope, channel, chunk);
      for (const a of chunk) {
        ahead.recipients.add(recipientOf(channel, a));
        const why = found.get(a);
        if (why) ahead.suppressed.set(recipientOf(channel, a), why.reason);
      }
    }
  }
  return ahead;
}

/**
 * Whether `send` of a batch read ahead would be queued to be sent: no message was queued under its
 * key, and none of its recipients is suppressed. What only a message to be sent needs (its
 * unsubscribe link) is made only then.
 */
export function willSend(ahead: SendsAhead, send: Send): boolean {
  if (ahead.known.has(send.sendKey)) return false;
  return !send.to.some((a) => ahead.suppressed.has(recipientOf(send.channel, normalizeAddress(send.channel, a))));
}

interface QueueOptions {
  /** Milliseconds: when the send job may run (see `queueEmail`). */
  runAt?: number;
  /** What the batch this send is one of read ahead (`readSendsAhead`). */
  ahead?: SendsAhead;
}

/** The message queued under `sendKey` before, if any. */
async function knownSend(w: WriteContext, sendKey: string, ahead?: SendsAhead): Promise<Queued | undefined> {
  if (ahead?.keys.has(sendKey)) return ahead.known.get(sendKey);
  const known = await selectIn(w.tx, 'outbox_messages', w.scope).select(['id', 'message_id', 'status']).where('send_key', '=', sendKey).executeTakeFirst();
  return known && queuedBefore(known);
}

/** Why one of `to` (normalized) may not be sent to on `channel`, or undefined. */
async function suppressedOf(w: WriteContext, channel: Channel, to: readonly string[], ahead?: SendsAhead): Promise<string | undefined> {
  let suppressed: string | undefined;
  for (const address of to) {
    const recipient = recipientOf(channel, address);
    const reason = ahead?.recipients.has(recipient) ? ahead.suppressed.get(recipient) : (await suppressionOf(w.tx, w.scope, channel, address))?.reason;
    if (reason) suppressed = `${address} is suppressed (${reason})`;
  }
  return suppressed;
}

type Fields = { channel: Channel; send_key: string; message_id: string; to: string[]; from: string | null; subject: string | null; text: string | null; html: string | null; headers: Record<string, string> } & Pick<OutgoingEmail, 'mailboxId' | 'connectionId' | 'contactId' | 'record' | 'stepId' | 'threadId'>;

/** Writes the row (queued, or `suppressed` and never sent) and, unless suppressed, its send job. */
async function insertMessage(w: WriteContext, m: Fields, suppressed: string | undefined, options: QueueOptions): Promise<Queued> {
  const id = newId('msg');
  const at = creationTime(id, w.now);
  const row = {
    ...tenantOf(w.scope), id, channel: m.channel, status: suppressed ? 'suppressed' : 'queued', provider: w.scope.mode === 'test' ? 'local' : 'pending',
    connection_id: m.connectionId ?? null, mailbox_id: m.mailboxId ?? null, send_key: m.send_key, message_id: m.message_id,
    from_address: m.from, to_addresses: JSON.stringify(m.to), subject: m.subject, text: m.text, html: m.html, headers: JSON.stringify(m.headers),
    record_type: m.record?.type ?? null, record_id: m.record?.id ?? null, step_id: m.stepId ?? null,
    contact_id: m.contactId ?? null, thread_id: m.threadId ?? null, provider_answer: null, error: suppressed ?? null,
    attempts: 0, attempted_at: null, sent_at: null, delivered_at: null, opened_at: null, clicked_at: null, replied_at: null, bounced_at: null,
    created_at: at, updated_at: at,
  };
  if (options.ahead) w.insertLater('outbox_messages', row);
  else await w.tx.insertInto('outbox_messages').values(row).execute();
  if (!suppressed) w.enqueue(OUTBOX_SEND, { id } satisfies SendPayload, { runAt: options.runAt });
  else w.emit('message.failed', await presentOne(outboxMessages, w.tx, w.scope, row));
  const queued = { id, message_id: m.message_id, status: row.status, created: true };
  if (options.ahead) {
    options.ahead.keys.add(m.send_key);
    options.ahead.known.set(m.send_key, { ...queued, created: false });
  }
  return queued;
}

/**
 * Queues `message` under `sendKey` (unique per tenant): the row and its send job, with the write; a
 * key asked before answers the first message unchanged. A suppressed recipient makes it
 * `suppressed`: recorded, never sent. `options.runAt` (milliseconds) delays the job: a caller that
 * sends at once itself leaves it as a guard that records the send interrupted if the process stops.
 */
export async function queueEmail(w: WriteContext, sendKey: string, message: OutgoingEmail, options: QueueOptions = {}): Promise<Queued> {
  const known = await knownSend(w, sendKey, options.ahead);
  if (known) return known;
  const to = [...new Set(message.to.map((a) => normalizeAddress('email', a)))];
  const messageId = messageIdFor(w, sendKey, message.from);
  const suppressed = await suppressedOf(w, 'email', to, options.ahead);
  const headers: Record<string, string> = { ...message.headers };
  if (message.inReplyTo) headers['In-Reply-To'] = message.inReplyTo;
  if (message.references?.length) headers.References = message.references.join(' ');
  if (message.marketing && !suppressed) {
    const link = unsubscribeLink(w, { channel: 'email', address: to[0], contact_id: message.contactId ?? null, message_id: messageId });
    Object.assign(headers, listUnsubscribeHeaders(link.url));
  }
  return insertMessage(w, {
    ...message, channel: 'email', send_key: sendKey, message_id: messageId, to, headers,
    from: message.fromName ? `${message.fromName} <${message.from}>` : message.from,
    subject: message.subject, text: message.text ?? null, html: message.html ?? null,
  }, suppressed, options);
}

/**
 * Queues the text `message` under `sendKey`, by the rules of `queueEmail`: one row and its send job,
 * the first message answered for a key asked again, a number suppressed on `sms` recorded
 * `suppressed` and never sent. `message.to` must be an E.164 number.
 */
export async function queueSms(w: WriteContext, sendKey: string, message: OutgoingSms, options: QueueOptions = {}): Promise<Queued> {
  const known = await knownSend(w, sendKey, options.ahead);
  if (known) return known;
  const to = normalizeAddress('sms', message.to);
  const problem = addressProblem('sms', to);
  if (problem) throw new Error(`A text cannot be queued to ${to}: ${problem}`);
  return insertMessage(w, {
    ...message, channel: 'sms', send_key: sendKey, message_id: textIdFor(w, sendKey), to: [to], from: message.from ?? null,
    subject: null, text: message.text, html: null, headers: {},
  }, await suppressedOf(w, 'sms', [to], options.ahead), options);
}
