// Which thread an inbound message belongs to, in order of certainty:
// 1. its `In-Reply-To` and `References` name a message the service sent (the outbox's Message-ID)
//    or one the thread already holds;
// 2. it was sent to a reply address of a thread (`reply+<token>@…`, see replyToken);
// 3. it comes from a contact and its subject, without `Re:`/`Fwd:` and their translations, is the
//    subject of an open conversation with that contact.
// Otherwise it starts a thread of its own.
import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import type { InboundMail } from '../../platform/mail/parse.ts';
import { safeEqual } from '../../platform/public/signatures.ts';
import { sameTenant, selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { ReadAhead, WriteContext } from '../../platform/write.ts';

/** The message the service sent that an inbound one answers (an outbox row). */
export interface Answered {
  outboxId: string;
  messageId: string;
  threadId: string | null;
  contactId: string | null;
  sequenceId: string | null;
  mailboxId: string | null;
  connectionId: string | null;
}

/** What a thread's counts were before a message joins it (its `thread.updated` names what changed). */
export interface ThreadCounts {
  message_count: number;
  last_message_at: number | null;
}

export interface Placement {
  /** The thread found, or null: the message starts one. */
  threadId: string | null;
  /** Its counts as found, read with it. */
  counts?: ThreadCounts;
  /** How it was found: `references`, `reply_token`, `subject`, or `new`. */
  by: 'references' | 'reply_token' | 'subject' | 'new';
  answered: Answered | null;
  contactId: string | null;
}

const PREFIX = /^\s*((re|fwd?|aw|wg|sv|vs|antw|tr|rv|ref|odp|vl)\s*(\[\d+\])?\s*:\s*)+/i;

/** The subject a conversation keeps through its replies: without reply and forward prefixes, spaces folded, lower-case. */
export function normalizeSubject(subject: string | null): string {
  return (subject ?? '').replace(PREFIX, '').replace(/\s+/g, ' ').trim().toLowerCase().slice(0, 500);
}

/**
 * The token of a thread's reply address, `reply+<token>@<domain>`: the thread's id and a MAC of it
 * under the service's secret and the tenant, so an address cannot be made up to reach another
 * thread. Lower-case throughout: mail systems may change the case of an address.
 */
export function replyToken(secret: string, scope: Scope, threadId: string): string {
  const mac = createHmac('sha256', secret).update(`reply:${scope.orgId}:${scope.mode}:${threadId}`).digest('hex').slice(0, 20);
  return `${threadId.toLowerCase()}.${mac}`;
}

/** The reply address of a thread on the sender's own mailbox: `ada@acme.example` gives `ada+<token>@acme.example` (a Reply-To). */
export function replyAddress(secret: string, scope: Scope, threadId: string, from: string): string {
  const at = from.lastIndexOf('@');
  return `${from.slice(0, at).split('+')[0]}+${replyToken(secret, scope, threadId)}@${from.slice(at + 1).toLowerCase()}`;
}

/** The thread a reply address (`<anything>+<token>@…`) names, when its token is genuine. */
export function threadOfAddress(secret: string, scope: Scope, address: string): string | null {
  const token = /^[^@+]+\+([a-z0-9_]+\.[0-9a-f]{20})@/i.exec(address)?.[1]?.toLowerCase();
  if (!token) return null;
  const lower = token.slice(0, token.indexOf('.'));
  const underscore = lower.indexOf('_');
  // Ids are a lower-case prefix and an upper-case body (`thr_01J…`).
  const threadId = `${lower.slice(0, underscore + 1)}${lower.slice(underscore + 1).toUpperCase()}`;
  return safeEqual(replyToken(secret, scope, threadId), token) ? threadId : null;
}

/** The sequence of a sent message, when a sequence sent it (its record is the enrollment's sequence). */
const sequenceOf = (recordType: string | null, recordId: string | null): string | null =>
  recordType === 'sequence' || recordType === 'sequences' ? recordId : null;

/** Ids the message refers to, nearest first: In-Reply-To, then References from the last. */
export const referred = (mail: InboundMail) => [...new Set([mail.inReplyTo, ...[...mail.references].reverse()].filter((id): id is string => Boolean(id)))].slice(0, 50);

async function answeredOf(w: WriteContext, ids: string[]): Promise<Answered | null> {
  if (ids.length === 0) return null;
  const rows = await selectIn(w.tx, 'outbox_messages', w.scope)
    .select(['id', 'message_id', 'thread_id', 'contact_id', 'record_type', 'record_id', 'mailbox_id', 'connection_id'])
    .where('message_id', 'in', ids).execute();
  const row = ids.map((id) => rows.find((r) => r.message_id === id)).find(Boolean);
  return row ? {
    outboxId: row.id, messageId: row.message_id!, threadId: row.thread_id, contactId: row.contact_id,
    sequenceId: sequenceOf(row.record_type, row.record_id), mailboxId: row.mailbox_id, connectionId: row.connection_id,
  } : null;
}

const counted = (row: { message_count: unknown; last_message_at: unknown }): ThreadCounts =>
  ({ message_count: Number(row.message_count), last_message_at: row.last_message_at === null ? null : Number(row.last_message_at) });

/** A thread of the tenant that exists (a sent message may name one deleted since), with its counts. */
async function existing(w: WriteContext, threadId: string | null): Promise<{ threadId: string; counts: ThreadCounts } | null> {
  if (!threadId) return null;
  const row = await selectIn(w.tx, 'inbox_threads', w.scope).select([sql.ref<string>('id').as('id'), 'message_count', 'last_message_at']).where(sql.ref('id'), '=', threadId).executeTakeFirst();
  return row ? { threadId: row.id, counts: counted(row) } : null;
}

/**
 * The contact of each address (work or personal e-mail; the oldest when several have it), read in
 * one statement for the messages a run of inbound writes records (read-ahead.ts): no write of the
 * inbox changes contacts.
 */
export const CONTACT_OF_ADDRESS: ReadAhead<string | null, string | null> = {
  key: (_row, input) => (input.address as string | null) ?? null,
  async read(tx, _dialect, scope, keys) {
    const addresses = [...new Set(keys.filter((k): k is string => Boolean(k)))];
    if (addresses.length === 0) return keys.map(() => null);
    const rows = await selectIn(tx, 'contacts', scope).select(['id', 'work_email', 'personal_email'])
      .where((eb) => eb.or([eb('work_email', 'in', addresses), eb('personal_email', 'in', addresses)])).orderBy('id').execute();
    return keys.map((key) => (key ? rows.find((r) => r.work_email === key || r.personal_email === key)?.id ?? null : null));
  },
};

/** The contact of an address: the oldest with it as work or personal e-mail. */
export const contactOf = (w: WriteContext, address: string | null): Promise<string | null> => w.readAhead(CONTACT_OF_ADDRESS, address);

/** A message the inbox holds, by Message-ID, with its thread's counts (null when the thread is gone). */
export interface KnownMessage {
  id: string;
  message_id: string;
  thread_id: string;
  is_auto_reply: number;
  outbox_id: string | null;
  message_count: number | null;
  last_message_at: number | null;
}

/** The messages of these Message-IDs the inbox holds, with their threads, in one read. */
export async function knownMessages(w: WriteContext, messageIds: readonly string[]): Promise<KnownMessage[]> {
  if (messageIds.length === 0) return [];
  return await selectIn(w.tx, 'inbox_messages', w.scope)
    .leftJoin('inbox_threads', (j) => j.on(sameTenant('inbox_threads', 'inbox_messages')).onRef('inbox_threads.id', '=', 'inbox_messages.thread_id'))
    .select(['inbox_messages.id', 'inbox_messages.message_id', 'inbox_messages.thread_id', 'inbox_messages.is_auto_reply', 'inbox_messages.outbox_id', 'inbox_threads.message_count', 'inbox_threads.last_message_at'])
    .where('inbox_messages.message_id', 'in', [...new Set(messageIds)]).execute() as KnownMessage[];
}

/**
 * Where `mail` goes in the tenant's inbox (see the top of this file). `known`: what `knownMessages`
 * found for its referred ids, when the caller read it already.
 */
export async function placeMessage(w: WriteContext, secret: string, mail: InboundMail, known?: KnownMessage[]): Promise<Placement> {
  const ids = referred(mail);
  const answered = await answeredOf(w, ids);
  const fromAddress = mail.from?.address ?? null;
  const contactId = answered?.contactId ?? await contactOf(w, fromAddress);
  if (ids.length > 0) {
    // The messages it refers to that a thread still holds.
    const held = (known ?? await knownMessages(w, ids)).filter((k) => k.message_count !== null);
    const nearest = ids.map((id) => held.find((k) => k.message_id === id)).find(Boolean);
    const found = nearest ? { threadId: nearest.thread_id, counts: counted(nearest as { message_count: number; last_message_at: number | null }) } : await existing(w, answered?.threadId ?? null);
    if (found) return { ...found, by: 'references', answered, contactId };
    if (answered) return { threadId: null, by: 'references', answered, contactId };
  }
  for (const to of [...mail.to, ...mail.cc]) {
    const found = await existing(w, threadOfAddress(secret, w.scope, to.address));
    if (found) return { ...found, by: 'reply_token', answered, contactId };
  }
  const subject = normalizeSubject(mail.subject);
  if (contactId && subject) {
    const row = await selectIn(w.tx, 'inbox_threads', w.scope).select(['id', 'message_count', 'last_message_at'])
      .where('contact_id', '=', contactId).where('normalized_subject', '=', subject).orderBy('id', 'desc').limit(1).executeTakeFirst();
    if (row) return { threadId: row.id, counts: counted(row), by: 'subject', answered, contactId };
  }
  return { threadId: null, by: 'new', answered, contactId };
}
