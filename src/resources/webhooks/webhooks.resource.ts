// Webhook endpoints: where a tenant's events are POSTed, signed with the endpoint's secret (Standard
// Webhooks). The kernel makes the CRUD routes, the secret (shown by the create and by
// `POST /v1/webhooks/{id}/rotate-secret` only, the previous one honoured for a day after a rotation)
// and the cap of 10 active endpoints; webhooks.routes.ts adds deliveries, redelivery, replay and tests.
import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';
import { parseJson } from '../../db/sql.ts';
import { defineResource } from '../../platform/resource/define.ts';
import { boolean, json, secret, text } from '../../platform/resource/fields.ts';
import { Str } from '../../platform/schemas.ts';
import { beforeWrite, checkUrl, clearsFailures, dropDeliveries, ENDPOINT_NOT_FOUND, insertNow } from './webhooks.store.ts';
import { EventTypes, MAX_ACTIVE_ENDPOINTS } from './webhooks.schemas.ts';

const URL_INPUT = Str({ description: 'Where deliveries are POSTed: an `https://` (or `http://`) URL on the public internet', format: 'uri', minLength: 1, maxLength: 2048, examples: ['https://example.com/hooks/revenue'] });

/** `["*"]` is stored as no list beside `all_events` (the fan-out reads that flag): a subscription lists at least one type. */
const eventTypes = {
  ...json({ required: true, input: EventTypes, output: Type.Array(Type.String({ description: 'An event type, or `*` for all' }), { description: 'The event types delivered', examples: [['*']] }), description: 'The event types delivered' }),
  toRow: (v: unknown) => (v === null || v === undefined ? v : JSON.stringify((v as string[]).includes('*') ? [] : v)),
  fromRow: (v: unknown) => {
    const types = parseJson<string[]>(v);
    return types.length === 0 ? ['*'] : types;
  },
};

export const webhookEndpoints = defineResource({
  name: 'webhook_endpoint', plural: 'webhooks', prefix: 'whe', table: 'webhook_endpoints', notFound: ENDPOINT_NOT_FOUND,
  tag: 'Webhooks', tagDescription: 'Signed deliveries of events to your endpoints',
  fields: {
    url: { ...text({ required: true, description: 'Where deliveries are POSTed', example: 'https://example.com/hooks/revenue' }), input: URL_INPUT },
    description: text({ max: 500, description: 'Free-text description', example: 'CRM sync' }),
    event_types: eventTypes,
    is_active: boolean({ nullable: false, default: true, description: 'Whether events are delivered; at most 10 active endpoints per organization and mode (true when omitted)', example: true }),
    disabled_reason: text({
      readOnly: true, max: 500, example: 'The endpoint answered 410 Gone',
      description: 'Why the service disabled the endpoint (it answered 410 Gone, or failed for longer than the retry window); null while active or when disabled by the user',
    }),
    secret: secret({
      description: 'The signing secret (Standard Webhooks, `whsec_…`); shown only when created or rotated', example: 'whsec_MfKQ9r8GKY…',
      // Kept as written: every delivery is signed with it (webhooks.jobs.ts).
      generate: () => `whsec_${randomBytes(32).toString('base64')}`, store: 'plain',
      previous: { column: 'previous_secret', untilColumn: 'previous_secret_until', seconds: 24 * 3600 },
      rotate: {
        summary: 'Rotate the signing secret',
        description: 'Returns a new secret (shown only here). For the next 24 hours deliveries carry signatures made with both the new and the previous secret, so receivers can switch without missing an event.',
      },
    }),
  },
  filters: { is_active: { op: 'eq', description: 'Only active (true) or inactive (false) endpoints', normalize: (v: boolean) => (v ? 1 : 0) } },
  cap: { max: MAX_ACTIVE_ENDPOINTS, field: 'is_active', value: true, message: `At most ${MAX_ACTIVE_ENDPOINTS} active webhook endpoints per organization and mode; disable or delete one first` },
  // Configuration, like API keys: the sandbox reset keeps the endpoints and clears their deliveries.
  keptOnReset: true,
  eventDocs: { created: 'A webhook endpoint was created (its secret is never part of the event)', updated: 'A webhook endpoint was changed; `previous_attributes` holds the earlier values', deleted: 'A webhook endpoint was deleted' },
  hooks: { checkInput: checkUrl, beforeWrite, afterWrite: insertNow, writesUnchanged: clearsFailures, beforeDelete: dropDeliveries },
  routes: {
    docs: {
      list: { summary: 'List webhook endpoints', description: 'Lists the endpoints, newest first; filter by `is_active`. Secrets are never listed.', operationId: 'listWebhookEndpoints' },
      create: {
        summary: 'Create a webhook endpoint',
        description: 'Registers a URL to receive events, signed with the returned `secret` (shown only here). The URL must be `https://` or `http://` and may not point to a private, loopback or link-local address. At most 10 active endpoints per organization and mode (409 beyond).',
      },
      get: { summary: 'Get a webhook endpoint', description: `Reads one endpoint (without its secret); 404 \`${ENDPOINT_NOT_FOUND}\` if it does not exist.` },
      update: {
        summary: 'Update a webhook endpoint',
        description: 'Changes the URL, event types, description or `is_active`; setting `is_active` to true re-enables an endpoint the service disabled. An empty body is 400 `No fields to update`.',
      },
      delete: { summary: 'Delete a webhook endpoint', description: 'Deletes the endpoint and its delivery records; deliveries still queued are dropped.' },
    },
    errors: { create: [409], update: [409] },
  },
});
