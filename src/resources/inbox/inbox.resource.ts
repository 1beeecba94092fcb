// The inbox: threads of conversation with people outside, made by the mail that comes in (an IMAP
// mailbox polled, or a provider posting raw messages, receive.ts) and by the replies sent from them.
// Threads are never created through the API: the kernel gives their list, read and delete; their
// messages, assignment, tags and replies are the group's own routes (inbox.routes.ts).
import { sql, type SqlBool } from 'kysely';
import { defineResource } from '../../platform/resource/define.ts';
import { enumOf, int, ref, tags, text, timestamp } from '../../platform/resource/fields.ts';
import { Str } from '../../platform/schemas.ts';
import { THREAD_LIFECYCLE } from './inbox.lifecycle.ts';
import { beforeDelete } from './inbox.store.ts';

const readOnly = (description: string, example: unknown) => ({ readOnly: true, description: `${description}; read-only`, example });

/** Subject or counterpart address contains the text, case-insensitively. */
const subjectOrFrom = (table: string, value: string) => {
  const pattern = `%${value.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<SqlBool>`(lower(coalesce(${sql.ref(`${table}.subject`)}, '')) like ${pattern} escape '\\' or coalesce(${sql.ref(`${table}.from_address`)}, '') like ${pattern} escape '\\')`;
};

export const inbox = defineResource({
  name: 'thread', plural: 'inbox', prefix: 'thr', table: 'inbox_threads', notFound: 'Thread not found',
  tag: 'Inbox', tagDescription: 'Conversations of inbound mail (polled over IMAP or posted by a provider) and the replies sent from them',
  fields: {
    channel: enumOf(['email', 'sms'] as const, { nullable: false, default: 'email', ...readOnly('The channel of the conversation: `email`, or `sms` (texts a Twilio connection\'s number received)', 'email') }),
    subject: text({ max: 998, ...readOnly('The subject of the first message', 'Re: Pilot next week') }),
    from_address: text({ max: 320, ...readOnly('The address of the other side (the sender of the first inbound message), lower-case', 'ada@example.com') }),
    snoozed_until: timestamp(readOnly('While snoozed, when the thread comes back to `open`, unix seconds', 1767225600)),
    assignee: text({ max: 200, ...readOnly('Who answers the thread: a member id (`mem_…`) or text of your own; set by `POST /v1/inbox/{id}/assign`', 'mem_01JD8X4M6R2T9Q3V5W7Y8Z0A1B') }),
    tags: tags({ description: 'Labels of the thread; set by `POST /v1/inbox/{id}/tag`; read-only', example: ['pricing'], readOnly: true }),
    contact_id: ref('contacts', { onDelete: 'set null', prefix: 'con', readOnly: true, description: 'The contact the other side is (by e-mail address, or the contact of the message it answers); read-only' }),
    sequence_id: text({ max: 64, ...readOnly('The sequence whose message the thread answers', 'seq_01JD8X4M6R2T9Q3V5W7Y8Z0A1B') }),
    mailbox_id: text({ max: 64, ...readOnly('The mailbox the conversation is with', 'mbx_01JD8X4M6R2T9Q3V5W7Y8Z0A1B') }),
    connection_id: text({ max: 64, ...readOnly('The e-mail connection the first message came through', 'conn_01JD8X4M6R2T9Q3V5W7Y8Z0A1B') }),
    last_message_at: timestamp(readOnly('When the latest message was received or sent, unix seconds', 1767225600)),
    message_count: int({ nullable: false, default: 0, ...readOnly('Messages in the thread, both directions, automatic replies included', 3) }),
  },
  filters: {
    channel: { op: 'eq', description: 'Only threads of this channel' },
    status: { op: 'eq', description: 'Only threads in this state' },
    assignee: { op: 'eq', description: 'Only threads of this assignee, exactly' },
    tag: { field: 'tags', op: 'has', description: 'Only threads with this tag' },
    contact_id: { op: 'eq', description: 'Only threads with this contact' },
    sequence_id: { op: 'eq', description: 'Only threads answering a message of this sequence' },
    q: { op: 'where', where: subjectOrFrom, schema: Str({ description: 'Only threads whose subject or other side\'s address contains this text, case-insensitively', maxLength: 200, examples: ['pilot'] }) },
  },
  counter: 'inbox_threads',
  // A page joins the threads' stored answers; the writes of receive.ts and reply.ts write them too.
  storedJson: true,
  ownedTables: ['inbox_messages'],
  hooks: { beforeDelete },
  lifecycle: THREAD_LIFECYCLE,
  eventDocs: {
    created: 'A message that belongs to no thread yet started one; the object is the thread',
    updated: 'A thread was assigned or tagged, or received or sent a message; `previous_attributes` holds the earlier values',
    deleted: 'A thread was deleted with its messages; the object is the thread as it was',
  },
  routes: {
    omit: ['create', 'update', 'get'],
    docs: {
      list: { summary: 'List inbox threads', description: 'Lists threads, newest first, with an exact `total`. Filters combine: `channel`, `status`, `assignee`, `tag`, `contact_id`, `sequence_id`, `q` (subject or the other side\'s address contains, case-insensitive).' },
      delete: { summary: 'Delete a thread', description: 'Deletes a thread with its messages; reading it afterwards is 404. A message of it that comes in again starts a new thread.' },
    },
  },
});
