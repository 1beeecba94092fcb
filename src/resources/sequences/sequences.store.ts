// What sequences do beyond the kernel's CRUD and lifecycle: the checks of a write (the list, the
// mailboxes, the schedule), the guards of the actions, the counts of a page.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { deleteIn, selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { fieldError, timeZoneOf } from '../../platform/time/zones.ts';
import type { WriteContext } from '../../platform/write.ts';
import type { ScheduleInput } from '../campaigns/campaigns.schemas.ts';
import { CONTACT_LIST_TYPES, lists } from '../lists/lists.resource.ts';
import { requireMailboxes } from '../mailboxes/mailboxes.store.ts';
import { countsOf } from './enrollments.store.ts';
import { DEFAULT_SCHEDULE } from './sequences.schemas.ts';
import { stepsOf } from './steps.store.ts';
import { sweepKey } from './sweep-kind.ts';

async function requireList(w: WriteContext, listId: unknown): Promise<void> {
  if (typeof listId !== 'string') return;
  const list = await selectIn(w.tx, 'lists', w.scope).select('type').where('id', '=', listId).executeTakeFirst();
  if (!list) throw notFound(lists.notFound);
  if (!CONTACT_LIST_TYPES.includes(list.type)) throw badRequest(`A sequence enrolls a list of type ${CONTACT_LIST_TYPES.join(' or ')}; list ${listId} is of type ${list.type}`);
}


function scheduleOf(input: ScheduleInput) {
  const schedule = { ...DEFAULT_SCHEDULE, ...input };
  schedule.timezone = timeZoneOf(schedule.timezone, 'schedule.timezone');
  if (schedule.start_hour >= schedule.end_hour) throw fieldError('schedule.end_hour', 'must be after start_hour');
  return schedule;
}

export async function beforeWrite(w: WriteContext, row: Record<string, unknown>, { before, input }: { before?: Row; input: Record<string, unknown> }): Promise<void> {
  if (input.associated_list_id !== undefined && input.associated_list_id !== before?.associated_list_id) await requireList(w, input.associated_list_id);
  if (input.mailbox_ids !== undefined) await requireMailboxes(w, input.mailbox_ids as string[]);
  if (input.schedule !== undefined) row.schedule = JSON.stringify(scheduleOf(input.schedule as ScheduleInput));
}

/** A live sequence is paused or terminated before it is deleted; its steps go with it (its enrollments by their reference). */
export async function beforeDelete(w: WriteContext, row: Row): Promise<void> {
  if (row.status === 'live') throw conflict('A sequence that is live cannot be deleted: pause or terminate it first');
  await deleteIn(w.tx, 'sequence_steps', w.scope).where('sequence_id', '=', row.id).execute();
  w.cancel(sweepKey(row.id));
}

export async function enrich(db: Kysely<DB>, scope: Scope, rows: Row[], records: ApiRecord[]): Promise<void> {
  const counts = await countsOf(db, scope, rows.map((r) => r.id));
  records.forEach((record, i) => {
    record.counts = counts.get(rows[i].id);
  });
}

/** A sequence runs with at least one step, and with a mailbox when it sends e-mail. */
export async function run(w: WriteContext, row: Row): Promise<void> {
  const steps = await stepsOf(w.tx, w.scope, row.id);
  if (steps.length === 0) throw badRequest('A sequence needs at least one step to run: add one with POST /v1/sequences/{id}/steps');
  if (steps.some((s) => s.step_type === 'EMAIL') && parseJson<string[]>(row.mailbox_ids).length === 0) {
    throw badRequest('A sequence with e-mail steps needs a mailbox to send from: set mailbox_ids');
  }
}
