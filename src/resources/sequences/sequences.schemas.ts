// The states and shapes of sequences, their steps and enrollments (the records are defined in
// sequences.resource.ts, steps.children.ts and enrollments.resource.ts).
import { Type, type Static } from 'typebox';
import { StringEnum } from '../../platform/schemas.ts';

export const SEQUENCE_STATES = ['drafted', 'scheduling', 'live', 'pausing', 'paused', 'resuming', 'terminating', 'completed'] as const;
export const STEP_TYPES = ['EMAIL', 'PHONE', 'SMS', 'LINKEDIN', 'TASK'] as const;
export type StepType = (typeof STEP_TYPES)[number];
export const INPUT_TYPES = ['TEMPLATE', 'ON_DEMAND'] as const;
export const ENROLLMENT_STATES = ['pending', 'active', 'paused', 'finished', 'failed'] as const;
/** Enrollments still on their way: a contact is in a sequence once at a time among these. */
export const OPEN_ENROLLMENT = ['pending', 'active', 'paused'] as const;
export const FINISH_REASONS = ['completed', 'replied', 'bounced', 'unsubscribed', 'manual', 'suppressed', 'terminated', 'deleted', 'dispositioned'] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];
export const MAX_STEPS = 50;

/** Steps that wait for a person: they create a task for the mailbox's owner and go on once it is completed. */
export const TASK_STEPS: Partial<Record<StepType, 'call' | 'linkedin' | 'todo'>> = { PHONE: 'call', LINKEDIN: 'linkedin', TASK: 'todo' };

const Variant = Type.Object({
  subject: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()], { description: 'The variant\'s subject (Liquid); null or omitted: the step\'s', examples: ['Quick idea for {{ company.name }}'] })),
  body: Type.String({ minLength: 1, maxLength: 20_000, description: 'The variant\'s body (Liquid)', examples: ['Hi {{ contact.first_name }}, …'] }),
  weight: Type.Integer({ minimum: 1, maximum: 100, description: 'Its share of the enrollments, relative to the other variants\' and the step\'s own (weight 1 unless `weight` is given)', examples: [50] }),
}, { additionalProperties: false, description: 'An A/B variant of a step' });
export const VariantsInput = Type.Array(Variant, { maxItems: 5, description: 'A/B variants: each enrollment is given one of the step and its variants, by weight, and keeps it', examples: [[{ subject: 'Another angle', body: 'Hi {{ contact.first_name }}', weight: 50 }]] });
export const VariantsOutput = Type.Array(Type.Object({
  subject: Type.Union([Type.String(), Type.Null()], { description: 'The variant\'s subject; null: the step\'s' }),
  body: Type.String({ description: 'The variant\'s body' }),
  weight: Type.Integer({ description: 'Its weight' }),
}, { description: 'An A/B variant of a step' }), { description: 'A/B variants of the step' });
export type StepVariant = Static<typeof Variant>;

export const EnrollBody = Type.Object({
  contact_ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 1000, uniqueItems: true, description: 'Contacts to enrol, at most 1,000', examples: [['con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B']] })),
  list_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Enrol every contact of this list not yet in the sequence', examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
}, { additionalProperties: false, description: 'Who to enrol: `contact_ids`, the contacts of `list_id`, or both' });

export const EnrollmentStatus = StringEnum(ENROLLMENT_STATES, { description: 'An enrollment state', examples: ['active'] });
