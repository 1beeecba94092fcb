// Campaigns and their lifecycle: draft → active (launch) ⇄ paused → completed; the launch's work is in
// campaigns.store.ts, the sequence that sends the steps and that the state follows in campaign-sequence.ts.
import { Type } from 'typebox';
import { defineResource } from '../../platform/resource/define.ts';
import { int, json, ref, text, timestamp } from '../../platform/resource/fields.ts';
import { ScheduleInputSchema, ScheduleSchema } from '../../platform/time/schedule.ts';
import { MailboxIdsInput, MailboxIdsOutput } from '../mailboxes/mailbox-ids.ts';
import { CAMPAIGN_STATUSES, Channels, LaunchBody, StepsInputSchema, StepsSchema } from './campaigns.schemas.ts';
import { beforeDelete, beforeWrite, launch, pause, resume } from './campaigns.store.ts';

export const campaigns = defineResource({
  name: 'campaign', plural: 'campaigns', prefix: 'cpg', table: 'campaigns', notFound: 'Campaign not found',
  tag: 'Campaigns', tagDescription: 'Multichannel campaigns and their launch',
  fields: {
    name: text({ required: true, min: 1, description: 'Name of the campaign', example: 'Q4 outbound' }),
    channels: json({ nullable: false, default: [], input: Channels, output: Type.Array(Channels.items, { description: 'Channels the campaign uses', examples: [['email', 'linkedin']] }), description: 'Channels the campaign uses' }),
    list_id: ref('lists', { onDelete: 'set null', check: false, prefix: 'lst', description: 'The audience: a list of type contacts or leads whose contacts are enrolled at launch; null when none is set or the list was deleted' }),
    steps: json({ nullable: false, default: [], input: StepsInputSchema, output: StepsSchema, description: 'The ordered steps' }),
    schedule: json({ input: ScheduleInputSchema, output: ScheduleSchema, description: 'When steps may be sent' }),
    mailbox_ids: json({ nullable: false, default: [], input: MailboxIdsInput, output: MailboxIdsOutput, description: 'The mailboxes the e-mail steps are sent from (SMS steps go through the SMS provider)' }),
    audience_count: int({ readOnly: true, nullable: false, default: 0, description: 'Contacts enrolled at launch (the audience minus suppressed contacts); 0 before launch', example: 180 }),
    launched_at: timestamp({ readOnly: true, description: 'When the campaign was launched, unix seconds; null before launch', example: 1767225600 }),
    sequence_id: ref('sequences', { onDelete: 'set null', check: false, readOnly: true, prefix: 'seq', description: 'The sequence that sends the steps, made by the launch (`GET /v1/sequences/{id}` for its enrollments and analytics); null before launch' }),
  },
  filters: {
    status: 'eq',
    list_id: { op: 'eq', description: 'Only campaigns aimed at this list' },
  },
  counter: 'campaigns',
  hooks: { beforeWrite, beforeDelete },
  lifecycle: {
    states: CAMPAIGN_STATUSES, initial: 'draft',
    description: 'Lifecycle state: created as `draft`, `active` once launched, `paused` and resumed by their operations (or its sequence\'s), `completed` when its sequence is (every enrollment finished, or the sequence terminated); read-only',
    actions: {
      launch: {
        from: ['draft'], to: 'active', event: 'launched', stamps: ['launched_at'], guard: launch, body: LaunchBody, operationId: 'launchCampaign', errors: [400, 402],
        summary: 'Launch a drafted campaign', eventDescription: 'A campaign was launched and its audience enrolled',
        description: 'Runs the launch preflight (`GET /v1/campaigns/{id}/launch/preflight`) first: when a check fails, the launch is refused with 409, a `detail` naming the failing checks and `checks` holding them, and nothing changes; `{"force": true}` launches anyway, and warnings never block. Then stamps `launched_at`, makes the campaign\'s sequence (`sequence_id`) from its steps (e-mail steps send from `mailbox_ids`; SMS steps are texts to each contact\'s `phone` through the SMS provider; LinkedIn and phone steps are tasks for the first mailbox\'s owner), schedule and mailboxes, enrolls the contacts of its audience list that are not suppressed (`audience_count` is the exact number enrolled) and runs it: the steps are sent in the sending window from then on. Each message sent costs one credit, debited when it is queued (and given back if the provider refuses it for good or its recipient is suppressed before it goes); the launch needs a balance covering every message it may send (contacts × e-mail and SMS steps), else 402 and nothing changes. No steps: 409; no audience list or e-mail steps without a mailbox: 400, even when forced; SMS steps in live mode with no SMS provider (no `sms` connection, no operator default): 503 `provider_not_configured`.',
      },
      pause: {
        from: ['active'], to: 'paused', event: 'paused', guard: pause,
        summary: 'Pause a campaign', eventDescription: 'An active campaign was paused',
        description: 'Pauses an active campaign and its sequence: no step is sent from now on. A campaign whose sequence is still being scheduled is 409. Pausing the sequence itself pauses the campaign too.',
      },
      resume: {
        from: ['paused'], to: 'active', event: 'resumed', guard: resume,
        summary: 'Resume a campaign', eventDescription: 'A paused campaign was resumed',
        description: 'Resumes a paused campaign and its sequence (the steps that fell due meanwhile are spread over the window, not sent at once); one without steps is 409.',
      },
      complete: {
        from: ['active', 'paused'], to: 'completed', event: 'completed', route: false,
        summary: 'Complete a campaign', eventDescription: 'A campaign completed: its sequence completed or was terminated',
        description: 'Recorded when the campaign\'s sequence completes or is terminated.',
      },
    },
  },
  routes: {
    docs: {
      list: { description: 'Lists campaigns, newest first, with an exact `total`; filter by `status` and `list_id`.' },
      create: { summary: 'Create a multichannel campaign', description: 'Creates a campaign as a `draft`. `list_id` (the audience) must be a list of type contacts or leads: an unknown list is 404 `List not found`, another type 400. Every step\'s channel must be one of `channels`; an unknown time zone or an empty sending window is 422.' },
      update: { description: 'Changes the fields given. Only draft or paused campaigns can be edited (otherwise 409); a launched campaign keeps its audience, and its steps, schedule and mailboxes are its sequence\'s from the launch on (changed through `/v1/sequences/{id}`: 409 naming it). An empty body is 400 `No fields to update`.' },
      delete: { description: 'Deletes a campaign in any state, with its enrollments and its sequence (which stops sending; messages sent stay in the outbox); reading it afterwards is 404.' },
    },
    errors: { create: [404], update: [409] },
  },
  ownedTables: ['campaign_enrollments'],
});
