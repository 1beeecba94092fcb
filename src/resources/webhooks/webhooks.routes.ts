// The webhook routes beyond the kernel's (webhooks.resource.ts: CRUD and rotate-secret): the event
// types, an endpoint's deliveries, redelivery, replay and test events.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EVENT_TYPE_NAMES, EVENT_TYPES } from '../../platform/event-types.ts';
import { paginate } from '../../platform/pagination.ts';
import { Data, errorResponses, IdParams, ListOf } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import * as deliveries from './deliveries.store.ts';
import * as s from './webhooks.schemas.ts';
import * as store from './webhooks.store.ts';

const tags = ['Webhooks'];
const params = IdParams('whe', 'webhook endpoint');

export async function webhookRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.services.database.db;

  app.get('/webhooks/event-types', {
    schema: {
      tags, summary: 'List event types', description: 'Every event type the service emits, with when it is emitted. Generated from the code that emits events, so it is always complete.',
      response: { 200: Data(Type.Array(s.EventTypeSchema), 'The event types'), ...errorResponses() },
    },
  }, async () => ({ data: EVENT_TYPE_NAMES.map((type) => ({ type, description: EVENT_TYPES[type].description })) }));

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
}
