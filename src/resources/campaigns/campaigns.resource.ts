// Campaigns and their lifecycle: draft → active (launch) ⇄ paused; the launch's work is in campaigns.store.ts.
import { Type } from 'typebox';
import { defineResource } from '../../platform/resource/define.ts';
import { int, json, ref, text, timestamp } from '../../platform/resource/fields.ts';
import { CAMPAIGN_STATUSES, Channels, LaunchBody, MailboxIdsInput, MailboxIdsOutput, ScheduleInputSchema, ScheduleSchema, StepsInputSchema, StepsSchema } from './campaigns.schemas.ts';
import { beforeDelete, beforeWrite, launch, resume } from './campaigns.store.ts';

export const campaigns = defineResource({
  name: 'campaign', plural: 'campaigns', prefix: 'cpg', table: 'campaigns', notFound: 'Campaign not found',
  tag: 'Campaigns', tagDescription: 'Multichannel campaigns and their launch',
  fields: {
    name: text({ required: true, min: 1, description: 'Name of the campaign', example: 'Q4 outbound' }),
    channels: json({ nullable: false, default: [], input: Channels, output: Type.Array(Channels.items, { description: 'Channels the campaign uses', examples: [['email', 'linkedin']] }), description: 'Channels the campaign uses' }),
    list_id: ref('lists', { onDelete: 'set null', check: false, prefix: 'lst', description: 'The audience: a list of type contacts or leads whose contacts are enrolled at launch; null when none is set or the list was deleted' }),
    steps: json({ nullable: false, default: [], input: StepsInputSchema, output: StepsSchema, description: 'The ordered steps' }),
    schedule: json({ input: ScheduleInputSchema, output: ScheduleSchema, description: 'When steps may be sent' }),
    mailbox_ids: json({ nullable: false, default: [], input: MailboxIdsInput, output: MailboxIdsOutput, description: 'The mailboxes the e-mail steps are sent from' }),
    audience_count: int({ readOnly: true, nullable: false, default: 0, description: 'Contacts enrolled at launch (the audience minus suppressed contacts); 0 before launch', example: 180 }),
    launched_at: timestamp({ readOnly: true, description: 'When the campaign was launched, unix seconds; null before launch', example: 1767225600 }),
  },
  filters: {
    status: 'eq',
    list_id: { op: 'eq', description: 'Only campaigns aimed at this list' },
  },
  counter: 'campaigns',
  hooks: { beforeWrite, beforeDelete },
  lifecycle: {
    states: CAMPAIGN_STATUSES, initial: 'draft',
    description: 'Lifecycle state: created as `draft`, `active` once launched, `paused` and resumed by their operations; read-only',
    actions: {
      launch: {
        from: ['draft'], to: 'active', event: 'launched', stamps: ['launched_at'], guard: launch, body: LaunchBody, operationId: 'launchCampaign', errors: [400, 402],
        summary: 'Launch a drafted campaign', eventDescription: 'A campaign was launched and its audience enrolled',
        description: 'Runs the launch preflight (`GET /v1/campaigns/{id}/launch/preflight`) first: when a check fails, the launch is refused with 409, a `detail` naming the failing checks and `checks` holding them, and nothing changes; `{"force": true}` launches anyway, and warnings never block. Then stamps `launched_at` and enrolls the contacts of its audience list that are not suppressed (`audience_count` is the exact number enrolled). Costs one credit per enrolled contact, debited in the same transaction: with too few credits the launch is refused with 402 and nothing changes. No steps: 409; no audience list: 400, even when forced.',
      },
      pause: {
        from: ['active'], to: 'paused', event: 'paused',
        summary: 'Pause a campaign', eventDescription: 'An active campaign was paused', description: 'Pauses an active campaign.',
      },
      resume: {
        from: ['paused'], to: 'active', event: 'resumed', guard: resume,
        summary: 'Resume a campaign', eventDescription: 'A paused campaign was resumed', description: 'Resumes a paused campaign; one without steps is 409.',
      },
    },
  },
  routes: {
    docs: {
      list: { description: 'Lists campaigns, newest first, with an exact `total`; filter by `status` and `list_id`.' },
      create: { summary: 'Create a multichannel campaign', description: 'Creates a campaign as a `draft`. `list_id` (the audience) must be a list of type contacts or leads: an unknown list is 404 `List not found`, another type 400. Every step\'s channel must be one of `channels`; an unknown time zone or an empty sending window is 422.' },
      update: { description: 'Changes the fields given. Only draft or paused campaigns can be edited (otherwise 409), a launched campaign keeps its audience, and a paused campaign keeps at least one step. An empty body is 400 `No fields to update`.' },
      delete: { description: 'Deletes a campaign in any state, with its enrollments; reading it afterwards is 404.' },
    },
    errors: { create: [404], update: [409] },
  },
  ownedTables: ['campaign_enrollments'],
});
