// Sequences (graph8's shape): ordered steps (steps.children.ts) sent to each enrolled contact
// (enrollments.resource.ts), one after the other, in a sending window, from a rotation of mailboxes
// (texts through the SMS provider).
// The lifecycle is declared here; the transitional states are worked by jobs (lifecycle.ts): a
// sequence is `scheduling` until its list is enrolled, `pausing`, `resuming` and `terminating` until
// their work is committed, and any write meanwhile is 409. The stepping itself is the scheduler's
// (scheduler.ts).
import { Type } from 'typebox';
import { defineResource } from '../../platform/resource/define.ts';
import { boolean, json, ref, text, timestamp } from '../../platform/resource/fields.ts';
import { DEFAULT_SCHEDULE, ScheduleInputSchema, ScheduleSchema } from '../../platform/time/schedule.ts';
import { MailboxIdsInput, MailboxIdsOutput } from '../mailboxes/mailbox-ids.ts';
import { SEQUENCE_STATES } from './sequences.schemas.ts';
import { beforeDelete, beforeWrite, enrich, run } from './sequences.store.ts';
import { paused, resumed, scheduled, terminated } from './transitions.ts';

const count = (description: string) => Type.Integer({ minimum: 0, description, examples: [12] });

export const sequences = defineResource({
  name: 'sequence', plural: 'sequences', prefix: 'seq', table: 'sequences', notFound: 'Sequence not found',
  tag: 'Sequences', tagDescription: 'Ordered e-mail, SMS and task steps sent to enrolled contacts in a sending window, and their lifecycle',
  fields: {
    name: text({ required: true, min: 1, max: 200, description: 'Name of the sequence', example: 'Q1 founders outreach' }),
    description: text({ max: 2000, description: 'What the sequence is for', example: 'Three touches for seed-stage founders' }),
    associated_list_id: ref('lists', { onDelete: 'set null', check: false, prefix: 'lst', description: 'The list whose contacts are enrolled when the sequence runs (a list of contacts or leads; 404 when unknown); null: enrol contacts yourself' }),
    finish_on_reply: boolean({ nullable: false, default: true, description: 'Whether a reply (not an automatic one) finishes the contact\'s enrollment; true when omitted', example: true }),
    send_in_same_thread: boolean({ nullable: false, default: true, description: 'Whether later e-mail steps answer the first one (`In-Reply-To`, `References`, `Re:` subject) rather than start threads of their own; true when omitted', example: true }),
    wait_for_new_contacts: boolean({ nullable: false, default: false, description: 'Whether contacts added to the associated list while the sequence is live are enrolled too (within a minute); a sequence that waits is never completed by running out of enrollments', example: false }),
    mailbox_ids: json({ nullable: false, default: [], input: MailboxIdsInput, output: MailboxIdsOutput, description: 'The mailboxes its e-mail steps are sent from, in rotation: each enrollment keeps the one its first e-mail went from' }),
    schedule: json({ nullable: false, default: DEFAULT_SCHEDULE, input: ScheduleInputSchema, output: ScheduleSchema, description: 'When steps may be sent: days and hours in a time zone (weekdays 9 to 17 UTC when omitted)' }),
    use_contact_timezone: boolean({ nullable: false, default: false, description: 'Whether the hours are read in each contact\'s own `timezone` (the schedule\'s zone for a contact without one)', example: false }),
    launched_at: timestamp({ readOnly: true, description: 'When it was first run, unix seconds; null while drafted', example: 1767225600 }),
    completed_at: timestamp({ readOnly: true, description: 'When it was completed or terminated, unix seconds', example: 1767830400 }),
    campaign_id: ref('campaigns', { onDelete: 'set null', check: false, readOnly: true, prefix: 'cpg', description: 'The campaign whose launch made it, when one did: the campaign follows its state, and each message it sends costs a credit; null for a sequence made through the API' }),
  },
  computed: {
    counts: Type.Object({
      enrolled: count('Enrollments in all'),
      active: count('Enrollments still on their way (pending, active or paused)'),
      finished: count('Enrollments finished, whatever the reason'),
      replied: count('Enrollments finished by a reply'),
      bounced: count('Enrollments finished by a bounce'),
    }, { description: 'Its enrollments by state, exact, computed when read' }),
  },
  filters: {
    status: 'eq',
    associated_list_id: { op: 'eq', description: 'Only sequences enrolling this list' },
    search: { field: 'name', op: 'contains', schema: Type.String({ maxLength: 200, description: 'Only sequences whose name contains this text, ignoring case', examples: ['founders'] }) },
  },
  hooks: { beforeWrite, beforeDelete, enrich },
  // The scheduler moves enrollments on (due times, steps done) without an event each: never served from the list cache.
  readsClock: true,
  lifecycle: {
    states: SEQUENCE_STATES, initial: 'drafted',
    description: '`drafted` → `scheduling` (run) → `live` ⇄ (`pausing` → `paused` → `resuming`) → `completed`, and `terminating` → `completed` from live or paused. Transitional states are worked in the background; a write meanwhile is 409. Read-only: moved by the sequence\'s operations',
    actions: {
      run: {
        from: ['drafted'], to: 'scheduling', event: 'run', participle: 'run', stamps: ['launched_at'], guard: run, errors: [400],
        summary: 'Run a sequence', eventDescription: 'A sequence was run: it is scheduling its enrollments',
        description: 'Starts a drafted sequence: it needs at least one step (400), a mailbox when it has e-mail steps (400), and in live mode, when it has SMS steps, an SMS provider (an `sms` connection or the operator\'s default; else 503 `provider_not_configured`). It is `scheduling` until every contact of `associated_list_id` is enrolled with its first step due, then `live` (`sequence.live`).',
      },
      pause: {
        from: ['live'], to: 'pausing', event: 'pause_requested', participle: 'paused',
        summary: 'Pause a sequence', eventDescription: 'A sequence is pausing: no step is sent from now on',
        description: 'Stops sending at once; the sequence is `pausing` until the scheduler is stopped, then `paused` (`sequence.paused`). Enrollments keep their places.',
      },
      resume: {
        from: ['paused', 'pausing'], to: 'resuming', event: 'resume_requested', participle: 'resumed',
        summary: 'Resume a paused sequence', eventDescription: 'A paused sequence is resuming',
        description: 'Starts a paused sequence again (one still `pausing` too: its pause is given up). Steps that fell due while it was paused are not sent in a burst: they are spread from now at the rate its mailboxes can send an hour. `resuming`, then `live` (`sequence.resumed`).',
      },
      terminate: {
        from: ['live', 'paused'], to: 'terminating', event: 'terminate_requested', participle: 'terminated',
        summary: 'Terminate a sequence', eventDescription: 'A sequence is terminating: its open enrollments are being finished',
        description: 'Ends a live or paused sequence for good: every enrollment still open is finished with reason `terminated`, then it is `completed` (`sequence.terminated`).',
      },
      complete: {
        from: ['live'], to: 'completed', event: 'completed', stamps: ['completed_at'], route: false,
        summary: 'Complete a sequence', description: 'Recorded by the scheduler once no enrollment is left open (never for a sequence that waits for new contacts).',
        eventDescription: 'A live sequence completed: every enrollment finished',
      },
    },
    frozen: { completed: '*' },
    working: {
      scheduling: { next: 'live', eventDescription: 'A sequence is live: its list is enrolled and the first steps are due', work: scheduled },
      pausing: { next: 'paused', eventDescription: 'A sequence was paused', work: paused },
      resuming: { next: 'live', event: 'resumed', eventDescription: 'A paused sequence was resumed', work: resumed },
      terminating: { next: 'completed', event: 'terminated', eventDescription: 'A sequence was terminated: its open enrollments finished with reason `terminated`', work: terminated },
    },
  },
  routes: {
    docs: {
      list: { description: 'Lists sequences, newest first, with an exact `total` and each one\'s `counts`; filter by `status`, `associated_list_id`, `search` (name contains).' },
      create: { description: 'Creates a `drafted` sequence. `associated_list_id` must be a list of contacts or leads (404 unknown, 400 another type); `mailbox_ids` mailboxes of the organization (404); `schedule.timezone` an IANA zone (422). Add steps with `POST /v1/sequences/{id}/steps`, then run it.' },
      update: { description: 'Changes the fields given; a sequence in a transitional state (`scheduling`, `pausing`, `resuming`, `terminating`) is 409 naming it, a completed one 409. An empty body is 400 `No fields to update`.' },
      delete: { description: 'Deletes a sequence that is not live (a live one: 409, pause or terminate it first; one in a transitional state: 409 until its work is done). Its open enrollments finish with reason `deleted` and nothing more is sent. From then on the sequence, its steps and its enrollments under it are 404 and it is in no list or total; its enrollments stay readable as finished history (`GET /v1/enrollments/{id}`, `GET /v1/contacts/{id}/enrollments`), and the messages it sent stay in the outbox with their `record_id`.' },
    },
    errors: { create: [404], update: [404, 409], delete: [409] },
  },
  ownedTables: ['sequence_steps', 'sequence_enrollments'],
  // Its messages, analytics and enrollments outlive it: a delete keeps the row (soft-delete.ts).
  softDelete: true,
});
