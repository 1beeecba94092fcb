// The sandbox's sequence: two e-mail steps from the sandbox's mailbox and six contacts enrolled by
// hand, with their enrollments in several states: three on their way (the first step due a day
// after it runs), one that replied, one paused by hand, one waiting for its window. It is left
// drafted: running it (`POST /v1/sequences/{id}/run`) is the first thing to try in test mode, and a
// data set that schedules nothing by itself never sends on its own.
import { newId } from '../../platform/ids.ts';
import { writeChild } from '../../platform/resource/children.ts';
import { createRecord, getRow } from '../../platform/resource/store.ts';
import { selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { enrol } from '../sequences/enrollments.store.ts';
import { sequences } from '../sequences/sequences.resource.ts';
import { sequenceSteps } from '../sequences/steps.children.ts';
import { SANDBOX_MAILBOX } from './sandbox.mailboxes.ts';

export const SANDBOX_SEQUENCES = 1;
const ENROLLED = 6;
const STEPS = [
  { subject: 'Quick question, {{ contact.first_name | default: "there" }}', body: 'Hi {{ contact.first_name | default: "there" }},\n\nHow does {{ contact.company | default: "your team" }} handle its pipeline today?\n\nNot for you? {{ unsubscribe_url }}' },
  { time_interval: 2 * 86_400, body: 'Following up on my note, {{ first_name | default: "there" }}.' },
];
/** The enrollments set apart from the three on their way, in the order of the contacts enrolled. */
const SET_APART: ReadonlyArray<Record<string, unknown>> = [
  { status: 'finished', reason: 'replied', due_at: null, step_index: 1 },
  { status: 'paused', due_at: null },
  { status: 'pending' },
];

export async function seedSandboxSequence(w: WriteContext, contactIds: readonly string[]): Promise<void> {
  const box = await selectIn(w.tx, 'mailboxes', w.scope).select('id').where('email', '=', SANDBOX_MAILBOX.email).executeTakeFirst();
  if (!box || contactIds.length < ENROLLED) return;
  const { id } = await createRecord(sequences, w, {
    name: 'Founder outreach', description: 'Two e-mails, two days apart', mailbox_ids: [box.id],
    schedule: { timezone: 'Europe/London', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_hour: 9, end_hour: 17 },
  });
  await w.flush();
  for (const step of STEPS) await writeChild(sequenceSteps, w, id, newId('stp'), step);
  const row = await getRow(sequences, w.tx, w.dialect, w.scope, id);
  const made = await enrol(w, row, contactIds.slice(0, ENROLLED), 86_400, false);
  const enrolled = contactIds.slice(0, ENROLLED).map((c) => made.get(c)!.id);
  for (const [i, set] of SET_APART.entries()) {
    await updateIn(w.tx, 'sequence_enrollments', w.scope).set({ ...set, ...(set.status === 'finished' ? { finished_at: w.now } : {}) } as never).where('id', '=', enrolled[ENROLLED - 1 - i]).execute();
  }
}
