// The shapes of a campaign's steps, channels and schedule (the campaign is defined in campaigns.resource.ts).
import { Type, type Static } from 'typebox';
import { Nullable, Str, StringEnum } from '../../platform/schemas.ts';

export const CAMPAIGN_STATUSES = ['draft', 'active', 'paused', 'completed'] as const;
export const CHANNELS = ['email', 'linkedin', 'phone', 'sms'] as const;
export const MAX_STEPS = 50;

const Status = StringEnum(CAMPAIGN_STATUSES, { description: 'Lifecycle state: created as `draft`, `active` once launched, `paused` and resumed by their operations; read-only', examples: ['draft'] });
const Channel = StringEnum(CHANNELS, { description: 'A channel of outreach', examples: ['email'] });

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

const STEPS_EXAMPLE = [{ channel: 'email', delay_days: 0, subject: 'Hello', body: 'Hi {{first_name}}' }, { channel: 'linkedin', delay_days: 3, subject: null, body: 'Connecting' }];

export const StepsInputSchema = Type.Array(StepInputSchema, { maxItems: MAX_STEPS, description: `The ordered steps, at most ${MAX_STEPS}`, examples: [STEPS_EXAMPLE] });
export const StepsSchema = Type.Array(StepSchema, { description: 'The ordered steps', examples: [STEPS_EXAMPLE] });
export const LaunchBody = Type.Object({
  force: Type.Optional(Type.Boolean({ default: false, description: 'Launch even when a check of the preflight fails', examples: [true] })),
}, { additionalProperties: false, description: 'Options of the launch; no body launches only when the preflight passes' });

export { Channels, ListId, Name, Status };
