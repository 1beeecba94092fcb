// Campaigns and their lifecycle: draft → active (launch) ⇄ paused. Launch enrolls the audience in
// one set-based statement, so its cost does not grow with round trips, and pays for it in the same
// transaction: a refused debit leaves no enrollment, no status change and no event.
import { sql, type Kysely, type Selectable, type SqlBool } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { emailDomain, parseJson } from '../../db/sql.ts';
import { badRequest, conflict, notFound, validationError } from '../../platform/errors.ts';
import type { EventType } from '../../platform/event-types.ts';
import { newId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { Scope } from '../../platform/scope.ts';
import { readCounter, type WriteContext } from '../../platform/write.ts';
import { CONTACT_LIST_TYPES } from '../lists/lists.schemas.ts';
import { findList, LIST_NOT_FOUND, previous } from '../lists/lists.store.ts';
import { debitCredits } from '../usage/usage.store.ts';
import type { Campaign, CampaignCreate, CampaignQuery, CampaignUpdate, Schedule, ScheduleInput, Step } from './campaigns.schemas.ts';

type Row = Selectable<DB['campaigns']>;

export const CAMPAIGN_NOT_FOUND = 'Campaign not found';
const EDITABLE = ['draft', 'paused'];

export const toCampaign = (r: Row): Campaign => ({
  id: r.id, name: r.name, status: r.status as Campaign['status'],
  channels: parseJson<Campaign['channels']>(r.channels), list_id: r.list_id,
  steps: parseJson<Step[]>(r.steps), schedule: r.schedule === null ? null : parseJson<Schedule>(r.schedule),
  audience_count: Number(r.audience_count), launched_at: r.launched_at === null ? null : Number(r.launched_at),
  created_at: Number(r.created_at), updated_at: Number(r.updated_at),
});

const scoped = (db: Kysely<DB>, scope: Scope) =>
  db.selectFrom('campaigns').where('campaigns.org_id', '=', scope.orgId).where('campaigns.mode', '=', scope.mode);

export async function findCampaign(db: Kysely<DB>, scope: Scope, id: string): Promise<Row> {
  const row = await scoped(db, scope).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(CAMPAIGN_NOT_FOUND);
  return row;
}

function filtered(db: Kysely<DB>, scope: Scope, query: CampaignQuery) {
  let q = scoped(db, scope);
  if (query.status !== undefined) q = q.where('status', '=', query.status);
  if (query.list_id !== undefined) q = q.where('list_id', '=', query.list_id);
  return q;
}

export function listCampaigns(db: Kysely<DB>, scope: Scope, query: CampaignQuery, page: PageRequest): Promise<Row[]> {
  let q = filtered(db, scope, query).selectAll();
  if (page.after !== undefined) q = q.where('id', '<', String(page.after));
  return q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute();
}

/** The exact number of campaigns matching the query; the unfiltered total is a maintained counter. */
export async function countCampaigns(db: Kysely<DB>, scope: Scope, query: CampaignQuery): Promise<number> {
  if (query.status === undefined && query.list_id === undefined) return readCounter(db, scope, 'campaigns');
  const row = await filtered(db, scope, query).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Checks that the audience is a list of the tenant that holds contacts. */
async function requireAudience(w: WriteContext, listId: string | null | undefined): Promise<void> {
  if (!listId) return;
  const list = await findList(w.tx, w.scope, listId);
  if (!list) throw notFound(LIST_NOT_FOUND);
  if (!CONTACT_LIST_TYPES.includes(list.type)) throw badRequest(`A campaign audience must be a list of type ${CONTACT_LIST_TYPES.join(' or ')}; list ${listId} is of type ${list.type}`);
}

const toSteps = (steps: NonNullable<CampaignCreate['steps']>): Step[] =>
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

export async function createCampaign(w: WriteContext, input: CampaignCreate): Promise<Campaign> {
  await requireAudience(w, input.list_id);
  const steps = toSteps(input.steps ?? []);
  const channels = input.channels ?? [...new Set(steps.map((s) => s.channel))];
  checkChannels(channels, steps);
  const schedule = toSchedule(input.schedule ?? null);
  const row: Row = {
    id: newId('cpg'), org_id: w.scope.orgId, mode: w.scope.mode, name: input.name, status: 'draft',
    channels: JSON.stringify(channels), list_id: input.list_id ?? null, steps: JSON.stringify(steps),
    schedule: schedule === null ? null : JSON.stringify(schedule), audience_count: 0, launched_at: null,
    created_at: w.now, updated_at: w.now,
  };
  await w.tx.insertInto('campaigns').values(row).execute();
  w.count('campaigns', 1);
  const campaign = toCampaign(row);
  w.emit('campaign.created', campaign);
  return campaign;
}

export async function updateCampaign(w: WriteContext, id: string, input: CampaignUpdate): Promise<Campaign> {
  const before = await findCampaign(w.tx, w.scope, id);
  if (!EDITABLE.includes(before.status)) throw conflict('Only draft or paused campaigns can be edited');
  const old = toCampaign(before);
  const changes: Partial<Row> = { updated_at: w.now };
  if (input.name !== undefined) changes.name = input.name;
  if (input.list_id !== undefined && input.list_id !== old.list_id) {
    // Enrollment happened at launch; a new list would not change who is in the campaign.
    if (old.launched_at !== null) throw conflict('The audience of a launched campaign cannot be changed');
    await requireAudience(w, input.list_id);
    changes.list_id = input.list_id;
  }
  const steps = input.steps === undefined ? old.steps : toSteps(input.steps);
  const channels = input.channels ?? old.channels;
  if (input.steps !== undefined || input.channels !== undefined) checkChannels(channels, steps);
  if (input.steps !== undefined) changes.steps = JSON.stringify(steps);
  if (input.channels !== undefined) changes.channels = JSON.stringify(channels);
  if (input.schedule !== undefined) {
    const schedule = toSchedule(input.schedule);
    changes.schedule = schedule === null ? null : JSON.stringify(schedule);
  }
  await w.tx.updateTable('campaigns').set(changes).where('id', '=', id).where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).execute();
  const campaign = toCampaign({ ...before, ...changes });
  w.emit('campaign.updated', campaign, previous(old, input));
  return campaign;
}

export async function deleteCampaign(w: WriteContext, id: string): Promise<{ id: string; deleted: true }> {
  const before = await findCampaign(w.tx, w.scope, id);
  const { orgId, mode } = w.scope;
  await w.tx.deleteFrom('campaign_enrollments').where('org_id', '=', orgId).where('mode', '=', mode).where('campaign_id', '=', id).execute();
  await w.tx.deleteFrom('campaigns').where('id', '=', id).where('org_id', '=', orgId).where('mode', '=', mode).execute();
  w.count('campaigns', -1);
  w.emit('campaign.deleted', toCampaign(before));
  return { id, deleted: true };
}

/**
 * Enrolls the contacts of the audience list that are not suppressed (an e-mail address of theirs,
 * or its domain, is a suppression entry of the tenant) and returns how many were enrolled.
 */
async function enrollAudience(w: WriteContext, campaignId: string, listId: string): Promise<number> {
  const { orgId, mode } = w.scope;
  const suppressed = sql<SqlBool>`exists (select 1 from list_entries e where e.org_id = ${orgId} and e.mode = ${mode}
    and e.value in (c.work_email, c.email_domain, c.personal_email, ${emailDomain(w.dialect, 'c.personal_email')}))`;
  const audience = w.tx.selectFrom('contacts as c')
    .select([
      'c.org_id', 'c.mode', sql<string>`cast(${campaignId} as text)`.as('campaign_id'), 'c.id as contact_id',
      sql<number>`cast(${w.now} as bigint)`.as('created_at'),
    ])
    .where('c.org_id', '=', orgId).where('c.mode', '=', mode).where('c.list_id', '=', listId)
    .where(({ not }) => not(suppressed));
  const result = await w.tx.insertInto('campaign_enrollments')
    .columns(['org_id', 'mode', 'campaign_id', 'contact_id', 'created_at'])
    .expression(audience)
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0);
}

