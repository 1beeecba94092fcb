// What campaigns do beyond the kernel's CRUD and lifecycle: the editing rules, and the work of the
// launch: it records the audience in one set-based statement, so its cost does not grow with round
// trips, checks the balance covers every message the campaign may send (a refusal leaves no
// enrollment, no status change and no event) and makes, fills and runs the campaign's sequence
// (campaign-sequence.ts), which sends its steps.
import { sql, type SqlBool } from 'kysely';
import { parseJson } from '../../db/sql.ts';
import { badRequest, conflict } from '../../platform/errors.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { ActionOutcome } from '../../platform/resource/lifecycle.ts';
import { deleteRecord, findRow } from '../../platform/resource/store.ts';
import { deleteIn, selectIn } from '../../platform/resource/tenancy.ts';
import { scheduleOf, type ScheduleInput } from '../../platform/time/schedule.ts';
import type { WriteContext } from '../../platform/write.ts';
import { requireContactList } from '../lists/lists.store.ts';
import { requireMailboxes } from '../mailboxes/mailboxes.store.ts';
import { sequences } from '../sequences/sequences.resource.ts';
import { launchSequence, pauseSequence, requireCredits, resumeSequence } from './campaign-sequence.ts';
import type { Step, StepInput } from './campaigns.schemas.ts';
import { audienceSuppressedSql } from './preflight-audience.ts';
import { stepVariables } from './template-variables.ts';
import { preflight, preflightRefusal } from './preflight.ts';

const EDITABLE = ['draft', 'paused'];
/** What the campaign's sequence holds once it is launched, and is changed there. */
const SENT_BY_SEQUENCE = ['steps', 'schedule', 'mailbox_ids'];

const toSteps = (steps: StepInput[]): Step[] =>
  steps.map((s) => ({ channel: s.channel, delay_days: s.delay_days ?? 0, subject: s.subject ?? null, body: s.body ?? null }));

/** Every step must use one of the campaign's channels. */
function checkChannels(channels: string[], steps: Step[]): void {
  const index = steps.findIndex((s) => !channels.includes(s.channel));
  if (index >= 0) {
    throw badRequest(`Step ${index + 1} uses channel ${steps[index].channel}, which is not among the campaign's channels (${channels.join(', ') || 'none'})`);
  }
}

/**
 * Checks and completes a campaign about to be written: the audience, the steps (with their
 * defaults) and channels that must agree, the schedule; and on update, the editing rules.
 */
export async function beforeWrite(w: WriteContext, row: Record<string, unknown>, ctx: { before?: Row; input: Record<string, unknown> }): Promise<void> {
  const { before, input } = ctx;
  const old = before && { status: before.status as string, steps: parseJson<Step[]>(before.steps), channels: parseJson<string[]>(before.channels) };
  if (old && !EDITABLE.includes(old.status)) throw conflict('Only draft or paused campaigns can be edited');
  if (before && input.list_id !== undefined && input.list_id !== before.list_id) {
    // Enrollment happened at launch; a new list would not change who is in the campaign.
    if (before.launched_at !== null) throw conflict('The audience of a launched campaign cannot be changed');
  }
  const sent = before?.sequence_id ? SENT_BY_SEQUENCE.find((f) => input[f] !== undefined) : undefined;
  if (sent) throw conflict(`The campaign sends through its sequence: change ${sent} there (/v1/sequences/${String(before!.sequence_id)})`);
  if (typeof input.list_id === 'string' && input.list_id !== before?.list_id) await requireContactList(w, input.list_id, 'A campaign audience');
  if (input.mailbox_ids !== undefined) await requireMailboxes(w, input.mailbox_ids as string[]);
  const steps = input.steps === undefined ? old?.steps ?? [] : toSteps(input.steps as StepInput[]);
  if (old?.status === 'paused' && steps.length === 0) throw conflict('A paused campaign must keep at least one step');
  const channels = (input.channels as string[] | undefined) ?? old?.channels ?? [...new Set(steps.map((st) => st.channel))];
  if (!before || input.steps !== undefined || input.channels !== undefined) checkChannels(channels, steps);
  if (input.steps !== undefined || !before) row.steps = JSON.stringify(steps);
  if (input.channels !== undefined || !before) row.channels = JSON.stringify(channels);
  if (input.schedule !== undefined) {
    const schedule = input.schedule === null ? null : scheduleOf(input.schedule as ScheduleInput);
    row.schedule = schedule === null ? null : JSON.stringify(schedule);
  }
}

