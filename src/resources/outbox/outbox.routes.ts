// The outbox's own route beyond its kernel reads: in test mode, saying what happens to a message next.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { conflict, notFound } from '../../platform/errors.ts';
import { OUTCOMES, recordOutcome } from '../../platform/outbox/outcomes.ts';
import { outboxMessages } from '../../platform/outbox/outbox.resource.ts';
import { Data, errorResponses, Str, StringEnum } from '../../platform/schemas.ts';
import { presentOne } from '../../platform/resource/store.ts';
import type { Row } from '../../platform/resource/define.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { mutate } from '../../platform/write.ts';

const SimulateBody = Type.Object({
  outcome: StringEnum(OUTCOMES, { description: 'What happens: `delivered`, `bounced` (a hard bounce unless `hard` is false: the address is then suppressed), `opened`, `clicked` or `replied`', examples: ['bounced'] }),
  reason: Type.Optional(Str({ maxLength: 1000, description: 'The server\'s reply of a bounce', examples: ['550 5.1.1 No such user'] })),
  hard: Type.Optional(Type.Boolean({ description: 'For `bounced`: a bounce for good (the default), which suppresses the address', examples: [true] })),
  is_auto_reply: Type.Optional(Type.Boolean({ description: 'For `replied`: an automatic answer (out of office), which does not count as a reply', examples: [false] })),
  returns_at: Type.Optional(Type.Integer({ minimum: 0, maximum: 253_402_300_799, description: 'For an automatic reply: when it says its writer is back, unix seconds (a sequence pauses the enrollment until then rather than for a week)', examples: [1767225600] })),
}, { additionalProperties: false, title: 'OutboxSimulate' });

const SENT = new Set(['sent', 'delivered', 'bounced']);

export async function outboxRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/outbox/:id/simulate', {
    config: { testOnly: true, messages: { enum: { outcome: `Invalid outcome: must be one of ${OUTCOMES.join(', ')}` } } },
    schema: {
      tags: ['Outbox'], operationId: 'simulateOutboxMessage', summary: 'Simulate what happens to a message',
      description: 'Test keys only (a live key is 403: live outcomes come from the provider and the mailbox). Records an outcome of a sent message as if its recipient\'s server or the recipient had caused it, with its event (`message.delivered`, `message.bounced`, `message.opened`, `message.clicked`, `reply.received`): so an integration can be driven through every path without mailing anyone. An outcome already recorded changes nothing (200, the message as it is); a message never sent (`queued`, `failed`, `suppressed`) is 409.',
      params: outboxMessages.schemas.params, body: SimulateBody,
      response: { 200: Data(outboxMessages.schemas.record, 'The message with the outcome recorded'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => {
    const { outcome, reason, hard, is_auto_reply: isAutoReply, returns_at: returnsAt } = req.body;
    return mutate(req, reply, 200, async (w) => {
      const read = () => selectIn(w.tx, 'outbox_messages', w.scope).selectAll().where('id', '=', req.params.id).executeTakeFirst() as Promise<Row | undefined>;
      const row = await read();
      if (!row) throw notFound(outboxMessages.notFound);
      if (!SENT.has(row.status as string)) throw conflict(`Message ${row.id} is ${row.status}: only a sent message has outcomes`);
      await recordOutcome(w, row.id as string, outcome, { reason, hard, isAutoReply, returnsAt });
      return presentOne(outboxMessages, w.tx, w.scope, (await read())!);
    });
  });
}
