// A sequence's steps as children of the sequence (platform/resource/children.ts), each with an id of
// its own: `POST /v1/sequences/{id}/steps` adds one (at the end, or at the `step_order` given),
// `PATCH` and `DELETE /v1/sequences/{id}/steps/{step_id}` change and remove one, and the list is in
// `step_order`. The rules are in steps.store.ts.
import { Type } from 'typebox';
import { defineChildren } from '../../platform/resource/children.ts';
import { enumOf, int, json, text } from '../../platform/resource/fields.ts';
import { Str } from '../../platform/schemas.ts';
import { INPUT_TYPES, MAX_STEPS, STEP_TYPES, VariantsInput, VariantsOutput } from './sequences.schemas.ts';
import { sequences } from './sequences.resource.ts';
import { beforeStepWrite, renumber } from './steps.store.ts';

const YEAR = 366 * 86_400;

export const sequenceSteps = defineChildren({
  parent: sequences, name: 'step', path: 'steps', table: 'sequence_steps', parentColumn: 'sequence_id',
  key: {
    column: 'id', generated: 'stp', paramName: 'step_id',
    schema: Type.String({ description: 'The step\'s id', examples: ['stp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
    param: Str({ description: 'The step\'s id', maxLength: 64, examples: ['stp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  },
  orderBy: 'step_order',
  fields: {
    step_order: int({ nullable: false, min: 1, max: MAX_STEPS, description: 'Its place, from 1; a new step goes last unless given, and the others move to make room', example: 1 }),
    step_type: enumOf(STEP_TYPES, { nullable: false, default: 'EMAIL', description: '`EMAIL` (sent from the sequence\'s mailboxes), `SMS` (a text to the contact\'s `phone`, through the SMS provider: a `body` and no subject, `TEMPLATE` only), or `PHONE`, `LINKEDIN`, `TASK`: a task for the mailbox\'s owner, the enrollment going on once it is completed', example: 'EMAIL' }),
    input_type: enumOf(INPUT_TYPES, { nullable: false, default: 'TEMPLATE', description: '`TEMPLATE`: rendered and sent by the sequence; `ON_DEMAND`: a task to write and send it by hand', example: 'TEMPLATE' }),
    time_interval: int({ nullable: false, default: 0, min: 0, max: YEAR, description: 'Seconds to wait after the previous step (after enrolment for the first) before it is due; it is sent at the first moment of the window from then', example: 172800 }),
    subject: text({ max: 500, description: 'Subject (Liquid): `{{ contact.first_name }}`, `{{ company.name }}`, `{{ sender.name }}`, custom fields as `{{ contact.custom_fields.<name> }}`; an unknown variable is 422 naming it. Empty on a later e-mail step of a same-thread sequence: `Re:` the first one. None on an SMS step (422)', example: 'Quick question, {{ contact.first_name }}' }),
    body: text({ max: 20_000, description: 'Text body (Liquid, the variables of `subject` and `{{ unsubscribe_url }}`); an SMS step\'s text, required, at most 1,600 characters', example: 'Hi {{ contact.first_name }},\n\nWould {{ company.name }} …' }),
    variants: json({ nullable: false, default: [], input: VariantsInput, output: VariantsOutput, description: 'A/B variants of the subject and body, each with a weight' }),
  },
  write: 'post',
  patch: true,
  notFound: 'Step not found',
  members: { event: 'step', removed: 'id', removedEvent: 'step_id' },
  description: 'A step of a sequence',
  timestamps: { created: 'When the step was added, unix seconds', updated: 'When it last changed, unix seconds' },
  docs: {
    list: { summary: 'List the steps of a sequence', description: 'The steps in `step_order`, with an exact `total`. Unknown sequence: 404 `Sequence not found`.' },
    write: { summary: 'Add a step to a sequence', description: 'Adds a step (201, `sequence.step_added`), last unless `step_order` says where. Templates are checked now: an unknown variable or a syntax error is 422 naming the field, as is an SMS step without a body, with a subject, `ON_DEMAND` or past 1,600 characters. A sequence in a transitional state is 409; more than 50 steps 409.' },
    patch: { summary: 'Update a step', description: 'Changes the fields given (`sequence.step_updated`); a new `step_order` moves it and the steps between. Not there: 404 `Step not found`.' },
    delete: { summary: 'Remove a step', description: 'Removes the step (`sequence.step_removed`); the steps after it move up. Enrollments past it are not affected. Not there: 404 `Step not found`.' },
  },
  hooks: {
    beforeWrite: beforeStepWrite,
    afterRemove: (w, parent) => renumber(w, parent.id),
  },
});
