// The write path of a route: the request's write, its answer and the response stored for its
// Idempotency-Key, in one transaction of the group commit (WriteQueue).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Work } from './commit.ts';
import type { Ahead } from './read-ahead.ts';

/**
 * The write path of a route: runs `work`, answers `status` with `{"data": result}`, and stores that
 * exact response for the request's Idempotency-Key in the same transaction.
 */
export async function mutate<T>(request: FastifyRequest, reply: FastifyReply, status: number, work: Work<T>, ahead?: Ahead): Promise<void> {
  return respond(request, reply, async (w) => ({ status, payload: { data: await work(w) } }), ahead);
}

/** `mutate` for a write whose status and envelope depend on what it did (an assert: 201 or 200). */
export async function respond(request: FastifyRequest, reply: FastifyReply, work: Work<{ status: number; payload: object }>, ahead?: Ahead): Promise<void> {
  const { writes, notify } = request.server.services;
  let body = '';
  const actor = request.apiKey ? { keyId: request.apiKey.id, orgId: request.apiKey.orgId } : null;
  // Serialized by the route's response schema, like every read: a write answers exactly the fields
  // a GET of the same record answers.
  await writes.run(request.scope, async (w) => {
    const { status, payload } = await work(w);
    reply.code(status);
    body = reply.serialize(payload) as string;
    if (request.idempotency) w.respond(request.idempotency, status, body);
    return payload;
  }, actor, ahead);
  if (request.idempotency) {
    request.idempotency.stored = true;
    request.server.services.leases.release(request.idempotency);
  }
  notify(request.scope);
  reply.type('application/json; charset=utf-8').send(body);
}
