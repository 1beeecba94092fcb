// The sandbox's sequence, live: an intro call, then two e-mails from the sandbox's mailbox, and six
// contacts enrolled with their enrollments in several states: three waiting on their intro call (a
// task for the mailbox's owner: completing one sends that contact's first e-mail a day later), one
// paused by hand, one that replied and one that went through every step. Nothing in it is due: the
// data set never sends on its own, but the first thing a test key does to it (complete a call
// task, resume the paused one, enrol a contact) sets it going.
import { newId } from '../../platform/ids.ts';
import { writeChild } from '../../platform/resource/children.ts';
import { createRecord, getRow } from '../../platform/resource/store.ts';
import { selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { tasks } from '../tasks/tasks.resource.ts';
import { enrol } from '../sequences/enrollments.store.ts';
import { sequences } from '../sequences/sequences.resource.ts';
import { sequenceSteps } from '../sequences/steps.children.ts';
import { SANDBOX_MAILBOX } from './sandbox.mailboxes.ts';

export const SANDBOX_SEQUENCES = 1;
const ENROLLED = 6;
/** The enrollments waiting on their intro call, each with its task. */
export const SANDBOX_SEQUENCE_TASKS = 3;
const STEPS = [
  { step_type: 'PHONE', subject: 'Intro call', body: 'Ask how the team handles its pipeline today.' },
  { time_interval: 86_400, subject: 'Quick question, {{ contact.first_name | default: "there" }}', body: 'Hi {{ contact.first_name | default: "there" }},\n\nThanks for the call. How does {{ contact.company | default: "your team" }} handle its pipeline today?\n\nNot for you? {{ unsubscribe_url }}' },
  { time_interval: 2 * 86_400, body: 'Following up on my note, {{ first_name | default: "there" }}.' },
];
/** The enrollments set apart from those waiting on their call, in the order of the contacts enrolled. */
const SET_APART: ReadonlyArray<Record<string, unknown>> = [
  { status: 'finished', reason: 'completed', step_index: 3 },
  { status: 'finished', reason: 'replied', step_index: 2 },
  { status: 'paused', step_index: 1 },
];

export async function seedSandboxSequence(w: WriteContext, contactIds: readonly string[]): Promise<void> {
  const box = await selectIn(w.tx, 'mailboxes', w.scope).select(['id', 'owner_id']).where('email', '=', SANDBOX_MAILBOX.email).executeTakeFirst();
  if (!box || contactIds.length < ENROLLED) return;
  const { id } = await createRecord(sequences, w, {
    name: 'Founder outreach', description: 'An intro call, then two e-mails two days apart', mailbox_ids: [box.id],
    schedule: { timezone: 'Europe/London', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_hour: 9, end_hour: 17 },
  });
  await w.flush();
  for (const step of STEPS) await writeChild(sequenceSteps, w, id, newId('stp'), step);
  const enrolled = contactIds.slice(0, ENROLLED);
  const made = await enrol(w, await getRow(sequences, w.tx, w.dialect, w.scope, id), enrolled, 0, false);
  const set = (contactId: string, values: Record<string, unknown>) =>
    updateIn(w.tx, 'sequence_enrollments', w.scope).set({ ...values, due_at: null } as never).where('id', '=', made.get(contactId)!.id).execute();
  for (const [i, values] of SET_APART.entries()) {
    await set(enrolled[ENROLLED - 1 - i], { ...values, ...(values.status === 'finished' ? { finished_at: w.now } : {}) });
  }
  for (const contactId of enrolled.slice(0, SANDBOX_SEQUENCE_TASKS)) {
    const task = await createRecord(tasks, w, {
      title: `Founder outreach: ${STEPS[0].subject}`, type: 'call', description: STEPS[0].body, due_at: w.now, assignee: box.owner_id, associations: { contact_ids: [contactId] },
    });
    await set(contactId, { task_id: task.id });
  }
  await updateIn(w.tx, 'sequences', w.scope).set({ status: 'live', launched_at: w.now, updated_at: w.now }).where('id', '=', id).execute();
}
