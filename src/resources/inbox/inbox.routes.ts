// The inbox's operations beyond the kernel's list and delete (inbox.resource.ts) and the moves of its
// lifecycle (inbox.lifecycle.ts): a thread with its messages, assignment, tags, a reply sent through
// the outbox, and the draft (which needs a language-model provider the service does not have yet).
// The inbound side of connections (their inbound URL, a poll now, the poll's state) is here too.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../platform/errors.ts';
import { readRecord } from '../../platform/resource/store.ts';
import { Data, errorResponses } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import { checkAssignee } from '../members/assignee.ts';
import { inbox } from './inbox.resource.ts';
import * as s from './inbox.schemas.ts';
import { normalizeTags } from './inbox.store.ts';
import { setFields } from './thread-writes.ts';
import { threadMessages } from './messages.ts';
import { replyInThread } from './reply.ts';
import { connectionInboundRoutes } from './connections-inbound.routes.ts';

const tags = [inbox.tag];
const params = inbox.schemas.params;

export async function inboxRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.services;

  app.get('/inbox/:id', {
    schema: {
      tags, operationId: 'getThread', summary: 'Get a thread with its messages',
      description: `The thread and its \`messages\`, oldest first (the newest 500 of a longer one), both directions: inbound ones as received, with their HTML sanitized, and the replies sent from the thread. 404 \`${inbox.notFound}\`.`,
      params, response: { 200: Data(s.ThreadWithMessages, 'The thread'), ...errorResponses(404) },
    },
  }, async (req) => {
    const thread = await readRecord(inbox, database.db, database.dialect, req.scope, req.params.id);
    return { data: { ...thread, messages: await threadMessages(database.db, req.scope, thread.id) } };
  });

  app.post('/inbox/:id/assign', {
    schema: {
      tags, operationId: 'assignThread', summary: 'Assign a thread',
      description: 'Sets who answers the thread: a member id (`mem_…`, which must name a member of the organization, else 404 `Member not found`) or text of your own; null unassigns it. Records `thread.updated` with the earlier `assignee`.',
      params, body: s.AssignBody, response: { 200: Data(inbox.schemas.record, 'The thread'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 200, async (w) => {
    await checkAssignee(w.tx, w.scope, req.body.assignee);
    return setFields(w, req.params.id, { assignee: req.body.assignee });
  }));

  app.post('/inbox/:id/tag', {
    schema: {
      tags, operationId: 'tagThread', summary: 'Tag a thread',
      description: 'Replaces the thread\'s tags with those given (trimmed, each once; an empty list clears them). Records `thread.updated` with the earlier `tags`.',
      params, body: s.TagBody, response: { 200: Data(inbox.schemas.record, 'The thread'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => setFields(w, req.params.id, { tags: normalizeTags(req.body.tags) })));

  app.post('/inbox/:id/reply', {
    schema: {
      tags, operationId: 'replyToThread', summary: 'Reply in a thread',
      description: 'Sends `body` (plain text; `html` too if given) to the other side of the thread through the outbox, threaded: `In-Reply-To` the latest message from them, `References` the thread\'s messages, the subject `Re:` the thread\'s. It goes through `mailbox_id` (else the thread\'s mailbox; an unknown one is 404 `Mailbox not found`), from `from`, else the mailbox\'s address, else the address their latest message was sent to (400 when none is known). The reply is added to the thread (`direction: outbound`, `outbox_id` naming the outbox message). In test mode nothing leaves the service: the outbox records it.',
      params, body: s.ReplyBody, response: { 201: Data(s.ReplySchema, 'The reply, as a message of the thread'), ...errorResponses(400, 404) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => replyInThread(w, req.params.id, req.body)));

  app.get('/inbox/:id/draft', {
    schema: {
      tags, operationId: 'draftThreadReply', summary: 'Draft a reply',
      description: 'Would draft a reply to the thread with a language model. The service has no language-model provider yet, so this is always 503 `provider_not_configured` for a thread that exists (404 otherwise): write the reply and send it with `POST /v1/inbox/{id}/reply`.',
      params, response: { 200: Data(s.DraftSchema, 'A drafted reply'), ...errorResponses(404, 503) },
    },
  }, async (req) => {
    await readRecord(inbox, database.db, database.dialect, req.scope, req.params.id);
    throw new AppError('provider_not_configured', 'No language-model provider is configured, and this service offers none yet (there is no language-model connection kind or setting): drafting a reply needs one. Write the reply and send it with POST /v1/inbox/{id}/reply');
  });

  await connectionInboundRoutes(fastify);
}