/** A campaign's enrollments go with it, and its sequence (whatever its state: it stops sending). */
export async function beforeDelete(w: WriteContext, row: Row): Promise<void> {
  await deleteIn(w.tx, 'campaign_enrollments', w.scope).where('campaign_id', '=', row.id).execute();
  if (row.sequence_id && await findRow(sequences, w.tx, w.dialect, w.scope, String(row.sequence_id))) {
    await deleteRecord(sequences, w, String(row.sequence_id), { with_campaign: true });
  }
}

/**
 * Records the contacts of the audience list that are not suppressed (an e-mail address of theirs is
 * suppressed, or it or its domain is a suppression-list entry of the tenant) as the campaign's
 * enrollments, and answers their ids.
 */
async function enrollAudience(w: WriteContext, campaignId: string, listId: string): Promise<string[]> {
  const rows = w.tx.selectFrom('contacts as c')
    .select([
      'c.org_id', 'c.mode', sql<string>`cast(${campaignId} as text)`.as('campaign_id'), 'c.id as contact_id',
      sql<number>`cast(${w.now} as bigint)`.as('created_at'),
    ])
    // Scoped by hand: an insert from a select needs the table's alias, which tenancy.ts does not give.
    .where('c.org_id', '=', w.scope.orgId).where('c.mode', '=', w.scope.mode).where('c.list_id', '=', listId)
    .where(sql<SqlBool>`not ${sql.raw(audienceSuppressedSql(w.dialect, 'c'))}`);
  await w.tx.insertInto('campaign_enrollments')
    .columns(['org_id', 'mode', 'campaign_id', 'contact_id', 'created_at'])
    .expression(rows)
    .execute();
  return (await selectIn(w.tx, 'campaign_enrollments', w.scope).select('contact_id').where('campaign_id', '=', campaignId).orderBy('contact_id').execute()).map((r) => r.contact_id);
}

/** Refuses to launch or resume a campaign with nothing to send: launching debits credits, which must buy something. */
function requireSteps(row: Row, doing: string): void {
  if (parseJson<Step[]>(row.steps).length === 0) throw conflict(`Campaign has no steps: add at least one step before ${doing}`);
}

/**
 * The launch's own work (campaigns.resource.ts declares the move): refused with 409 when a check of
 * the preflight fails, unless forced; then enrolls the audience, refuses with 402 when the balance
 * cannot pay one credit per message the campaign may send, and runs the campaign's sequence. The
 * checks read in the launch's transaction, so what they passed is what launches.
 */
export async function launch(w: WriteContext, row: Row, input: Record<string, unknown>): Promise<ActionOutcome> {
  if (!row.list_id) throw badRequest('Campaign has no audience: set list_id to a list of type contacts or leads before launching');
  requireSteps(row, 'launching');
  if (input.force !== true) {
    const result = await preflight(w.tx, w.scope, row, w.now);
    if (!result.ready) throw preflightRefusal(result);
  }
  const steps = parseJson<Step[]>(row.steps);
  if (steps.some((s) => s.channel === 'email') && parseJson<string[]>(row.mailbox_ids).length === 0) {
    throw badRequest('Campaign has e-mail steps and no mailbox to send them from: set mailbox_ids before launching');
  }
  const { problems } = stepVariables(steps);
  if (problems.length > 0) throw badRequest(`Campaign steps cannot be sent: ${problems.join('; ')}`);
  const enrolled = await enrollAudience(w, row.id, row.list_id as string);
  await requireCredits(w, steps, enrolled.length);
  const sequenceId = await launchSequence(w, row, enrolled);
  return { set: { audience_count: enrolled.length, sequence_id: sequenceId } };
}

export async function pause(w: WriteContext, row: Row): Promise<void> {
  await pauseSequence(w, row);
}

export async function resume(w: WriteContext, row: Row): Promise<void> {
  requireSteps(row, 'resuming');
  await resumeSequence(w, row);
}
