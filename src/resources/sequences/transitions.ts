// The work of a sequence's transitional states (declared in sequences.resource.ts), each committed
// with the next state by its job (lifecycle.ts), so a process killed mid-way leaves the sequence in
// its transitional state and the job, run again, does the whole of it.
import { sql } from 'kysely';
import { parseJson } from '../../db/sql.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { WriteContext } from '../../platform/write.ts';
import { allowanceOf, sentBy } from '../mailboxes/limits.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { enrol, finishAllOpen, listContacts, wakeSweep } from './enrollments.store.ts';
import { stepsOf } from './steps.store.ts';
import { sweepKey } from './sweep-kind.ts';

/** Scheduling: every contact of the list is enrolled, its first step due after the first wait, and the scheduler woken. */
export async function scheduled(w: WriteContext, row: Row): Promise<void> {
  const steps = await stepsOf(w.tx, w.scope, row.id);
  if (row.associated_list_id) await enrol(w, row, await listContacts(w, String(row.associated_list_id)), steps[0]?.time_interval ?? 0, false);
  wakeSweep(w, row.id);
}

/** Pausing: the scheduler stops (a run already going finds the sequence no longer live and sends nothing). */
export async function paused(w: WriteContext, row: Row): Promise<void> {
  w.cancel(sweepKey(row.id));
}

/** Messages the sequence's mailboxes may send in an hour together (at least one). */
async function hourlyRate(w: WriteContext, row: Row): Promise<number> {
  const ids = parseJson<string[]>(row.mailbox_ids);
  if (ids.length === 0) return 3600;
  const mailboxes = await selectIn(w.tx, 'mailboxes', w.scope).selectAll().where('id', 'in', ids).execute();
  const sent = await sentBy(w.tx, w.scope, ids, w.now);
  return Math.max(1, mailboxes.reduce((sum, m) => sum + allowanceOf(m, sent.get(m.id)!, w.now).this_hour, 0));
}

/**
 * Resuming: the steps that fell due while the sequence was paused are spread from now, one every
 * 3600 / rate seconds in the order they fell due, rather than sent in one burst; then the scheduler
 * is woken. One statement, whatever the number.
 */
export async function resumed(w: WriteContext, row: Row): Promise<void> {
  const rate = await hourlyRate(w, row);
  const { orgId, mode } = w.scope;
  await sql`update sequence_enrollments set due_at = cast(${w.now} as bigint) + cast((r.n - 1) * 3600 / ${rate} as integer), updated_at = ${w.now}
    from (select id, row_number() over (order by due_at, id) as n from sequence_enrollments
          where org_id = ${orgId} and mode = ${mode} and sequence_id = ${row.id} and status in ('pending', 'active') and due_at <= ${w.now}) as r
    where sequence_enrollments.org_id = ${orgId} and sequence_enrollments.mode = ${mode} and sequence_enrollments.id = r.id`.execute(w.tx);
  wakeSweep(w, row.id);
}

/** Terminating: every open enrollment finishes (reason `terminated`), the scheduler stops. */
export async function terminated(w: WriteContext, row: Row): Promise<Record<string, unknown>> {
  await finishAllOpen(w, row.id, 'terminated');
  w.cancel(sweepKey(row.id));
  return { completed_at: w.now };
}
