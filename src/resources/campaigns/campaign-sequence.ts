// A campaign sends through a sequence of its own (sequences/): the launch makes it from the
// campaign's steps, schedule and mailboxes, enrolls the audience in it and runs it, all in the
// launch's transaction; from then on the campaign's state follows the sequence's (paused, resumed,
// completed), whichever of the two was acted on. Its messages (e-mails and texts) cost one credit
// each, debited by the scheduler in the write that queues them (sequences/scheduler.ts), and given
// back when the provider refuses one for good.
import { parseJson } from '../../db/sql.ts';
import { AppError } from '../../platform/errors.ts';
import type { EventType } from '../../platform/event-types.ts';
import { newId } from '../../platform/ids.ts';
import type { Row } from '../../platform/resource/define.ts';
import { writeChild } from '../../platform/resource/children.ts';
import { performAction } from '../../platform/resource/lifecycle.ts';
import { createRecord, findRow, getRow } from '../../platform/resource/store.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Schedule } from '../../platform/time/schedule.ts';
import { readCounter, type EventFollower, type FollowedEvent, type WriteContext } from '../../platform/write.ts';
import { enrol } from '../sequences/enrollments.store.ts';
import { sequences } from '../sequences/sequences.resource.ts';
import { sequenceSteps } from '../sequences/steps.children.ts';
import { refundCredits } from '../usage/usage.store.ts';
import { campaigns } from './campaigns.resource.ts';
import type { Step } from './campaigns.schemas.ts';

const STEP_TYPES = { email: 'EMAIL', linkedin: 'LINKEDIN', phone: 'PHONE', sms: 'SMS' } as const;
/** A campaign without a schedule sends at any hour of any day. */
const ANY_TIME: Schedule = { timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start_hour: 0, end_hour: 24 };

/** The messages a launch may send, one credit each: every contact enrolled gets each e-mail and SMS step once. */
export const messagesOf = (steps: readonly Step[], contacts: number) => contacts * steps.filter((s) => s.channel === 'email' || s.channel === 'sms').length;

/** 402 before anything is enrolled when the balance cannot pay for every message the campaign may send. */
export async function requireCredits(w: WriteContext, steps: readonly Step[], contacts: number): Promise<void> {
  const needed = messagesOf(steps, contacts);
  const balance = await readCounter(w.tx, w.scope, 'credits');
  if (needed > balance) {
    throw new AppError('payment_required', `Not enough credits: the launch needs ${needed} (one per message it may send) and the balance is ${balance}`);
  }
}

/** Makes the campaign's sequence, enrolls `contactIds` in it and runs it; answers its id. */
export async function launchSequence(w: WriteContext, campaign: Row, contactIds: readonly string[]): Promise<string> {
  const steps = parseJson<Step[]>(campaign.steps);
  const made = await createRecord(sequences, w, {
    name: String(campaign.name).slice(0, 200), description: `The steps of campaign ${campaign.name}`, campaign_id: campaign.id,
    mailbox_ids: parseJson<string[]>(campaign.mailbox_ids), schedule: parseJson<Schedule | null>(campaign.schedule) ?? ANY_TIME,
  });
  // Its row is inserted with the write's other rows; its steps and enrollments read it now.
  await w.flush();
  for (const step of steps) {
    await writeChild(sequenceSteps, w, made.id, newId('stp'), {
      // A text has no subject: one written on an SMS step is not sent.
      step_type: STEP_TYPES[step.channel], time_interval: step.delay_days * 86_400, subject: step.channel === 'sms' ? null : step.subject, body: step.body,
    }, 'post');
  }
  const sequence = await getRow(sequences, w.tx, w.dialect, w.scope, made.id);
  await enrol(w, sequence, contactIds, (steps[0]?.delay_days ?? 0) * 86_400, false);
  await performAction(sequences, w, sequence, 'run');
  return made.id;
}

/** The campaign's sequence, when it has one still. */
const sequenceOf = (w: WriteContext, campaign: Row) =>
  (campaign.sequence_id ? findRow(sequences, w.tx, w.dialect, w.scope, String(campaign.sequence_id)) : Promise.resolve(undefined));

/** Pausing a campaign pauses its sequence (a sequence still being scheduled: 409, try once it is live). */
export async function pauseSequence(w: WriteContext, campaign: Row): Promise<void> {
  const sequence = await sequenceOf(w, campaign);
  if (sequence?.status === 'live') await performAction(sequences, w, sequence, 'pause');
  else if (sequence?.status === 'scheduling') throw new AppError('conflict', 'The campaign is still being scheduled: pause it once its sequence is live');
}

/** Resuming a campaign resumes its sequence, paused or still pausing. */
export async function resumeSequence(w: WriteContext, campaign: Row): Promise<void> {
  const sequence = await sequenceOf(w, campaign);
  if (sequence?.status === 'paused' || sequence?.status === 'pausing') await performAction(sequences, w, sequence, 'resume');
}

/** The campaign moves as its sequence did, when the sequence was acted on itself. */
const FOLLOWS: Partial<Record<string, { from: string; action: string }>> = {
  'sequence.paused': { from: 'active', action: 'pause' },
  'sequence.resumed': { from: 'paused', action: 'resume' },
  'sequence.completed': { from: 'active', action: 'complete' },
  'sequence.terminated': { from: 'any', action: 'complete' },
};

async function follow(w: WriteContext, event: FollowedEvent): Promise<void> {
  if (event.type === 'message.failed') return refundFailed(w, event);
  const campaignId = event.object.campaign_id;
  if (typeof campaignId !== 'string') return;
  const campaign = await findRow(campaigns, w.tx, w.dialect, w.scope, campaignId);
  const move = FOLLOWS[event.type]!;
  if (!campaign || !(move.from === 'any' ? ['active', 'paused'] : [move.from]).includes(String(campaign.status))) return;
  await performAction(campaigns, w, campaign, move.action);
}

/**
 * A message of a campaign paid for and never sent gets its credit back: one the provider refused for
 * good, or one whose recipient was suppressed after it was queued (one suppressed when it was
 * queued was never paid for).
 */
async function refundFailed(w: WriteContext, event: FollowedEvent): Promise<void> {
  const message = event.object;
  const paid = message.status === 'failed' || (message.status === 'suppressed' && event.previous?.status === 'queued');
  if (!paid || message.record_type !== 'sequence') return;
  const sequence = await selectIn(w.tx, 'sequences', w.scope).select(['campaign_id']).where('id', '=', String(message.record_id)).executeTakeFirst();
  if (sequence?.campaign_id) await refundCredits(w, 1, 'campaign.send', sequence.campaign_id, `Message ${String(message.id)} failed: ${String(message.error ?? 'refused by the provider')}`);
}

export const campaignFollower: EventFollower = {
  types: [...Object.keys(FOLLOWS) as EventType[], 'message.failed'],
  async follow(w, events) {
    for (const event of events) await follow(w, event);
  },
};
