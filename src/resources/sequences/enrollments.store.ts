// Making enrollments and the moves the lifecycle of one does beyond its state (enrollments.resource.ts).
// Enrolling is set-based: the contacts not yet in the sequence are read once and inserted in chunks,
// each enrollment due at once (its first step's wait counted from now), and the sequence's scheduler
// woken; a contact already in it is left as it is.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { newId } from '../../platform/ids.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { ActionOutcome } from '../../platform/resource/lifecycle.ts';
import { selectIn, tenantOf } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { OPEN_ENROLLMENT } from './sequences.schemas.ts';
import { SWEEP, sweepKey } from './sweep-kind.ts';

/** Rows inserted by one statement: well inside both stores' limits on bound values. */
const CHUNK = 500;

/** Wakes the sequence's scheduler at `at` (unix seconds) or before. */
export function wakeSweep(w: WriteContext, sequenceId: string, at = w.now): void {
  w.wake(sweepKey(sequenceId), SWEEP, { sequence_id: sequenceId }, at * 1000);
}

/** The open enrollment of each of `contactIds` already in the sequence, by contact. */
async function alreadyIn(w: WriteContext, sequenceId: string, contactIds: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (let i = 0; i < contactIds.length; i += CHUNK) {
    const rows = await selectIn(w.tx, 'sequence_enrollments', w.scope).select(['id', 'contact_id'])
      .where('sequence_id', '=', sequenceId).where('status', 'in', [...OPEN_ENROLLMENT]).where('contact_id', 'in', contactIds.slice(i, i + CHUNK)).execute();
    for (const r of rows) found.set(r.contact_id, r.id);
  }
  return found;
}

/**
 * Enrolls `contactIds` (contacts of the tenant, checked by the caller) in the sequence, due
 * `firstWait` seconds from now; answers the enrollment of each, new or the open one it had.
 */
export async function enrol(w: WriteContext, sequence: Row, contactIds: readonly string[], firstWait: number, live: boolean): Promise<Map<string, { id: string; created: boolean }>> {
  const known = await alreadyIn(w, sequence.id, contactIds);
  const open = new Map([...known].map(([contactId, id]) => [contactId, { id, created: false }]));
  const fresh = contactIds.filter((id) => !known.has(id));
  const due = w.now + firstWait;
  for (let i = 0; i < fresh.length; i += CHUNK) {
    const rows = fresh.slice(i, i + CHUNK).map((contactId) => {
      const id = newId('enr');
      open.set(contactId, { id, created: true });
      return {
        ...tenantOf(w.scope), id, sequence_id: sequence.id, contact_id: contactId, status: 'active', reason: null, error: null, step_index: 0, due_at: due,
        mailbox_id: null, thread_message_ids: '[]', task_id: null, paused_until: null, last_sent_at: null, finished_at: null, created_at: w.now, updated_at: w.now,
      };
    });
    await w.tx.insertInto('sequence_enrollments').values(rows).execute();
  }
  if (fresh.length > 0 && live) wakeSweep(w, sequence.id, due);
  return open;
}

/** The contacts of a list not in the sequence yet (created after `since`, when given), oldest first. */
export async function listContacts(w: WriteContext, listId: string, since?: number): Promise<string[]> {
  let q = selectIn(w.tx, 'contacts', w.scope).select('id').where('list_id', '=', listId);
  if (since !== undefined) q = q.where('created_at', '>=', since);
  return (await q.orderBy('id').execute()).map((r) => r.id);
}

export async function finishEnrollment(_w: WriteContext, _row: Row, input: Record<string, unknown>): Promise<ActionOutcome> {
  return { set: { reason: (input.reason as string | undefined) ?? 'manual', due_at: null, paused_until: null } };
}

/** Its next step is due now, or when it was due if later, and the scheduler is woken for it. */
export async function resumeEnrollment(w: WriteContext, row: Row): Promise<ActionOutcome> {
  const waitsForTask = row.task_id !== null;
  const due = waitsForTask ? null : Math.max(w.now, Number(row.due_at ?? w.now));
  if (due !== null) wakeSweep(w, String(row.sequence_id), due);
  return { set: { due_at: due, paused_until: null } };
}

/** Finishes every open enrollment of the sequence in one statement (a terminated or deleted sequence's). */
export async function finishAllOpen(w: WriteContext, sequenceId: string, reason: string): Promise<number> {
  const result = await w.tx.updateTable('sequence_enrollments')
    .set({ status: 'finished', reason, due_at: null, finished_at: w.now, updated_at: w.now })
    .where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode)
    .where('sequence_id', '=', sequenceId).where('status', 'in', [...OPEN_ENROLLMENT])
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Enrollments by state of each sequence named, in one statement. */
export async function countsOf(db: Kysely<DB>, scope: Scope, ids: readonly string[]) {
  const counts = new Map(ids.map((id) => [id, { enrolled: 0, active: 0, finished: 0, replied: 0, bounced: 0 }]));
  if (ids.length === 0) return counts;
  const rows = await selectIn(db, 'sequence_enrollments', scope)
    .select(['sequence_id', 'status', 'reason', sql<number>`count(*)`.as('n')])
    .where('sequence_id', 'in', ids).groupBy(['sequence_id', 'status', 'reason']).execute();
  for (const r of rows) {
    const c = counts.get(r.sequence_id)!;
    const n = Number(r.n);
    c.enrolled += n;
    if ((OPEN_ENROLLMENT as readonly string[]).includes(r.status)) c.active += n;
    if (r.status === 'finished') c.finished += n;
    if (r.reason === 'replied') c.replied += n;
    if (r.reason === 'bounced') c.bounced += n;
  }
  return counts;
}
