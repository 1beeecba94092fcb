// Twilio's callbacks, with no API key: the messaging webhook of a Twilio connection's number (the
// texts it receives, recorded in the inbox by receive-sms.ts), and the status callbacks of the texts
// sent through the connection. The URL names the tenant, the connection and the text (or
// `inbound`), signed by the service (callback-tokens.ts), and each callback is signed by Twilio with
// the connection's Auth Token (`X-Twilio-Signature`; 401 otherwise). Status is forward only: `delivered` records the text delivered,
// `undelivered` and `failed` bounced (a number that does not exist or cannot take texts is
// suppressed); the states before (`queued`, `sending`, `sent`) change nothing, and a callback late,
// repeated or out of order never moves a text back (outcomes.ts records each outcome once).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../../platform/errors.ts';
import { recordOutcome } from '../../platform/outbox/outcomes.ts';
import { CALLBACK_NOT_FOUND, CallbackParams, twilioCallbacks } from '../../platform/providers/twilio-callbacks.ts';
import { callbackPath } from '../../platform/public/callback-tokens.ts';
import { receiveSms } from '../inbox/receive-sms.ts';
import { publicRoutes } from '../../platform/public/surface.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { Data, errorResponses } from '../../platform/schemas.ts';
import type { Scope } from '../../platform/scope.ts';

/** Twilio's error codes that say a number will never take a text: it is suppressed. */
const NEVER_DELIVERABLE = new Set(['21211', '21614', '30005', '30006']);

const TextParams = CallbackParams('The text (its `message_id`)');

const StatusBody = Type.Object({
  MessageSid: Type.String({ maxLength: 64, description: 'Twilio\'s id of the text', examples: ['SM0123456789abcdef0123456789abcdef'] }),
  MessageStatus: Type.String({ maxLength: 32, description: '`queued`, `sending`, `sent`, `delivered`, `undelivered` or `failed`', examples: ['delivered'] }),
  ErrorCode: Type.Optional(Type.String({ maxLength: 16, description: 'Why it was not delivered', examples: ['30005'] })),
}, { additionalProperties: Type.String({ maxLength: 2000 }) });

const Recorded = Type.Object({
  status: Type.Union([Type.Literal('recorded'), Type.Literal('unchanged')], { description: '`recorded`, or `unchanged` for a state before the outcome, or an outcome recorded before' }),
}, { additionalProperties: false });

/** Where Twilio posts the texts a connection's number receives (its messaging webhook): signed, as every callback. */
export const inboundSmsPath = (secret: string, scope: Scope, connectionId: string) =>
  callbackPath(secret, '/public/sms/twilio', [scope.orgId, scope.mode, connectionId, INBOUND]);
const INBOUND = 'inbound';

const InboundBody = Type.Object({
  MessageSid: Type.String({ minLength: 1, maxLength: 64, description: 'Twilio\'s id of the text', examples: ['SM0123456789abcdef0123456789abcdef'] }),
  From: Type.String({ minLength: 1, maxLength: 64, description: 'The sender\'s number', examples: ['+442079460123'] }),
  To: Type.String({ minLength: 1, maxLength: 64, description: 'The connection\'s number', examples: ['+14155550100'] }),
  Body: Type.String({ maxLength: 1600, description: 'The text', examples: ['Sounds good, call me tomorrow'] }),
}, { additionalProperties: Type.String({ maxLength: 2000 }) });

/** What Twilio is answered for an inbound text: TwiML that sends no reply. */
const NO_REPLY = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

export async function smsCallbackRoutes(fastify: FastifyInstance): Promise<void> {
  const { writes } = fastify.services;
  const { targetOf, signature } = twilioCallbacks(fastify, 'sms');
  const routes = publicRoutes(fastify);

  routes.post('/public/sms/twilio/:org_id/:mode/:connection_id/inbound/:signature', {
    token: 'signature',
    signature: signature(INBOUND),
    schema: {
      tags: ['SMS callbacks'], security: [], params: Type.Omit(TextParams, ['reference']), body: InboundBody, operationId: 'receiveTwilioText', summary: 'Receive a text from Twilio',
      description: 'The messaging webhook of a Twilio connection\'s number (`GET /v1/connections/{id}/sms-inbound-url` answers it): Twilio posts each text the number receives, form-encoded and signed with the connection\'s Auth Token (`X-Twilio-Signature`; 401 otherwise). The text lands in the inbox as `channel: sms`, in the sender\'s thread, once per `MessageSid`; one answering a text the connection sent marks that text replied (`reply.received`, which finishes its sequence enrollment), and an opt-out keyword alone (STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, OPTOUT, REVOKE, any case) suppresses the number on texts instead. Answered with empty TwiML: no reply is sent.',
      response: { 200: { description: 'Recorded; TwiML that sends no reply', content: { 'text/xml': { schema: Type.String() } } }, ...errorResponses(401, 404) },
    },
  }, async (request, reply) => {
    const target = await targetOf(request, INBOUND);
    const { MessageSid: providerId, From: from, To: to, Body: body } = request.body;
    await writes.run(target.scope, (w) => receiveSms(w, { providerId, from, to, body, connectionId: target.connectionId }));
    fastify.services.notify(target.scope);
    return reply.type('text/xml').send(NO_REPLY);
  });

  routes.post('/public/sms/twilio/:org_id/:mode/:connection_id/:reference/:signature', {
    token: 'signature',
    signature: signature(),
    schema: {
      tags: ['SMS callbacks'], security: [], params: TextParams, body: StatusBody, operationId: 'receiveTwilioStatus', summary: 'Receive a text\'s status from Twilio',
      description: 'Where Twilio posts the status of a text sent through a Twilio connection (its `StatusCallback`, given with each text), form-encoded and signed with the connection\'s Auth Token (`X-Twilio-Signature`; 401 otherwise). `delivered` records the text delivered (`message.delivered`), `undelivered` and `failed` bounced (`message.bounced`; error 21211, 21614, 30005 or 30006 suppresses the number); earlier states change nothing, and a late, repeated or out-of-order callback never moves a text back. 404 for a URL this service did not make or whose connection is gone.',
      response: { 200: Data(Recorded, 'What was recorded'), ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const target = await targetOf(request);
    const { MessageStatus: state, ErrorCode: code } = request.body;
    if (state !== 'delivered' && state !== 'undelivered' && state !== 'failed') return { data: { status: 'unchanged' as const } };
    const recorded = await writes.run(target.scope, async (w) => {
      const message = await selectIn(w.tx, 'outbox_messages', w.scope).select('id').where('message_id', '=', target.reference).where('connection_id', '=', target.connectionId).executeTakeFirst();
      if (!message) throw notFound(CALLBACK_NOT_FOUND);
      if (state === 'delivered') return recordOutcome(w, message.id, 'delivered');
      const reason = `Twilio: ${state}${code ? ` (error ${code})` : ''}`;
      return recordOutcome(w, message.id, 'bounced', { reason, hard: code !== undefined && NEVER_DELIVERABLE.has(code) });
    });
    fastify.services.notify(target.scope);
    return { data: { status: recorded ? 'recorded' as const : 'unchanged' as const } };
  });
}
