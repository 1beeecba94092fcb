// Webhook endpoints: the subscriptions of a tenant, their signing secrets, and the writes that send
// events to one endpoint on request (test, redeliver, replay). Every query is scoped to the tenant.
import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import { EVENT_TYPE_NAMES, fansOut, isEventType } from '../../platform/event-types.ts';
import { newId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { previous } from '../../platform/resource/changes.ts';
import { selectIn, tenantOf, updateIn, deleteIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { deliveryJobs } from './webhooks.fanout.ts';
import { webhookDelivery } from './webhooks.jobs.ts';
import { MAX_ACTIVE_ENDPOINTS, type Endpoint, type EndpointCreate, type EndpointQuery, type EndpointUpdate, type EndpointWithSecret, type Replay } from './webhooks.schemas.ts';

export type EndpointRow = Selectable<DB['webhook_endpoints']>;

export const ENDPOINT_NOT_FOUND = 'Webhook endpoint not found';
const SECRET_OVERLAP_SECONDS = 24 * 3600;
const MAX_REPLAY = 10_000;

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

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

function filtered(db: Kysely<DB>, scope: Scope, query: EndpointQuery) {
  let q = selectIn(db, 'webhook_endpoints', scope);
  if (query.is_active !== undefined) q = q.where('is_active', '=', query.is_active ? 1 : 0);
  return q;
}

export function listEndpoints(db: Kysely<DB>, scope: Scope, query: EndpointQuery, page: PageRequest) {
  let q = filtered(db, scope, query).selectAll();
  if (page.after !== undefined) q = q.where('id', '<', String(page.after));
  return q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute();
}

export async function countEndpoints(db: Kysely<DB>, scope: Scope, query: EndpointQuery): Promise<number> {
  const row = await filtered(db, scope, query).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Refuses one more active endpoint beyond the limit (the write holds the tenant's lock). */
async function ensureRoom(w: WriteContext): Promise<void> {
  const active = await countEndpoints(w.tx, w.scope, { is_active: true });
  if (active >= MAX_ACTIVE_ENDPOINTS) {
    throw conflict(`At most ${MAX_ACTIVE_ENDPOINTS} active webhook endpoints per organization and mode; disable or delete one first`);
  }
}

export async function createEndpoint(w: WriteContext, input: EndpointCreate): Promise<EndpointWithSecret> {
  const types = eventTypes(input.event_types);
  const active = input.is_active ?? true;
  if (active) await ensureRoom(w);
  const row: EndpointRow = {
    ...tenantOf(w.scope), id: newId('whe'), url: input.url, description: input.description ?? null,
    event_types: JSON.stringify(types.types), all_events: types.all ? 1 : 0, is_active: active ? 1 : 0, secret: newSecret(),
    previous_secret: null, previous_secret_until: null, disabled_reason: null, failing_since: null, created_at: w.now, updated_at: w.now,
  };
  await w.tx.insertInto('webhook_endpoints').values(row).execute();
  const endpoint = toEndpoint(row);
  w.emit('webhook_endpoint.created', endpoint);
  return { ...endpoint, secret: row.secret };
}

export async function updateEndpoint(w: WriteContext, id: string, input: EndpointUpdate): Promise<Endpoint> {
  const before = await findEndpoint(w.tx, w.scope, id);
  const changes: Partial<EndpointRow> = { updated_at: w.now };
  if (input.url !== undefined) changes.url = input.url;
  if (input.description !== undefined) changes.description = input.description;
  if (input.event_types !== undefined) {
    const types = eventTypes(input.event_types);
    Object.assign(changes, { event_types: JSON.stringify(types.types), all_events: types.all ? 1 : 0 });
  }
  if (input.is_active !== undefined) {
    if (input.is_active && Number(before.is_active) === 0) await ensureRoom(w);
    Object.assign(changes, { is_active: input.is_active ? 1 : 0, disabled_reason: null, failing_since: null });
  }
  const endpoint = toEndpoint({ ...before, ...changes });
  const earlier = previous(toEndpoint(before), endpoint);
  // Nothing would change (`is_active: true` also clears an active endpoint's failures): no write, no event.
  if (Object.keys(earlier).length === 0 && !(changes.failing_since === null && before.failing_since !== null)) return toEndpoint(before);
  await updateIn(w.tx, 'webhook_endpoints', w.scope).set(changes).where('id', '=', id).execute();
  w.emit('webhook_endpoint.updated', endpoint, earlier);
  return endpoint;
}

export async function deleteEndpoint(w: WriteContext, id: string): Promise<{ id: string; deleted: true }> {
  const before = await findEndpoint(w.tx, w.scope, id);
  await deleteIn(w.tx, 'webhook_deliveries', w.scope).where('endpoint_id', '=', id).execute();
  await deleteIn(w.tx, 'webhook_endpoints', w.scope).where('id', '=', id).execute();
  w.emit('webhook_endpoint.deleted', toEndpoint(before));
  return { id, deleted: true };
}

/** A new secret; deliveries of the next 24 hours are signed with both, so receivers can switch. */
export async function rotateSecret(w: WriteContext, id: string): Promise<EndpointWithSecret> {
  const before = await findEndpoint(w.tx, w.scope, id);
  const changes = { secret: newSecret(), previous_secret: before.secret, previous_secret_until: w.now + SECRET_OVERLAP_SECONDS, updated_at: w.now };
  await updateIn(w.tx, 'webhook_endpoints', w.scope).set(changes).where('id', '=', id).execute();
  const endpoint = toEndpoint({ ...before, ...changes });
  w.emit('webhook_endpoint.updated', endpoint, {});
  return { ...endpoint, secret: changes.secret };
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
