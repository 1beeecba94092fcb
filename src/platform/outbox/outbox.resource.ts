// The outbox: every message the service made, one record each, whatever the channel and driver:
// what the `local` driver recorded (test mode always), and what was sent live. Only the service
// writes it (send.ts, outcomes.ts); the API reads it and, in test mode, simulates what happens to a
// message next (`POST /v1/outbox/{id}/simulate`).
import { Type } from 'typebox';
import { defineResource } from '../resource/define.ts';
import { enumOf, int, json, text, timestamp } from '../resource/fields.ts';

export const MESSAGE_STATUSES = ['queued', 'sent', 'delivered', 'bounced', 'failed', 'suppressed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];
export const CHANNELS = ['email', 'sms'] as const;

const at = (what: string) => timestamp({ readOnly: true, description: `When the message ${what}, unix seconds; null until then`, example: 1767225600 });
const readText = (description: string, example: string, max = 1000) => text({ readOnly: true, description, example, max });
const Headers = Type.Record(Type.String(), Type.String(), { description: 'Headers the message carries beyond the usual ones: `List-Unsubscribe`, `In-Reply-To`, `References`', examples: [{ 'List-Unsubscribe': '<https://example.com/public/unsubscribe/…>' }] });

export const outboxMessages = defineResource({
  name: 'message', plural: 'outbox', prefix: 'msg', table: 'outbox_messages', notFound: 'Message not found',
  tag: 'Outbox', tagDescription: 'Every message the service sent or, in test mode, recorded instead of sending',
  fields: {
    channel: enumOf(CHANNELS, { readOnly: true, nullable: false, description: 'How it goes: `email`, or `sms` (a text message, through the SMS provider)', example: 'email' }),
    status: enumOf(MESSAGE_STATUSES, {
      readOnly: true, nullable: false, example: 'delivered',
      description: '`queued` (waiting to be sent), `sent` (the provider took it), `delivered`, `bounced`, `failed` (refused for good, or interrupted: see `error`), or `suppressed` (never sent: the address is suppressed)',
    }),
    provider: readText('The driver that took it: `local` (recorded, nothing sent: always so in test mode) or a real provider (`smtp` for e-mail)', 'local', 50),
    connection_id: readText('The connection it went through; null for the local driver and the operator\'s default', 'conn_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', 64),
    mailbox_id: readText('The mailbox it was sent from (e-mail)', 'mbx_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', 64),
    message_id: readText('Its `Message-ID` header (a text: its own id, `sms_…`), fixed before it was sent; the provider\'s id of a text is `provider_answer.id`', '<3f1c9a…@example.com>', 1000),
    from_address: readText('The sender: an address, or a text\'s number (set when it is sent, unless given)', 'ada@example.com', 320),
    to_addresses: json({ readOnly: true, nullable: false, input: Type.Array(Type.String()), output: Type.Array(Type.String(), { description: 'The recipients: addresses, or a text\'s number in E.164 form', examples: [['grace@example.org']] }), description: 'The recipients' }),
    subject: readText('The rendered subject; null for a text', 'Quick question about your pilot', 2000),
    text: readText('The rendered plain-text body (a text\'s whole message)', 'Hi Grace, …', 1_000_000),
    html: readText('The rendered HTML body (e-mail)', '<p>Hi Grace, …</p>', 1_000_000),
    headers: json({ readOnly: true, nullable: false, input: Headers, output: Headers, description: 'Headers it carries beyond the usual ones' }),
    record_type: readText('The kind of record that caused it (`mailbox`, `inbox_thread`, `sequence`, …)', 'inbox_thread', 64),
    record_id: readText('The record that caused it', 'thr_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', 64),
    step_id: readText('The step (of a sequence) that caused it', 'stp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', 64),
    contact_id: readText('The contact it went to', 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', 64),
    thread_id: readText('The inbox thread it belongs to', 'thr_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', 64),
    provider_answer: json({ readOnly: true, input: Type.Unknown(), output: Type.Object({ response: Type.Optional(Type.String()), accepted: Type.Optional(Type.Array(Type.String())), rejected: Type.Optional(Type.Array(Type.String())), id: Type.Optional(Type.String({ description: 'The provider\'s id of a text' })) }, { description: 'What the provider answered: its last reply and the recipients it accepted and rejected (e-mail), or its id of the message (a text)' }), description: 'What the provider answered' }),
    error: readText('Why it failed or bounced, or was suppressed', '550 5.1.1 Recipient address rejected', 2000),
    attempts: int({ readOnly: true, nullable: false, description: 'Provider calls made for it', example: 1 }),
    sent_at: at('was taken by the provider'),
    delivered_at: at('was delivered'),
    opened_at: at('was first opened'),
    clicked_at: at('first had a link clicked'),
    replied_at: at('was first replied to'),
    bounced_at: at('bounced'),
  },
  filters: {
    channel: { op: 'eq', description: 'Only messages of this channel' },
    status: { op: 'eq', description: 'Only messages with this status' },
    record_id: { op: 'eq', description: 'Only messages caused by this record' },
    contact_id: { op: 'eq', description: 'Only messages to this contact' },
    mailbox_id: { op: 'eq', description: 'Only messages sent from this mailbox' },
    created_after: { field: 'created_at', op: 'gte', schema: Type.Integer({ minimum: 0, maximum: 1e11, description: 'Only messages made at or after this time, unix seconds', examples: [1767225600] }) },
  },
  crudEvents: [],
  routes: {
    omit: ['create', 'update', 'delete'],
    docs: {
      list: { summary: 'List outbox messages', description: 'Lists the messages the service made, newest first, with an exact `total`: in test mode what the local driver recorded instead of sending, in live mode what was sent. Filters combine: `channel`, `status`, `record_id`, `contact_id`, `mailbox_id`, `created_after`.' },
      get: { summary: 'Get an outbox message', description: 'Reads one message: its rendered subject and bodies, headers, recipients, status and what the provider answered.' },
    },
  },
});
