import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { paginate } from '../../platform/pagination.ts';
import { errorResponses, ListOf } from '../../platform/schemas.ts';
import * as s from './events.schemas.ts';
import * as store from './events.store.ts';
import { streamEvents, wantsStream } from './events.stream.ts';

const tags = ['Events'];

const description = [
  'Every write records its events in the same transaction as the change. Without `Accept: text/event-stream` this lists them, newest first, with an exact `total`; filters `type` (exact) and `created_after` (unix seconds).',
  '',
  'With `Accept: text/event-stream` the same endpoint streams new events live as Server-Sent Events (`text/event-stream`): each event is sent as `id: <event id>`, `event: <type>` and `data: <the event as JSON>`, and a `: ping` comment line is sent periodically to keep the connection open.',
  'The stream starts with events committed after the connection opens; with a `Last-Event-ID` header (or `last_event_id` query parameter) naming an event of this organization and mode, it first replays every later event in order, then continues live. An unknown `Last-Event-ID` is 400 before the stream starts.',
  '`type` narrows the stream as well. The stream ends cleanly when the server shuts down; reconnect with `Last-Event-ID` to resume without missing an event. Only the caller\'s organization and mode are ever shown.',
].join('\n');

export async function eventRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = app.services.database.db;

  app.get('/events', {
    schema: {
      tags, operationId: 'listEvents', summary: 'List or stream events', description,
      querystring: s.EventQuerySchema, headers: s.EventHeadersSchema,
      // The list is JSON; the same 200 is a live stream with `Accept: text/event-stream`.
      produces: ['application/json', 'text/event-stream'],
      response: { 200: ListOf(s.EventSchema, 'A page of events (application/json); a live stream with `Accept: text/event-stream`'), ...errorResponses() },
    },
  }, async (req, reply) => {
    if (wantsStream(req)) {
      const afterSeq = await store.resumePoint(db, req.scope, req.headers['last-event-id'] || req.query.last_event_id);
      return streamEvents(req, reply, { afterSeq, type: req.query.type });
    }
    return paginate(req, req.query, {
      fetch: (page) => store.listEvents(db, req.scope, req.query, page),
      count: () => store.countEvents(db, req.scope, req.query),
      keyOf: (row) => Number(row.seq),
      map: (rows) => rows.map(store.toEvent),
    });
  });
}
