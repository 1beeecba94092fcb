import { Type, type Static } from 'typebox';
import { eventTypeSchema } from '../../platform/event-types.ts';
import { Nullable, PageQuery, Str, StringEnum, Timestamp } from '../../platform/schemas.ts';

const ENDPOINT_ID = 'whe_01JD8X4M6R2T9Q3V5W7Y8Z0A1B';
const DELIVERY_ID = 'dlv_01JD8X4M6R2T9Q3V5W7Y8Z0A1B01JD8X4M6R2T9Q3V5W7Y8Z0A1C';
const EVENT_ID = 'evt_01JD8X4M6R2T9Q3V5W7Y8Z0A1B';
export const MAX_ACTIVE_ENDPOINTS = 10;

/** The event types of a subscription (the endpoint's `event_types`, a replay's). */
export const EventTypes = Type.Array(eventTypeSchema({ description: 'An event type of `GET /v1/webhooks/event-types`, or `*`', examples: ['contact.created'] }, true), {
  minItems: 1, maxItems: 100, uniqueItems: true,
  description: 'The event types delivered: `["*"]` for every type, or a list of types; an unknown type is 400',
  examples: [['contact.created', 'contact.updated']],
});

/** An endpoint as the API answers it (the kernel's record of webhooks.resource.ts). */
export interface Endpoint {
  [field: string]: unknown;
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  is_active: boolean;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
}

export const EventTypeSchema = Type.Object({
  type: Type.String({ description: 'The event type', examples: ['contact.created'] }),
  description: Type.String({ description: 'When it is emitted', examples: ['A contact was created'] }),
}, { title: 'EventType', description: 'An event type the service emits' });

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const AttemptSchema = Type.Object({
  attempted_at: Timestamp('When the attempt was made, unix seconds'),
  status_code: Nullable(Type.Integer({ description: 'The HTTP status of the answer; null when none came (timeout, refused connection)', examples: [200] })),
  duration_ms: Type.Integer({ description: 'How long the attempt took, milliseconds', examples: [84] }),
  error: Nullable(Type.String({ description: 'Why the attempt failed; null on success', examples: ['No answer within 10000 ms (10001 ms)'] })),
  response_body: Nullable(Type.String({ description: 'The first KiB of the answer', examples: ['ok'] })),
}, { title: 'DeliveryAttempt', description: 'One attempt of a delivery' });

export const DeliverySchema = Type.Object({
  id: Type.String({ description: 'Identifier of the delivery', examples: [DELIVERY_ID] }),
  endpoint_id: Type.String({ description: 'The endpoint', examples: [ENDPOINT_ID] }),
  event_id: Type.String({ description: 'The event delivered; also the `webhook-id` header of every attempt', examples: [EVENT_ID] }),
  event_type: Type.String({ description: 'The type of the event', examples: ['contact.created'] }),
  status: StringEnum(DELIVERY_STATUSES, { description: '`pending` while retries remain, `succeeded` after a 2xx answer, `failed` when the service gave up', examples: ['succeeded'] }),
  attempt_count: Type.Integer({ description: 'Attempts made so far', examples: [1] }),
  next_attempt_at: Nullable(Timestamp('When the next retry is due, unix seconds; null unless pending')),
  attempts: Type.Array(AttemptSchema, { description: 'The attempts, oldest first (the last 20)' }),
  created_at: Timestamp('When the first attempt was made, unix seconds'),
  updated_at: Timestamp('When the last attempt was made, unix seconds'),
}, { title: 'WebhookDelivery', description: 'The delivery of one event to one endpoint' });
export type Delivery = Static<typeof DeliverySchema>;

export const DeliveryQuerySchema = Type.Object({
  ...PageQuery,
  status: Type.Optional(StringEnum(DELIVERY_STATUSES, { description: 'Only deliveries in this status', examples: ['failed'] })),
  event_type: Type.Optional(eventTypeSchema({ description: 'Only deliveries of events of this type', examples: ['contact.created'] })),
}, { additionalProperties: false });
export type DeliveryQuery = Static<typeof DeliveryQuerySchema>;

export const DeliveryParamsSchema = Type.Object({
  id: Str({ description: 'Identifier of the endpoint', maxLength: 64, examples: [ENDPOINT_ID] }),
  delivery_id: Str({ description: 'Identifier of the delivery', maxLength: 64, examples: [DELIVERY_ID] }),
});

export const QueuedSchema = Type.Object({
  delivery_id: Type.String({ description: 'The new delivery; it appears under the endpoint\'s deliveries once attempted', examples: [DELIVERY_ID] }),
  event_id: Type.String({ description: 'The event it sends', examples: [EVENT_ID] }),
}, { title: 'QueuedDelivery', description: 'A delivery queued to be sent at once' });

export const ReplaySchema = Type.Object({
  created_after: Type.Integer({ minimum: 0, maximum: 1e11, description: 'Re-send events created at or after this time, unix seconds', examples: [1767225600] }),
  event_types: Type.Optional(EventTypes),
}, { title: 'WebhookReplay', additionalProperties: false, description: 'Which past events to send again' });
export type Replay = Static<typeof ReplaySchema>;

export const ReplayedSchema = Type.Object({
  replayed: Type.Integer({ description: 'How many events were queued to be sent again (at most 10,000 per call, oldest first)', examples: [42] }),
}, { title: 'WebhookReplayResult', description: 'The result of a replay' });
