// The shapes of a campaign's steps, channels and schedule (the campaign is defined in campaigns.resource.ts).
import { Type, type Static } from 'typebox';
import { Nullable, Str, StringEnum } from '../../platform/schemas.ts';

export const CAMPAIGN_STATUSES = ['draft', 'active', 'paused', 'completed'] as const;
export const CHANNELS = ['email', 'linkedin', 'phone', 'sms'] as const;
export const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export const MAX_STEPS = 50;

const Status = StringEnum(CAMPAIGN_STATUSES, { description: 'Lifecycle state: created as `draft`, `active` once launched, `paused` and resumed by their operations; read-only', examples: ['draft'] });
const Channel = StringEnum(CHANNELS, { description: 'A channel of outreach', examples: ['email'] });
const Day = StringEnum(DAYS, { description: 'A day of the week', examples: ['mon'] });

const Name = Str({ description: 'Name of the campaign', minLength: 1, maxLength: 200, examples: ['Q4 outbound'] });
const Channels = Type.Array(Channel, {
  uniqueItems: true, maxItems: CHANNELS.length, description: 'Channels the campaign uses; every step\'s channel must be one of them. Defaults to the channels of the steps', examples: [['email', 'linkedin']],
});
const ListId = Str({ description: 'The audience: a list of type contacts or leads whose contacts are enrolled at launch', maxLength: 64, examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] });

const stepFields = {
  delay_days: ['Days to wait after the previous step (after launch for the first)', 2],
  subject: ['Subject line (e-mail)', 'Quick question about {{company}}'],
  body: ['Message text', 'Hi {{first_name}}, …'],
} as const;

export const StepInputSchema = Type.Object({
  channel: Channel,
  delay_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 365, default: 0, description: stepFields.delay_days[0], examples: [stepFields.delay_days[1]] })),
  subject: Type.Optional(Nullable(Str({ description: stepFields.subject[0], maxLength: 500, examples: [stepFields.subject[1]] }))),
  body: Type.Optional(Nullable(Str({ description: stepFields.body[0], maxLength: 20_000, examples: [stepFields.body[1]] }))),
}, { additionalProperties: false, description: 'One step of the sequence' });

export const StepSchema = Type.Object({
  channel: Channel,
  delay_days: Type.Integer({ description: stepFields.delay_days[0], examples: [stepFields.delay_days[1]] }),
  subject: Nullable(Type.String({ description: stepFields.subject[0], examples: [stepFields.subject[1]] })),
  body: Nullable(Type.String({ description: stepFields.body[0], examples: [stepFields.body[1]] })),
}, { description: 'One step of the sequence' });
export type Step = Static<typeof StepSchema>;
export type StepInput = Static<typeof StepInputSchema>;

const SCHEDULE_EXAMPLE = { timezone: 'Europe/London', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_hour: 9, end_hour: 17 };
const STEPS_EXAMPLE = [{ channel: 'email', delay_days: 0, subject: 'Hello', body: 'Hi {{first_name}}' }, { channel: 'linkedin', delay_days: 3, subject: null, body: 'Connecting' }];

const scheduleFields = {
  timezone: ['IANA time-zone name the hours are in', 'Europe/London'],
  days: ['Days of the week on which steps are sent', ['mon', 'tue', 'wed', 'thu', 'fri']],
  start_hour: ['First hour of the sending window, 0 to 23', 9],
  end_hour: ['End of the sending window (exclusive), 1 to 24, after start_hour', 17],
} as const;

export const ScheduleInputSchema = Type.Object({
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z][A-Za-z0-9_+/-]*$', default: 'UTC', description: scheduleFields.timezone[0], examples: [scheduleFields.timezone[1]] })),
  days: Type.Optional(Type.Array(Day, { minItems: 1, maxItems: 7, uniqueItems: true, default: ['mon', 'tue', 'wed', 'thu', 'fri'], description: scheduleFields.days[0], examples: [scheduleFields.days[1]] })),
  start_hour: Type.Optional(Type.Integer({ minimum: 0, maximum: 23, default: 9, description: scheduleFields.start_hour[0], examples: [scheduleFields.start_hour[1]] })),
  end_hour: Type.Optional(Type.Integer({ minimum: 1, maximum: 24, default: 17, description: scheduleFields.end_hour[0], examples: [scheduleFields.end_hour[1]] })),
}, { additionalProperties: false, description: 'When steps may be sent; omitted fields take their defaults (UTC, weekdays, 9 to 17)', examples: [SCHEDULE_EXAMPLE] });
export type ScheduleInput = Static<typeof ScheduleInputSchema>;

export const ScheduleSchema = Type.Object({
  timezone: Type.String({ description: scheduleFields.timezone[0], examples: [scheduleFields.timezone[1]] }),
  days: Type.Array(Day, { description: scheduleFields.days[0], examples: [scheduleFields.days[1]] }),
  start_hour: Type.Integer({ description: scheduleFields.start_hour[0], examples: [scheduleFields.start_hour[1]] }),
  end_hour: Type.Integer({ description: scheduleFields.end_hour[0], examples: [scheduleFields.end_hour[1]] }),
}, { description: 'When steps may be sent', examples: [SCHEDULE_EXAMPLE] });
export type Schedule = Static<typeof ScheduleSchema>;

export const StepsInputSchema = Type.Array(StepInputSchema, { maxItems: MAX_STEPS, description: `The ordered steps, at most ${MAX_STEPS}`, examples: [STEPS_EXAMPLE] });
export const StepsSchema = Type.Array(StepSchema, { description: 'The ordered steps', examples: [STEPS_EXAMPLE] });
const MAILBOX_IDS_EXAMPLE = ['mbx_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'];
export const MailboxIdsInput = Type.Array(Str({ description: 'The id of a mailbox of the organization', maxLength: 64, examples: [MAILBOX_IDS_EXAMPLE[0]] }), {
  uniqueItems: true, maxItems: 100, description: 'The mailboxes the e-mail steps are sent from, each one of the organization (else 404 `Mailbox not found`); the launch preflight weighs their limits against the audience and checks their sending domains', examples: [MAILBOX_IDS_EXAMPLE],
});
export const MailboxIdsOutput = Type.Array(Type.String(), { description: 'The mailboxes the e-mail steps are sent from', examples: [MAILBOX_IDS_EXAMPLE] });

export const LaunchBody = Type.Object({
  force: Type.Optional(Type.Boolean({ default: false, description: 'Launch even when a check of the preflight fails', examples: [true] })),
}, { additionalProperties: false, description: 'Options of the launch; no body launches only when the preflight passes' });

export { Channels, ListId, Name, Status };
