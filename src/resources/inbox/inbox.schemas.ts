// Request and response shapes of the inbox's own routes.
import { Type } from 'typebox';
import { Nullable, Str } from '../../platform/schemas.ts';
import { inbox } from './inbox.resource.ts';
import { MessageSchema } from './messages.ts';

export const ThreadWithMessages = Type.Object({
  ...(inbox.schemas.record as unknown as { properties: Record<string, never> }).properties,
  messages: Type.Array(MessageSchema, { description: 'The messages, oldest first (the newest 500 of a longer thread)' }),
}, { additionalProperties: false });

export const AssignBody = Type.Object({
  assignee: Nullable(Str({ description: 'A member id (`mem_…`) or text of your own; null unassigns', minLength: 1, maxLength: 200, examples: ['mem_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
}, { additionalProperties: false });

export const TagBody = Type.Object({
  tags: Type.Array(Str({ description: 'A tag', minLength: 1, maxLength: 100, examples: ['pricing'] }), { maxItems: 50, description: 'The thread\'s tags from now on', examples: [['pricing', 'urgent']] }),
}, { additionalProperties: false });

export const ReplyBody = Type.Object({
  body: Str({ description: 'The reply, plain text', minLength: 1, maxLength: 100_000, examples: ['Tuesday at 10 works for us. Talk then!'] }),
  html: Type.Optional(Str({ description: 'The reply as HTML too (sent as the message\'s HTML part)', maxLength: 200_000, examples: ['<p>Tuesday at 10 works for us.</p>'] })),
  from: Type.Optional(Str({ description: 'The address to send from; else the mailbox\'s, else the address their latest message was sent to', maxLength: 320, format: 'email', examples: ['sales@acme.example'] })),
  mailbox_id: Type.Optional(Str({ description: 'The mailbox to send through (its address is the sender unless `from` says otherwise; its limits hold); the thread\'s mailbox when omitted. An unknown one is 404 `Mailbox not found`', maxLength: 64, examples: ['mbx_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
}, { additionalProperties: false });

export const ReplySchema = MessageSchema;

export const DraftSchema = Type.Object({
  body: Type.String({ description: 'The drafted reply, plain text', examples: ['Thanks, Tuesday works.'] }),
}, { additionalProperties: false });
