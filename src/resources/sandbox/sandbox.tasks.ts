// The sandbox's tasks and notes, on sample contacts and deals: open tasks due later, open tasks
// already overdue, completed ones, and notes (one pinned). Made through the kernel, so their
// associations and events are what the API would have recorded.
import { createRecord } from '../../platform/resource/store.ts';
import type { WriteContext } from '../../platform/write.ts';
import { notes } from '../notes/notes.resource.ts';
import { tasks } from '../tasks/tasks.resource.ts';

interface SeededDeal { id: string; contact_id: string | null }

const DAY = 86_400;

// Title, type, status, priority, due in days (negative: past), on the deal (else on a contact).
const TASKS: Array<[string, string, 'open' | 'completed', number, number, boolean]> = [
  ['Send the security questionnaire', 'email', 'open', 3, -3, true],
  ['Follow up on the pilot results', 'call', 'open', 2, -1, true],
  ['Book the pricing review', 'meeting', 'open', 2, 2, true],
  ['Connect with the new VP Engineering', 'linkedin', 'open', 1, 5, false],
  ['Prepare the renewal quote', 'todo', 'open', 4, 7, true],
  ['Intro call', 'call', 'completed', 1, -10, false],
  ['Send the case study', 'email', 'completed', 0, -6, false],
  ['Update the champion\'s contact details', 'todo', 'open', 0, -2, false],
];

const NOTES: Array<[string, boolean, boolean]> = [
  ['**Discovery call.** 40 seats now, 200 next year; security review owned by IT.', true, true],
  ['Champion prefers e-mail; decision expected before quarter end.', false, true],
  ['Met at the London user group; interested in the data add-on.', false, false],
  ['Asked for a reference customer in the same industry.', false, false],
  ['Budget approved for the pilot. Next step: pricing review.', false, true],
  ['Out of office until Monday.', false, false],
];

/** How many tasks and notes the sandbox holds. */
export const SANDBOX_TASKS = TASKS.length;
export const SANDBOX_NOTES = NOTES.length;

export async function seedSandboxTasksNotes(w: WriteContext, dealsMade: SeededDeal[], contactIds: string[]): Promise<void> {
  const on = (i: number, onDeal: boolean) => {
    const deal = dealsMade[i % dealsMade.length];
    return onDeal && deal
      ? { deal_ids: [deal.id], contact_ids: deal.contact_id ? [deal.contact_id] : [] }
      : { contact_ids: [contactIds[i % contactIds.length]] };
  };
  for (const [i, [title, type, status, priority, dueIn, onDeal]] of TASKS.entries()) {
    await createRecord(tasks, w, {
      title, type, status, priority, due_at: w.now + dueIn * DAY, assignee: i % 2 === 0 ? 'ada@example.com' : 'grace@example.com', associations: on(i, onDeal),
    });
  }
  for (const [i, [content, pinned, onDeal]] of NOTES.entries()) {
    await createRecord(notes, w, { content, pinned, created_by: i % 2 === 0 ? 'ada@example.com' : 'grace@example.com', associations: on(i, onDeal) });
  }
}
