// Twilio's status callbacks of the calls placed through a Twilio telephony connection, with no API
// key: the URL names the tenant, the connection and the call, signed by the service, and each
// callback is signed by Twilio with the connection's Auth Token (`X-Twilio-Signature`; 401
// otherwise). The state moves forward only (call-updates.ts): a late, repeated or out-of-order
// callback is answered `unchanged`.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../../platform/errors.ts';
import { answeredByOf, callStatusOf } from '../../platform/providers/telephony/twilio.ts';
import { CALLBACK_NOT_FOUND, CallbackParams, twilioCallbacks } from '../../platform/providers/twilio-callbacks.ts';
import { publicRoutes } from '../../platform/public/surface.ts';
import { Data, errorResponses } from '../../platform/schemas.ts';
import { callForUpdate, recordCallUpdate } from './call-updates.ts';

const StatusBody = Type.Object({
  CallSid: Type.String({ maxLength: 64, description: 'Twilio\'s id of the call', examples: ['CA0123456789abcdef0123456789abcdef'] }),
  CallStatus: Type.String({ maxLength: 32, description: '`queued`, `initiated`, `ringing`, `in-progress`, `completed`, `busy`, `no-answer`, `failed` or `canceled`', examples: ['completed'] }),
  AnsweredBy: Type.Optional(Type.String({ maxLength: 32, description: '`human`, `machine_start`, `machine_end_beep`, `fax`, `unknown`…', examples: ['human'] })),
  CallDuration: Type.Optional(Type.String({ maxLength: 16, pattern: '^[0-9]*$', description: 'Seconds talked, with the final state', examples: ['94'] })),
  ErrorCode: Type.Optional(Type.String({ maxLength: 16, description: 'Why it failed', examples: ['31005'] })),
}, { additionalProperties: Type.String({ maxLength: 2000 }) });

const Recorded = Type.Object({
  status: Type.Union([Type.Literal('recorded'), Type.Literal('unchanged')], { description: '`recorded`, or `unchanged` for a state the call is past (a late, repeated or out-of-order callback)' }),
}, { additionalProperties: false });

export async function voiceCallbackRoutes(fastify: FastifyInstance): Promise<void> {
  const { writes } = fastify.services;
  const { targetOf, signature } = twilioCallbacks(fastify, 'telephony');
  publicRoutes(fastify).post('/public/voice/twilio/:org_id/:mode/:connection_id/:reference/:signature', {
    token: 'signature',
    signature: signature(),
    schema: {
      tags: ['Voice callbacks'], security: [], params: CallbackParams('The call (its `id`)'), body: StatusBody, operationId: 'receiveTwilioCallStatus', summary: 'Receive a call\'s status from Twilio',
      description: 'Where Twilio posts the progress of a call placed through a Twilio telephony connection (its `StatusCallback`, given with each call), form-encoded and signed with the connection\'s Auth Token (`X-Twilio-Signature`; 401 otherwise). The call moves forward only: `ringing`, `in-progress` (answered: connected to the agent unless a machine answered, `AnsweredBy`), then its final state with `CallDuration`; a callback for a state the call is past changes nothing (`unchanged`). 404 for a URL this service did not make or whose connection is gone.',
      response: { 200: Data(Recorded, 'What was recorded'), ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const target = await targetOf(request);
    const { CallStatus: state, AnsweredBy: by, CallDuration: duration, ErrorCode: code } = request.body;
    const status = callStatusOf(state);
    const recorded = await writes.run(target.scope, async (w) => {
      const row = await callForUpdate(w, target.reference);
      if (!row || row.connection_id !== target.connectionId) throw notFound(CALLBACK_NOT_FOUND);
      if (!status) return false;
      return recordCallUpdate(w, row, {
        status, answeredBy: answeredByOf(by), ...(duration ? { duration: Number(duration) } : {}), ...(code ? { error: `Twilio error ${code}` } : {}),
      });
    });
    fastify.services.notify(target.scope);
    return { data: { status: recorded ? 'recorded' as const : 'unchanged' as const } };
  });
}
