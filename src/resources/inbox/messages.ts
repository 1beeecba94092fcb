// The messages of a thread as the API answers them: both directions, oldest first, with the HTML
// already sanitized when it was recorded (platform/mail/sanitize.ts).
import type { Insertable, Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { Nullable } from '../../platform/schemas.ts';
import type { Scope } from '../../platform/scope.ts';

export type MessageRow = Insertable<DB['inbox_messages']>;

const str = (description: string, example: string) => Type.String({ description, examples: [example] });
const maybe = (description: string, example: string) => Nullable(str(description, example));
const addresses = (description: string) => Type.Array(Type.String(), { description, examples: [['ada@example.com']] });

export const MessageSchema = Type.Object({
  id: str('Identifier of the message', 'imsg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'),
  object: Type.Literal('inbox_message', { description: 'Always `inbox_message`' }),
  thread_id: str('The thread the message is in', 'thr_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'),
  direction: Type.Union([Type.Literal('inbound'), Type.Literal('outbound')], { description: '`inbound` (from the other side) or `outbound` (sent by the service)' }),
  message_id: str('The RFC 5322 Message-ID, with angle brackets', '<CAF=x1@mail.example.com>'),
  in_reply_to: maybe('The Message-ID it answers', '<4f1c@example.com>'),
  references: Type.Array(Type.String(), { description: 'The Message-IDs of the conversation before it (`References`)', examples: [['<4f1c@example.com>']] }),
  from_address: maybe('The sender\'s address, lower-case', 'ada@example.com'),
  from_name: maybe('The sender\'s display name', 'Ada Lovelace'),
  to_addresses: addresses('Recipients (`To`), lower-case'),
  cc_addresses: addresses('Copied recipients (`Cc`), lower-case'),
  subject: maybe('Subject', 'Re: Pilot next week'),
  text: maybe('The plain-text body (at most a million characters)', 'Tuesday works for us.'),
  html: maybe('The HTML body, sanitized: no scripts, styles, event handlers, forms or frames; links http(s) and mailto only; images over https only', '<p>Tuesday works for us.</p>'),
  date: Nullable(Type.Integer({ description: 'When it was sent (its `Date` header; when it arrived, for a message without one), unix seconds', examples: [1767225600] })),
  is_auto_reply: Type.Boolean({ description: 'An automatic message (out-of-office, autoresponder, bulk, or a delivery status notification): kept, but not counted as an answer' }),
  auto_reply_kind: maybe('Why it is automatic: `auto_submitted:<value>`, `autoresponder`, `out_of_office`, `precedence:<value>` or `delivery_status`', 'out_of_office'),
  outbox_id: maybe('The sent message (outbox) it answers, or, outbound, the outbox message it is', 'msg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'),
  source: str('How it came: `imap` (polled), `webhook` (posted by a provider), `reply` (sent from the thread) or `outbox` (the sent message a reply answered)', 'imap'),
  created_at: Type.Integer({ description: 'When the service recorded it, unix seconds', examples: [1767225600] }),
}, { additionalProperties: false });

const list = (value: unknown): string[] => parseJson<string[]>(value) ?? [];

export const messageRecord = (row: MessageRow) => ({
  id: row.id, object: 'inbox_message' as const, thread_id: row.thread_id, direction: row.direction as 'inbound' | 'outbound',
  message_id: row.message_id, in_reply_to: row.in_reply_to ?? null, references: list(row.reference_ids),
  from_address: row.from_address ?? null, from_name: row.from_name ?? null, to_addresses: list(row.to_addresses), cc_addresses: list(row.cc_addresses),
  subject: row.subject ?? null, text: row.text ?? null, html: row.html ?? null, date: row.date === null || row.date === undefined ? null : Number(row.date),
  is_auto_reply: Boolean(row.is_auto_reply), auto_reply_kind: row.auto_reply_kind ?? null, outbox_id: row.outbox_id ?? null,
  source: row.source, created_at: Number(row.created_at),
});

/** The most messages a thread's read answers (the newest of a longer thread). */
export const THREAD_MESSAGES = 500;

/** A thread's messages, oldest first (the newest THREAD_MESSAGES of a longer one). */
export async function threadMessages(db: Kysely<DB>, scope: Scope, threadId: string) {
  const rows = await selectIn(db, 'inbox_messages', scope).selectAll().where('thread_id', '=', threadId).orderBy('id', 'desc').limit(THREAD_MESSAGES).execute();
  return rows.reverse().map((row) => messageRecord(row as MessageRow));
}
