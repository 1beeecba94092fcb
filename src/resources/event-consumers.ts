// The consumers of the events every write records, one line each, told to the platform's fan-out
// (src/platform/write/fanout.ts) where the app, the worker and the CLI are built.
import type { EventConsumer } from '../platform/write.ts';
import { imapPollStarter } from './inbox/inbox.fanout.ts';
import { webhookFanout } from './webhooks/webhooks.fanout.ts';

export const EVENT_CONSUMERS: readonly EventConsumer[] = [
  webhookFanout,
  // A live e-mail connection with IMAP settings gets its first poll with the write that made it.
  imapPollStarter,
];