/** Launches a draft: enrolls the audience, debits one credit per enrolled contact, moves it to active. */
export async function launchCampaign(w: WriteContext, id: string): Promise<Campaign> {
  const before = await findCampaign(w.tx, w.scope, id);
  if (before.status !== 'draft') throw conflict('Campaign is not a draft');
  if (!before.list_id) throw badRequest('Campaign has no audience: set list_id to a list of type contacts or leads before launching');
  const enrolled = await enrollAudience(w, id, before.list_id);
  if (enrolled > 0) {
    await debitCredits(w, enrolled, 'campaign.launch', id, `Launch of campaign "${before.name}": ${enrolled} contact${enrolled === 1 ? '' : 's'} enrolled`);
  }
  const changes = { status: 'active', launched_at: w.now, audience_count: enrolled, updated_at: w.now };
  await w.tx.updateTable('campaigns').set(changes).where('id', '=', id).where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).execute();
  const campaign = toCampaign({ ...before, ...changes });
  w.emit('campaign.launched', campaign, { status: before.status, launched_at: null, audience_count: Number(before.audience_count) });
  return campaign;
}

async function transition(w: WriteContext, id: string, from: string, to: string, event: EventType, refusal: (status: string) => string): Promise<Campaign> {
  const before = await findCampaign(w.tx, w.scope, id);
  if (before.status !== from) throw conflict(refusal(before.status));
  const changes = { status: to, updated_at: w.now };
  await w.tx.updateTable('campaigns').set(changes).where('id', '=', id).where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).execute();
  const campaign = toCampaign({ ...before, ...changes });
  w.emit(event, campaign, { status: from });
  return campaign;
}

export const pauseCampaign = (w: WriteContext, id: string) =>
  transition(w, id, 'active', 'paused', 'campaign.paused', (status) => `Only active campaigns can be paused; this campaign is ${status}`);

export const resumeCampaign = (w: WriteContext, id: string) =>
  transition(w, id, 'paused', 'active', 'campaign.resumed', (status) => `Only paused campaigns can be resumed; this campaign is ${status}`);
