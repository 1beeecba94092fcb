// What campaigns do beyond the kernel's CRUD and lifecycle: the editing rules, and the work of the
// launch, which enrolls the audience in one set-based statement, so its cost does not grow with round
// trips, and pays for it in the same transaction: a refused debit leaves no enrollment, no status
// change and no event.
import { sql, type SqlBool } from 'kysely';
import { parseJson } from '../../db/sql.ts';
import { badRequest, conflict, notFound, validationError } from '../../platform/errors.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { ActionOutcome } from '../../platform/resource/lifecycle.ts';
import { deleteIn, selectIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { CONTACT_LIST_TYPES, lists } from '../lists/lists.resource.ts';
import { requireMailboxes } from '../mailboxes/mailboxes.store.ts';
import { debitCredits } from '../usage/usage.store.ts';
import type { Schedule, ScheduleInput, Step, StepInput } from './campaigns.schemas.ts';
import { audienceSuppressedSql } from './preflight-audience.ts';
import { preflight, preflightRefusal } from './preflight.ts';

const EDITABLE = ['draft', 'paused'];

/** Checks that the audience is a list of the tenant that holds contacts. */
async function requireAudience(w: WriteContext, listId: unknown): Promise<void> {
  if (typeof listId !== 'string') return;
  const list = await selectIn(w.tx, 'lists', w.scope).select('type').where('id', '=', listId).executeTakeFirst();
  if (!list) throw notFound(lists.notFound);
  if (!CONTACT_LIST_TYPES.includes(list.type)) throw badRequest(`A campaign audience must be a list of type ${CONTACT_LIST_TYPES.join(' or ')}; list ${listId} is of type ${list.type}`);
}


const toSteps = (steps: StepInput[]): Step[] =>
  steps.map((s) => ({ channel: s.channel, delay_days: s.delay_days ?? 0, subject: s.subject ?? null, body: s.body ?? null }));

/** The canonical time-zone name, or undefined when the runtime's time-zone database does not know it. */
function canonicalTimeZone(name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

function toSchedule(input: ScheduleInput | null): Schedule | null {
  if (input === null) return null;
  const schedule = { timezone: input.timezone ?? 'UTC', days: input.days ?? ['mon', 'tue', 'wed', 'thu', 'fri'], start_hour: input.start_hour ?? 9, end_hour: input.end_hour ?? 17 };
  const timezone = canonicalTimeZone(schedule.timezone);
  if (!timezone) throw validationError([{ loc: ['body', 'schedule', 'timezone'], msg: 'value is not a known IANA time-zone name', type: 'value_error.timezone' }]);
  if (schedule.start_hour >= schedule.end_hour) {
    throw validationError([{ loc: ['body', 'schedule', 'end_hour'], msg: 'end_hour must be after start_hour', type: 'value_error.hour_range' }]);
  }
  return { ...schedule, timezone };
}

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
  if (input.list_id !== undefined && input.list_id !== before?.list_id) await requireAudience(w, input.list_id);
  if (input.mailbox_ids !== undefined) await requireMailboxes(w, input.mailbox_ids as string[]);
  const steps = input.steps === undefined ? old?.steps ?? [] : toSteps(input.steps as StepInput[]);
  if (old?.status === 'paused' && steps.length === 0) throw conflict('A paused campaign must keep at least one step');
  const channels = (input.channels as string[] | undefined) ?? old?.channels ?? [...new Set(steps.map((st) => st.channel))];
  if (!before || input.steps !== undefined || input.channels !== undefined) checkChannels(channels, steps);
  if (input.steps !== undefined || !before) row.steps = JSON.stringify(steps);
  if (input.channels !== undefined || !before) row.channels = JSON.stringify(channels);
  if (input.schedule !== undefined) {
    const schedule = toSchedule(input.schedule as ScheduleInput | null);
    row.schedule = schedule === null ? null : JSON.stringify(schedule);
  }
}

/** A campaign's enrollments go with it. */
export async function beforeDelete(w: WriteContext, row: Row): Promise<void> {
  await deleteIn(w.tx, 'campaign_enrollments', w.scope).where('campaign_id', '=', row.id).execute();
}

/**
 * Enrolls the contacts of the audience list that are not suppressed (an e-mail address of theirs is
 * suppressed, or it or its domain is a suppression-list entry of the tenant) and returns how many
 * were enrolled.
 */
async function enrollAudience(w: WriteContext, campaignId: string, listId: string): Promise<number> {
  const rows = w.tx.selectFrom('contacts as c')
    .select([
      'c.org_id', 'c.mode', sql<string>`cast(${campaignId} as text)`.as('campaign_id'), 'c.id as contact_id',
      sql<number>`cast(${w.now} as bigint)`.as('created_at'),
    ])
    // Scoped by hand: an insert from a select needs the table's alias, which tenancy.ts does not give.
    .where('c.org_id', '=', w.scope.orgId).where('c.mode', '=', w.scope.mode).where('c.list_id', '=', listId)
    .where(sql<SqlBool>`not ${sql.raw(audienceSuppressedSql(w.dialect, 'c'))}`);
  const result = await w.tx.insertInto('campaign_enrollments')
    .columns(['org_id', 'mode', 'campaign_id', 'contact_id', 'created_at'])
    .expression(rows)
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0);
}

/** Refuses to launch or resume a campaign with nothing to send: launching debits credits, which must buy something. */
function requireSteps(row: Row, doing: string): void {
  if (parseJson<Step[]>(row.steps).length === 0) throw conflict(`Campaign has no steps: add at least one step before ${doing}`);
}

/**
 * The launch's own work (campaigns.resource.ts declares the move): refused with 409 when a check of
 * the preflight fails, unless forced; then enrolls the audience and debits one credit per contact
 * enrolled. The checks read in the launch's transaction, so what they passed is what launches.
 */
export async function launch(w: WriteContext, row: Row, input: Record<string, unknown>): Promise<ActionOutcome> {
  if (!row.list_id) throw badRequest('Campaign has no audience: set list_id to a list of type contacts or leads before launching');
  requireSteps(row, 'launching');
  if (input.force !== true) {
    const result = await preflight(w.tx, w.scope, row, w.now);
    if (!result.ready) throw preflightRefusal(result);
  }
  const enrolled = await enrollAudience(w, row.id, row.list_id as string);
  if (enrolled > 0) {
    await debitCredits(w, enrolled, 'campaign.launch', row.id, `Launch of campaign "${row.name}": ${enrolled} contact${enrolled === 1 ? '' : 's'} enrolled`);
  }
  return { set: { audience_count: enrolled } };
}

export async function resume(_w: WriteContext, row: Row): Promise<void> {
  requireSteps(row, 'resuming');
}
