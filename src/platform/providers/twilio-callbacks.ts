// The tenant, connection and reference a Twilio callback is about, from its URL (callback-tokens.ts:
// signed by the service, 404 otherwise) and the connection it names (of the kind the route takes,
// with provider `twilio`: 404 otherwise), opened once a request; and the check of Twilio's own
// signature (`X-Twilio-Signature`, keyed by the connection's Auth Token) the public routes run
// before the handler. Texts' and calls' callbacks share it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../errors.ts';
import { isCallbackOf } from '../public/callback-tokens.ts';
import { twilioSignature } from '../public/signatures.ts';
import type { Scope } from '../scope.ts';
import { openConnection } from './connections.ts';

export const CALLBACK_NOT_FOUND = 'Callback URL not found';

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description });

/** The parameters of a callback URL: tenant, connection, what it is about, and the service's signature. */
export const CallbackParams = (reference: string) => Type.Object({
  org_id: Id('The organization'), mode: Type.Union([Type.Literal('live'), Type.Literal('test')], { description: 'The mode' }),
  connection_id: Id('The Twilio connection'), reference: Id(reference), signature: Id('The service\'s signature of the parts before it'),
});

export interface CallbackTarget { scope: Scope; connectionId: string; reference: string; authToken: string }
type Params = { org_id: string; mode: 'live' | 'test'; connection_id: string; reference?: string; signature: string };

/** `fixed` names the reference of a route whose URL has none of its own (a number's inbound webhook). */
export function twilioCallbacks(fastify: FastifyInstance, kind: string) {
  const { database, secret } = fastify.services;
  const targets = new WeakMap<object, Promise<CallbackTarget>>();
  async function open(p: Params, fixed?: string): Promise<CallbackTarget> {
    const reference = p.reference ?? fixed ?? '';
    if (!isCallbackOf(secret, [p.org_id, p.mode, p.connection_id, reference], p.signature)) throw notFound(CALLBACK_NOT_FOUND);
    const scope: Scope = { orgId: p.org_id, mode: p.mode };
    const connection = await openConnection(database.db, scope, secret, p.connection_id);
    const authToken = connection?.kind === kind && connection.provider === 'twilio' ? (connection.credentials as { auth_token?: string }).auth_token : undefined;
    if (!authToken) throw notFound(CALLBACK_NOT_FOUND);
    return { scope, connectionId: p.connection_id, reference, authToken };
  }
  /** The request's target, opened once: for the signature's check, then for the handler. */
  const targetOf = (request: FastifyRequest, fixed?: string) => {
    let target = targets.get(request);
    if (!target) targets.set(request, target = open(request.params as Params, fixed));
    return target;
  };
  const signature = (fixed?: string) => ({ scheme: twilioSignature, secrets: async (request: FastifyRequest) => [(await targetOf(request, fixed)).authToken] });
  return { targetOf, signature };
}
