// Mailboxes: the addresses a tenant sends from. Each sends through an e-mail connection (or the
// tenant's default one, or the operator's EMAIL_SMTP_URL), signs with its domain's DKIM key once the
// domain is verified, and keeps to its limits (limits.ts), across every process that sends.
import { Type } from 'typebox';
import { defineResource } from '../../platform/resource/define.ts';
import { email, int, json, ref, text, timeZone, timestamp } from '../../platform/resource/fields.ts';
import { Str } from '../../platform/schemas.ts';
import { WARMUP_DEFAULTS } from './limits.ts';
import { beforeWrite, enrich } from './mailboxes.store.ts';

const count = (description: string, example: number) => Type.Integer({ minimum: 0, maximum: 1_000_000, description, examples: [example] });

const WarmupInput = Type.Object({
  enabled: Type.Boolean({ description: 'Whether the warm-up holds the daily limit down; turning it on starts it today (`warmup_started_at`)', examples: [true] }),
  start: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: `Messages a day on the warm-up's first day; ${WARMUP_DEFAULTS.start} when omitted`, examples: [10] })),
  increment_per_day: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: `Messages a day added each day after; ${WARMUP_DEFAULTS.increment_per_day} when omitted`, examples: [5] })),
}, { additionalProperties: false, description: 'A warm-up: the daily allowance grows from `start` by `increment_per_day` each day until it reaches `daily_limit`' });
const WarmupOutput = Type.Object({
  enabled: Type.Boolean({ description: 'Whether the warm-up holds the daily limit down', examples: [true] }),
  start: Type.Integer({ description: 'Messages a day on the first day', examples: [10] }),
  increment_per_day: Type.Integer({ description: 'Messages a day added each day after', examples: [5] }),
}, { description: 'The warm-up' });

export const mailboxes = defineResource({
  name: 'mailbox', plural: 'mailboxes', prefix: 'mbx', table: 'mailboxes', notFound: 'Mailbox not found',
  tag: 'Mailboxes', tagDescription: 'The addresses messages are sent from, each with its connection, limits and warm-up',
  fields: {
    email: email({ required: true, unique: true, description: 'The address messages are sent from (`From`), stored lower-case; unique within the organization and mode', example: 'ada@example.com' }),
    display_name: text({ max: 200, description: 'The name shown beside the address (`Ada Lovelace <ada@example.com>`)', example: 'Ada Lovelace' }),
    connection_id: ref('connections', { onDelete: 'restrict', check: false, prefix: 'conn', description: 'The e-mail connection its messages go through (404 when unknown, 422 when not of kind `email`); null: the default e-mail connection, else the operator\'s EMAIL_SMTP_URL. Test-mode messages always go to the local driver' }),
    daily_limit: int({ nullable: false, default: 100, min: 1, max: 100_000, description: 'Messages it may send in any 24 hours (a rolling window); 100 when omitted', example: 100 }),
    hourly_limit: int({ min: 1, max: 100_000, description: 'Messages it may send in any hour (a rolling window); null: no limit but the daily one', example: 20 }),
    warmup: json({ nullable: false, default: WARMUP_DEFAULTS, input: WarmupInput, output: WarmupOutput, description: 'The warm-up of a new address' }),
    warmup_started_at: timestamp({ readOnly: true, description: 'When the warm-up was turned on, unix seconds; null while it is off', example: 1767225600 }),
    signature: text({ max: 10_000, description: 'The signature added to the messages it sends, as text', example: 'Ada Lovelace\nHead of Sales' }),
    timezone: timeZone({ nullable: false, default: 'UTC', description: 'The IANA time zone its sending hours are read in (`Europe/Berlin`); `UTC` when omitted; an unknown name is 422', example: 'Europe/London' }),
    owner_id: ref('members', { onDelete: 'set null', prefix: 'mem', description: 'The member whose mailbox it is (404 `Member not found` when unknown); null once that member is deleted' }),
  },
  computed: {
    allowance: Type.Object({
      today: count('Messages it may send in 24 hours now: `daily_limit`, or during a warm-up min(`daily_limit`, `start` + `increment_per_day` × whole days since `warmup_started_at`)', 25),
      this_hour: count('Messages it may send in an hour now: the smaller of `hourly_limit` and `today`', 20),
      remaining_today: count('`today` less the messages it sent in the last 24 hours (never below 0)', 17),
      remaining_this_hour: count('`this_hour` less the messages it sent in the last hour, at most `remaining_today`', 12),
    }, { description: 'What it may send now, computed when read. A message counts from its attempt: taken, refused for good or interrupted; one refused for a while and retried counts once, when it is sent' }),
  },
  filters: {
    connection_id: { op: 'eq', description: 'Only mailboxes of this connection' },
    owner_id: { op: 'eq', description: 'Only mailboxes of this member' },
    email: { op: 'eq', description: 'The mailbox of this address, ignoring case', normalize: (v: string) => v.trim().toLowerCase() },
    search: { field: 'email', op: 'contains', schema: Str({ description: 'Only mailboxes whose address contains this text', maxLength: 200, examples: ['ada'] }) },
  },
  readsClock: true,
  keptOnReset: true,
  hooks: { beforeWrite, enrich },
  eventDocs: { updated: 'A mailbox was changed (its limits, warm-up, connection, owner …); `previous_attributes` holds the earlier values' },
  routes: {
    docs: {
      list: { description: 'Lists the mailboxes, newest first, each with its `allowance` now. Filters combine: `connection_id`, `owner_id`, `email` (exact, ignoring case), `search` (address contains).' },
      create: { description: 'Adds a mailbox. `email` is unique within the organization and mode (409 naming the first). `connection_id` must be an e-mail connection (404 unknown, 422 another kind); `owner_id` a member (404). With `warmup.enabled` the warm-up starts now.' },
      update: { description: 'Changes the fields given. Turning `warmup.enabled` on starts the warm-up again from `start`; turning it off clears `warmup_started_at`. Messages already queued keep to the limits as they are when each is sent.' },
      delete: { description: 'Deletes a mailbox. Its messages still queued are not sent (they end `failed`); those sent keep its id.' },
    },
    errors: { create: [404, 409, 422], update: [404, 409, 422] },
  },
});
