// The consumers of the events every write records, one line each, told to the platform's fan-out
// (src/platform/write/fanout.ts) where the app, the worker and the CLI are built.
import type { EventConsumer, EventFollower } from '../platform/write.ts';
import { campaignFollower } from './campaigns/campaign-sequence.ts';
import { imapPollStarter } from './inbox/inbox.fanout.ts';
import { sequenceFollower } from './sequences/sequences.follower.ts';
import { webhookFanout } from './webhooks/webhooks.fanout.ts';

export const EVENT_CONSUMERS: ReadonlyArray<EventConsumer | EventFollower> = [
  webhookFanout,
  // A live e-mail connection with IMAP settings gets its first poll with the write that made it.
  imapPollStarter,
  // Replies, bounces, unsubscribes and completed tasks move the enrollments of sequences, in the same write.
  sequenceFollower,
  // A campaign follows its sequence's state, and gets back the credit of a message that failed.
  campaignFollower,
];
