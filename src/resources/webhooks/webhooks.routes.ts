import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { badRequest } from '../../platform/errors.ts';
import { EVENT_TYPE_NAMES, EVENT_TYPES } from '../../platform/event-types.ts';
import { OutboundError } from '../../platform/outbound.ts';
import { paginate } from '../../platform/pagination.ts';
import { Data, DeletedSchema, errorResponses, IdParams, ListOf } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import * as deliveries from './deliveries.store.ts';
import * as s from './webhooks.schemas.ts';
import * as store from './webhooks.store.ts';

const tags = ['Webhooks'];
const params = IdParams('whe', 'webhook endpoint');

/** The SSRF guard at creation: a URL the service may not call is refused before it is stored. */
async function checkUrl(req: FastifyRequest, url: string | undefined): Promise<void> {
  if (url === undefined) return;
  try {
    await req.server.services.outbound.check(url);
  } catch (error) {
    if (error instanceof OutboundError) throw badRequest(`url: ${error.message}`, 'url');
    throw error;
  }
}

export async function webhookRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.services.database.db;

  app.get('/webhooks/event-types', {
    schema: {
      tags, summary: 'List event types', description: 'Every event type the service emits, with when it is emitted. Generated from the code that emits events, so it is always complete.',
      response: { 200: Data(Type.Array(s.EventTypeSchema), 'The event types'), ...errorResponses() },
    },
  }, async () => ({ data: EVENT_TYPE_NAMES.map((type) => ({ type, description: EVENT_TYPES[type].description })) }));

  app.post('/webhooks', {
    schema: {
      tags, summary: 'Create a webhook endpoint',
      description: 'Registers a URL to receive events, signed with the returned `secret` (shown only here). The URL must be `https://` or `http://` and may not point to a private, loopback or link-local address. At most 10 active endpoints per organization and mode (409 beyond).',
      body: s.EndpointCreateSchema, response: { 201: Data(s.EndpointWithSecretSchema, 'The created endpoint with its secret'), ...errorResponses(409) },
    },
  }, async (req, reply) => {
    await checkUrl(req, req.body.url);
    return mutate(req, reply, 201, (w) => store.createEndpoint(w, req.body));
  });

  app.get('/webhooks', {
    schema: {
      tags, summary: 'List webhook endpoints', description: 'Lists the endpoints, newest first; filter by `is_active`. Secrets are never listed.',
      querystring: s.EndpointQuerySchema, response: { 200: ListOf(s.EndpointSchema, 'A page of endpoints'), ...errorResponses() },
    },
  }, (req) => paginate(req, req.query, {
    fetch: (page) => store.listEndpoints(db(), req.scope, req.query, page),
    count: () => store.countEndpoints(db(), req.scope, req.query),
    keyOf: (row) => row.id,
    map: (rows) => rows.map(store.toEndpoint),
  }));

  app.get('/webhooks/:id', {
    schema: { tags, summary: 'Get a webhook endpoint', description: 'Reads one endpoint (without its secret); 404 `Webhook endpoint not found` if it does not exist.', params, response: { 200: Data(s.EndpointSchema, 'The endpoint'), ...errorResponses(404) } },
  }, async (req) => ({ data: store.toEndpoint(await store.findEndpoint(db(), req.scope, req.params.id)) }));

  app.patch('/webhooks/:id', {
    schema: {
      tags, summary: 'Update a webhook endpoint', description: 'Changes the URL, event types, description or `is_active`; setting `is_active` to true re-enables an endpoint the service disabled. An empty body is 400 `No fields to update`.',
      params, body: s.EndpointUpdateSchema, response: { 200: Data(s.EndpointSchema, 'The updated endpoint'), ...errorResponses(404, 409) },
    },
  }, async (req, reply) => {
    if (Object.keys(req.body).length === 0) throw badRequest('No fields to update');
    await checkUrl(req, req.body.url);
    return mutate(req, reply, 200, (w) => store.updateEndpoint(w, req.params.id, req.body));
  });

  app.delete('/webhooks/:id', {
    schema: { tags, summary: 'Delete a webhook endpoint', description: 'Deletes the endpoint and its delivery records; deliveries still queued are dropped.', params, response: { 200: Data(DeletedSchema('whe', 'webhook endpoint'), 'The endpoint was deleted'), ...errorResponses(404) } },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.deleteEndpoint(w, req.params.id)));

  app.get('/webhooks/:id/deliveries', {
    schema: {
      tags, operationId: 'listWebhookDeliveries', summary: 'List deliveries', description: 'The deliveries made to the endpoint, newest event first, each with its attempts (time, status code, duration, error and the first KiB of the answer); filter by `status` and `event_type`. A delivery appears once its first attempt is made.',
      params, querystring: s.DeliveryQuerySchema, response: { 200: ListOf(s.DeliverySchema, 'A page of deliveries'), ...errorResponses(404) },
    },
  }, async (req) => {
    const endpoint = await store.findEndpoint(db(), req.scope, req.params.id);
    return paginate(req, req.query, {
      fetch: (page) => deliveries.listDeliveries(db(), req.scope, endpoint.id, req.query, page),
      count: () => deliveries.countDeliveries(db(), req.scope, endpoint.id, req.query),
      keyOf: (row) => row.id,
      map: (rows) => rows.map(deliveries.toDelivery),
    });
  });

  app.post('/webhooks/:id/deliveries/:delivery_id/redeliver', {
    schema: {
      tags, operationId: 'redeliverWebhookDelivery', summary: 'Redeliver', description: 'Sends the event of a delivery again, at once, as a new delivery with the same `webhook-id` (the event id). The endpoint must be active (409 otherwise).',
      params: s.DeliveryParamsSchema, response: { 201: Data(s.QueuedSchema, 'The delivery was queued'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.redeliver(w, req.params.id, req.params.delivery_id)));

  app.post('/webhooks/:id/replay', {
    schema: {
      tags, summary: 'Replay past events',
      description: 'Sends again, from the event log, every event created at or after `created_after` that the endpoint subscribes to (narrowed by `event_types` if given), oldest first, at most 10,000 per call. Nothing is lost after the retry window while the event log keeps the events. The endpoint must be active (409 otherwise).',
      params, body: s.ReplaySchema, response: { 201: Data(s.ReplayedSchema, 'The events were queued'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.replay(w, req.params.id, req.body)));

  app.post('/webhooks/:id/test', {
    schema: {
      tags, summary: 'Send a test event', description: 'Records a `webhook.test` event and sends it to this endpoint only. The endpoint must be active (409 otherwise).',
      params, response: { 201: Data(s.QueuedSchema, 'The test delivery was queued'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.sendTest(w, req.params.id)));

  app.post('/webhooks/:id/rotate-secret', {
    schema: {
      tags, summary: 'Rotate the signing secret', description: 'Returns a new secret (shown only here). For the next 24 hours deliveries carry signatures made with both the new and the previous secret, so receivers can switch without missing an event.',
      params, response: { 201: Data(s.EndpointWithSecretSchema, 'The endpoint with its new secret'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.rotateSecret(w, req.params.id)));
}
