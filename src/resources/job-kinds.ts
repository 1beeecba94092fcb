// The background job kinds and recurring schedules, one line each, like the route groups of
// registry.ts. Adding a kind: define it with `defineJobKind` in the group's `<group>.jobs.ts`, list it
// here, and enqueue it from a write with `w.enqueue(kind, payload)`. Adding a schedule: one line below.
import type { JobKind } from '../platform/jobs/kinds.ts';
import { pruneJobs, purgeIdempotencyKeys } from '../platform/jobs/maintenance.ts';
import type { Schedule } from '../platform/jobs/schedules.ts';
import { workStates } from '../platform/resource/lifecycle.ts';
import { writeStoredJson } from '../platform/resource/stored-json.ts';
import { exportJob } from './exports/exports.jobs.ts';
import { importJob } from './imports/imports.jobs.ts';
import { imapPoll, imapPollSweep, wakeThread } from './inbox/inbox.jobs.ts';
import { outboxSend } from './outbox/outbox.jobs.ts';
import { quoteExpiry } from './quotes/quotes.jobs.ts';
import { sequenceSweep } from './sequences/scheduler.ts';
import { resources } from './registry.ts';
import { pruneWebhookDeliveries, webhookDelivery } from './webhooks/webhooks.jobs.ts';
import { VOICE_JOBS } from './voice/voice.jobs.ts';

const storedJson = writeStoredJson(resources);

export const JOB_KINDS: readonly JobKind<never>[] = [
  webhookDelivery,
  outboxSend,
  purgeIdempotencyKeys,
  pruneJobs,
  pruneWebhookDeliveries,
  quoteExpiry,
  importJob,
  exportJob,
  imapPoll,
  imapPollSweep,
  wakeThread,
  sequenceSweep,
  storedJson,
  ...VOICE_JOBS,
  // Transitional states of declared lifecycles: each record's work, then its next state.
  workStates(resources),
];

export const SCHEDULES: readonly Schedule[] = [
  { cron: '*/10 * * * *', kind: purgeIdempotencyKeys },
  { cron: '17 * * * *', kind: pruneJobs },
  { cron: '23 3 * * *', kind: pruneWebhookDeliveries },
  // Pages answer records whose stored text a change cleared from their rows until this writes it again.
  { cron: '* * * * *', kind: storedJson },
  // Starts the IMAP polls of connections that have none waiting (a chain that broke).
  { cron: '*/5 * * * *', kind: imapPollSweep },
];
