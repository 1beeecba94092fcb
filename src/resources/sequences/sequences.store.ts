// What sequences do beyond the kernel's CRUD and lifecycle: the checks of a write (the list, the
// mailboxes, the schedule), what a delete stops, the guards of the actions, the counts of a page.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { badRequest, conflict } from '../../platform/errors.ts';
import { requireProvider } from '../../platform/providers/registry.ts';
import { smsKind } from '../../platform/providers/sms/sms.ts';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import type { Scope } from '../../platform/scope.ts';
import { scheduleOf, type ScheduleInput } from '../../platform/time/schedule.ts';
import type { WriteContext } from '../../platform/write.ts';
import { requireContactList } from '../lists/lists.store.ts';
import { requireMailboxes } from '../mailboxes/mailboxes.store.ts';
import { countsOf, finishAllOpen } from './enrollments.store.ts';
import { stepsOf } from './steps.store.ts';
import { sweepKey } from './sweep-kind.ts';

export async function beforeWrite(w: WriteContext, row: Record<string, unknown>, { before, input }: { before?: Row; input: Record<string, unknown> }): Promise<void> {
  if (typeof input.associated_list_id === 'string' && input.associated_list_id !== before?.associated_list_id) await requireContactList(w, input.associated_list_id, 'The list a sequence enrolls');
  // Set by a campaign's launch only (the field is read-only in the API).
  if (!before && typeof input.campaign_id === 'string') row.campaign_id = input.campaign_id;
  if (input.mailbox_ids !== undefined) await requireMailboxes(w, input.mailbox_ids as string[]);
  if (input.schedule !== undefined) row.schedule = JSON.stringify(scheduleOf(input.schedule as ScheduleInput));
}

/**
 * A live sequence is paused or terminated before it is deleted (unless its campaign is being
 * deleted). Deleted, it keeps its steps and enrollments (soft delete: the outbox, analytics and
 * history still name it) but stops acting: its open enrollments finish (reason `deleted`) and its
 * scheduler is cancelled.
 */
export async function beforeDelete(w: WriteContext, row: Row, query: Record<string, unknown>): Promise<void> {
  if (row.status === 'live' && query.with_campaign !== true) throw conflict('A sequence that is live cannot be deleted: pause or terminate it first');
  await finishAllOpen(w, row.id, 'deleted');
  w.cancel(sweepKey(row.id));
}

export async function enrich(db: Kysely<DB>, scope: Scope, rows: Row[], records: ApiRecord[]): Promise<void> {
  const counts = await countsOf(db, scope, rows.map((r) => r.id));
  records.forEach((record, i) => {
    record.counts = counts.get(rows[i].id);
  });
}

/** A sequence runs with at least one step, with a mailbox when it sends e-mail, and with an SMS provider (live mode) when it sends texts. */
export async function run(w: WriteContext, row: Row): Promise<void> {
  const steps = await stepsOf(w.tx, w.scope, row.id);
  if (steps.length === 0) throw badRequest('A sequence needs at least one step to run: add one with POST /v1/sequences/{id}/steps');
  if (steps.some((s) => s.step_type === 'EMAIL') && parseJson<string[]>(row.mailbox_ids).length === 0) {
    throw badRequest('A sequence with e-mail steps needs a mailbox to send from: set mailbox_ids');
  }
  if (steps.some((s) => s.step_type === 'SMS')) await requireProvider(smsKind, w.tx, w.scope);
}
