import { Type, type Static } from 'typebox';
import { eventTypeSchema } from '../../platform/event-types.ts';
import { ActorSchema, Nullable, PageQuery, Str, Timestamp } from '../../platform/schemas.ts';

const EVENT_ID_EXAMPLE = 'evt_01JD8X4M6R2T9Q3V5W7Y8Z0A1B';

export const EventSchema = Type.Object({
  id: Type.String({ description: 'Identifier of the event; also the `id:` of its Server-Sent Event, which `Last-Event-ID` names to resume', examples: [EVENT_ID_EXAMPLE] }),
  type: Type.String({ description: 'What happened: `<resource>.created`, `<resource>.updated`, `<resource>.deleted`, `campaign.launched`, `sandbox.reset`, …', examples: ['contact.created'] }),
  created_at: Timestamp('When the change was committed, unix seconds'),
  data: Type.Object({
    object: Type.Object({}, {
      additionalProperties: true,
      description: 'The object as the API shows it after the change (for a deletion, as it was)',
      examples: [{ id: 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', name: 'Ada Lovelace', title: 'VP Engineering' }],
    }),
  }, { description: 'The payload of the event', examples: [{ object: { id: 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', name: 'Ada Lovelace' } }] }),
  previous_attributes: Nullable(Type.Object({}, {
    additionalProperties: true,
    description: 'For updates, the earlier values of the fields the update named; null for other events',
    examples: [{ title: 'Director of Engineering' }],
  })),
  actor: ActorSchema,
}, { title: 'Event', description: 'An event: one change, recorded in the same transaction as the change' });
export type Event = Static<typeof EventSchema>;

export const EventQuerySchema = Type.Object({
  ...PageQuery,
  type: Type.Optional(eventTypeSchema({ description: 'Only events of this type (one of `GET /v1/webhooks/event-types`); narrows a live stream too', examples: ['contact.created'] })),
  actor_org_id: Type.Optional(Str({ description: 'Only events made by keys of this organization: an agency\'s id lists what that agency did here (lists only)', minLength: 1, maxLength: 64, examples: ['org_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  created_after: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e11, description: 'Only events created at or after this time, unix seconds (lists only)', examples: [1767225600] })),
  last_event_id: Type.Optional(Str({ description: 'Streams only: resume after this event, like the `Last-Event-ID` header (the header wins)', maxLength: 64, examples: [EVENT_ID_EXAMPLE] })),
}, { additionalProperties: false });
export type EventQuery = Static<typeof EventQuerySchema>;

export const EventHeadersSchema = Type.Object({
  accept: Type.Optional(Type.String({ description: '`text/event-stream` to stream events live instead of listing them', examples: ['text/event-stream'] })),
  'last-event-id': Type.Optional(Type.String({ maxLength: 64, description: 'Streams only: the id of the last event received; the stream first replays every later event', examples: [EVENT_ID_EXAMPLE] })),
});
