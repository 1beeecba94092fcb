// Enrollments: one contact's way through one sequence. Made by running the sequence (its list) or by
// `POST /v1/sequences/{id}/enrollments`; stepped by the scheduler (scheduler.ts); paused, resumed and
// finished by `PATCH /v1/enrollments/{id}` or by what happens to the messages they sent (a reply, a
// bounce, an unsubscribe: outcomes.ts). A contact is in a sequence at most once at a time.
import { defineResource } from '../../platform/resource/define.ts';
import { enumOf, int, ref, text, timestamp } from '../../platform/resource/fields.ts';
import { ENROLLMENT_STATES, FINISH_REASONS, OPEN_ENROLLMENT } from './sequences.schemas.ts';
import { finishEnrollment, resumeEnrollment } from './enrollments.store.ts';

const readOnly = { readOnly: true } as const;

export const enrollments = defineResource({
  name: 'enrollment', plural: 'enrollments', prefix: 'enr', table: 'sequence_enrollments', notFound: 'Enrollment not found',
  tag: 'Enrollments', tagDescription: 'Each contact\'s way through a sequence: its next step, its pauses and how it finished',
  fields: {
    sequence_id: ref('sequences', { ...readOnly, nullable: false, onDelete: 'cascade', check: false, prefix: 'seq', description: 'The sequence' }),
    contact_id: ref('contacts', { ...readOnly, nullable: false, onDelete: 'cascade', check: false, prefix: 'con', description: 'The contact enrolled' }),
    reason: enumOf(FINISH_REASONS, { ...readOnly, description: 'Why it finished: `completed` (every step done), `replied`, `bounced`, `unsubscribed`, `suppressed` (the address was suppressed before a send), `manual`, `terminated` or `deleted` (the sequence was), `dispositioned` (a call\'s disposition finished it); null while open', example: 'replied' }),
    error: text({ ...readOnly, description: 'Why it failed (no e-mail address, no phone number with a country code for a text, a template it could not render); null unless failed', example: 'The contact has no e-mail address' }),
    step_index: int({ ...readOnly, nullable: false, default: 0, description: 'Steps done so far; the next step is the one of `step_order` one higher', example: 1 }),
    due_at: timestamp({ ...readOnly, description: 'When its next step is due (it is sent at the first moment of the window from then); null while it waits for a task or is over', example: 1767258000 }),
    mailbox_id: ref('mailboxes', { ...readOnly, onDelete: 'set null', check: false, prefix: 'mbx', description: 'The mailbox its e-mails go from, kept from its first e-mail on' }),
    task_id: ref('tasks', { ...readOnly, onDelete: 'set null', check: false, prefix: 'tsk', description: 'The task its current step waits for (a call, LinkedIn or task step); completing it moves the enrollment on' }),
    paused_until: timestamp({ ...readOnly, description: 'When an out-of-office pause ends (the enrollment goes on then); null for a pause by hand', example: 1767830400 }),
    last_sent_at: timestamp({ ...readOnly, description: 'When its last step was sent', example: 1767225600 }),
    finished_at: timestamp({ ...readOnly, description: 'When it finished or failed', example: 1767830400 }),
  },
  filters: {
    status: 'eq',
    sequence_id: { op: 'eq', description: 'Only enrollments in this sequence' },
    contact_id: { op: 'eq', description: 'Only enrollments of this contact' },
  },
  crudEvents: [],
  // The scheduler moves enrollments on (due times, steps done) without an event each: never served from the list cache.
  readsClock: true,
  lifecycle: {
    states: ENROLLMENT_STATES, initial: 'active',
    description: '`pending` (waiting for its window or a mailbox with room) → `active` ⇄ `paused` (by hand, or an out-of-office reply until `paused_until`) → `finished` (with `reason`) or `failed` (with `error`). Read-only here: moved by `PATCH /v1/enrollments/{id}` and by the scheduler',
    actions: {
      pause: {
        from: OPEN_ENROLLMENT.filter((s) => s !== 'paused'), to: 'paused', event: 'paused', route: false,
        // By hand: nothing is due until it is resumed. An out-of-office reply: due again when the absence ends.
        guard: async (_w, _row, input) => ({ set: { paused_until: input.until ?? null, due_at: input.until ?? null } }),
        summary: 'Pause an enrollment', description: 'Holds its next step until it is resumed.', eventDescription: 'An enrollment was paused, by hand (`paused_until` null) or by an out-of-office reply',
      },
      resume: {
        from: ['paused'], to: 'active', event: 'resumed', route: false, guard: resumeEnrollment,
        summary: 'Resume an enrollment', description: 'Its next step is due now, or when it was due if later.', eventDescription: 'A paused enrollment went on',
      },
      finish: {
        from: OPEN_ENROLLMENT, to: 'finished', event: 'finished', stamps: ['finished_at'], route: false, guard: finishEnrollment,
        summary: 'Finish an enrollment', description: 'Ends it: no further step is sent.', eventDescription: 'An enrollment finished; `reason` says why (`completed`, `replied`, `bounced`, `unsubscribed`, `suppressed`, `manual`, `terminated`, `deleted`)',
      },
      fail: {
        from: OPEN_ENROLLMENT, to: 'failed', event: 'failed', stamps: ['finished_at'], route: false, guard: async (_w, _row, input) => ({ set: { error: String(input.error), due_at: null } }),
        summary: 'Fail an enrollment', description: 'Recorded by the scheduler when a step cannot be sent to the contact.', eventDescription: 'An enrollment failed; `error` says why',
      },
    },
  },
  routes: {
    omit: ['create', 'update', 'delete'],
    docs: {
      list: { description: 'Lists enrollments of every sequence, newest first, with an exact `total`; filters `sequence_id`, `contact_id`, `status`.' },
    },
  },
});
