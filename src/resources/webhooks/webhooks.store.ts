// What webhook endpoints do beyond the kernel's records (webhooks.resource.ts): their hooks (the
// SSRF guard, `["*"]`, clearing failures, dropping deliveries) and the writes that send events to
// one endpoint on request (test, redeliver, replay). Every query is scoped to the tenant.
import type { FastifyRequest } from 'fastify';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import { EVENT_TYPE_NAMES, fansOut, isEventType } from '../../platform/event-types.ts';
import { newId } from '../../platform/ids.ts';
import { OutboundError } from '../../platform/outbound.ts';
import type { Row } from '../../platform/resource/define.ts';
import { deleteIn, selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { deliveryJobs } from './webhooks.fanout.ts';
import { webhookDelivery } from './webhooks.jobs.ts';
import type { Endpoint, Replay } from './webhooks.schemas.ts';

export type EndpointRow = Selectable<DB['webhook_endpoints']>;

export const ENDPOINT_NOT_FOUND = 'Webhook endpoint not found';
const MAX_REPLAY = 10_000;

/** The API form of an endpoint row, as the kernel presents it (for the writes of the delivery job). */
export const toEndpoint = (r: EndpointRow): Endpoint => ({
  id: r.id,
  url: r.url,
  description: r.description,
  event_types: Number(r.all_events) === 1 ? ['*'] : parseJson<string[]>(r.event_types),
  is_active: Number(r.is_active) === 1,
  disabled_reason: r.disabled_reason,
  created_at: Number(r.created_at),
  updated_at: Number(r.updated_at),
});

/** `["*"]` or a list of catalogued types; anything else is 400. */
function eventTypes(types: string[]): { all: boolean; types: string[] } {
  if (types.includes('*')) {
    if (types.length > 1) throw badRequest('event_types: "*" stands for every type and cannot be combined with other types', 'event_types');
    return { all: true, types: [] };
  }
  const unknown = types.filter((t) => !isEventType(t));
  if (unknown.length > 0) throw badRequest(`Unknown event type: ${unknown.slice(0, 5).join(', ')}; see GET /v1/webhooks/event-types`, 'event_types');
  return { all: false, types };
}

export async function findEndpoint(db: Kysely<DB>, scope: Scope, id: string): Promise<EndpointRow> {
  const row = await selectIn(db, 'webhook_endpoints', scope).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(ENDPOINT_NOT_FOUND);
  return row;
}

/** The SSRF guard before a write: a URL the service may not call is refused before it is stored. */
export async function checkUrl(req: FastifyRequest, input: Record<string, unknown>): Promise<void> {
  if (typeof input.url !== 'string') return;
  try {
    await req.server.services.outbound.check(input.url);
  } catch (error) {
    if (error instanceof OutboundError) throw badRequest(`url: ${error.message}`, 'url');
    throw error;
  }
}

/** Completes a row about to be written: the `all_events` flag of `["*"]`; a change of `is_active` clears the service's record of failures. */
export async function beforeWrite(_w: WriteContext, row: Record<string, unknown>, { input }: { input: Record<string, unknown> }): Promise<void> {
  if (input.event_types !== undefined) row.all_events = eventTypes(input.event_types as string[]).all ? 1 : 0;
  if (input.is_active !== undefined) Object.assign(row, { disabled_reason: null, failing_since: null });
}

/** `is_active` given again unchanged still clears what the service recorded of failures (and re-enables nothing). */
export const clearsFailures = (before: Row, input: Record<string, unknown>): boolean =>
  input.is_active !== undefined && (before.failing_since !== null || before.disabled_reason !== null);

/**
 * A new endpoint receives its own `webhook_endpoint.created`: its row goes in now, before the fan-out
 * reads the tenant's endpoints (on PostgreSQL that statement travels with the write's queued inserts,
 * in one statement that would not see the row).
 */
export async function insertNow(w: WriteContext, _row: Row, { before }: { before?: Row }): Promise<void> {
  if (!before) await w.flush();
}

/** A deleted endpoint's delivery records go with it. */
export async function dropDeliveries(w: WriteContext, row: Row): Promise<void> {
  await deleteIn(w.tx, 'webhook_deliveries', w.scope).where('endpoint_id', '=', row.id).execute();
}

async function activeEndpoint(w: WriteContext, id: string): Promise<EndpointRow> {
  const row = await findEndpoint(w.tx, w.scope, id);
  if (Number(row.is_active) !== 1) throw conflict('Webhook endpoint is disabled; enable it first (PATCH is_active true)');
  return row;
}

/** A delivery of `eventId` to the endpoint only, sent at once. */
function sendOne(w: WriteContext, endpointId: string, eventId: string) {
  const deliveryId = `dlv_${eventId.slice(4)}${newId('x').slice(2)}`;
  w.enqueue(webhookDelivery, { endpoint_id: endpointId, event_id: eventId }, { id: deliveryId, concurrencyKey: endpointId });
  return { delivery_id: deliveryId, event_id: eventId };
}

/** Records a `webhook.test` event and sends it to this endpoint only. */
export async function sendTest(w: WriteContext, id: string) {
  const endpoint = toEndpoint(await activeEndpoint(w, id));
  const eventId = w.emit('webhook.test', { id: endpoint.id, url: endpoint.url, message: 'A test event from the Revenue Data Service' });
  return sendOne(w, id, eventId);
}

export async function redeliver(w: WriteContext, id: string, deliveryId: string) {
  await activeEndpoint(w, id);
  const delivery = await selectIn(w.tx, 'webhook_deliveries', w.scope).select('event_id').where('endpoint_id', '=', id).where('id', '=', deliveryId).executeTakeFirst();
  if (!delivery) throw notFound('Webhook delivery not found');
  return sendOne(w, id, delivery.event_id);
}

/** Sends the endpoint's past events again from the event log, oldest first. */
export async function replay(w: WriteContext, id: string, input: Replay): Promise<{ replayed: number }> {
  await activeEndpoint(w, id);
  const types = input.event_types ? eventTypes(input.event_types) : { all: true, types: [] };
  const deliverable = EVENT_TYPE_NAMES.filter((t) => fansOut(t) && (types.all || types.types.includes(t)));
  if (deliverable.length === 0) return { replayed: 0 };
  const { orgId, mode } = w.scope;
  const source = sql`(select id, type from events where org_id = ${orgId} and mode = ${mode} and created_at >= ${input.created_after}
    and type in (${sql.join(deliverable)}) order by seq limit ${MAX_REPLAY}) as ev`;
  const suffix = newId('x').slice(2);
  const result = await deliveryJobs(w, source, { endpointId: id, suffix }).execute(w.tx);
  return { replayed: Number(result.numAffectedRows ?? 0) };
}
