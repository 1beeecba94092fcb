// The catalog of every event type the service emits. `WriteContext.emit` accepts only a type listed
// here, so `GET /v1/webhooks/event-types`, the `type` filter of `GET /v1/events` and the webhook
// subscriptions all read this one list and cannot drift from the code that emits events. A kernel
// resource's events (`<name>.created|updated|deleted` and its declared actions') are not written
// here: `defineResource` declares them from the definition (`declareEventTypes`), so a new resource
// cannot forget them. Written here are the events of writes the kernel does not make.
import { Type } from 'typebox';

export interface EventTypeInfo {
  readonly description: string;
  /** False for events sent to one endpoint only (a test), never fanned out to subscriptions. */
  readonly fanOut?: false;
}

/** The events emitted by code of its own (keys, agencies, imports, a deal's stage moves, …). */
const OWN_EVENT_TYPES = {
  'api_key.created': { description: 'An API key was created (the token is never part of the event)' },
  'api_key.revoked': { description: 'An API key was revoked' },
  'api_key.updated': { description: 'An API key was renamed or its scopes narrowed; `previous_attributes` holds the earlier values' },
  'agency_client.created': { description: 'An agency created a client organization (recorded in the agency\'s organization)' },
  'agency_client.linked': { description: 'An agency redeemed a grant and is linked to the client organization' },
  'agency_client.unlinked': { description: 'An agency unlinked a client organization (the organization and its data remain)' },
  'agency_grant.created': { description: 'The organization offered an agency access (the grant code is never part of the event)' },
  'agency_grant.revoked': { description: 'The organization revoked an agency\'s grant; the agency is unlinked' },
  'call.started': { description: 'The telephony provider took a call a dialer session placed (or, in test mode, the local driver did); the object is the call' },
  'call.completed': { description: 'A call reached its final state (`completed`, `busy`, `no-answer`, `failed` or `canceled`: a call dropped because the agent took another is `canceled`); the object is the call with its `duration`' },
  'call.dispositioned': { description: 'The agent recorded what became of a call (`disposition`, `notes`); the object is the call' },
  'contact.unsubscribed': { description: 'A recipient unsubscribed through the link of a message (or a mail provider\'s one-click unsubscribe): the address is suppressed for its channel. The object is the suppression (`address`, `channel`, `contact_id`, `message_id`), recorded beside `suppression.created` (or `suppression.updated` when the address was already suppressed by hand or for a hard bounce). A second unsubscribe of the same address records nothing' },
  'deal.stage_changed': { description: 'A deal entered another stage; the object is the deal with `previous_stage_id`, `forced` (true when the request said `force: true`) and `bypassed` (the required evidence keys it lacked, entering by force), and `previous_attributes.stage_id` the stage it left. A deal created by force into a stage it lacks evidence for records one too, with `previous_stage_id` null' },
  'deal.contact_added': { description: 'A contact was put on a deal; the object is the deal with the contact link' },
  'deal.contact_updated': { description: 'The role of a contact on a deal changed; `previous_attributes.role` holds the earlier role' },
  'deal.contact_removed': { description: 'A contact was taken off a deal; the object is the deal with `contact_id`' },
  'deal.evidence_added': { description: 'Evidence was recorded on a deal; the object is the deal with `evidence` (key, note, source)' },
  'deal.evidence_updated': { description: 'The note or source of a deal\'s evidence changed; `previous_attributes` holds the earlier note and source' },
  'deal.evidence_removed': { description: 'Evidence was taken off a deal; the object is the deal with `evidence_key`' },
  'deal_pipeline.created': { description: 'A deal pipeline was created (not the default pipeline made with the organization)' },
  'deal_pipeline.updated': { description: 'A deal pipeline, or one of its stages, was changed, added, reordered or deleted; the object is the pipeline with its stages' },
  'deal_pipeline.deleted': { description: 'A deal pipeline was deleted; the object is the pipeline as it was' },
  'domain.verified': { description: 'A check of a sending domain\'s DNS records found every one of them (`POST /v1/domains/{id}/verify`); the object is the domain with each record\'s finding' },
  'domain.verification_failed': { description: 'A check of a sending domain\'s DNS records found one missing or wrong, or DNS did not answer; the object is the domain with each record\'s `finding`' },
  'evidence_key.created': { description: 'The organization added a key of its own to the evidence library' },
  'field.created': { description: 'A custom field was defined' },
  'field.updated': { description: 'A custom field\'s definition was changed; `previous_attributes` holds the earlier values' },
  'field.deleted': { description: 'A custom field was deleted: no record answers it any more' },
  'import.progress': { description: 'A batch of an import\'s rows was written; the object is the import with its counts (`rows_processed`, `created`, `updated`, `skipped`, `failed`). One event per batch, not per row' },
  'import.completed': { description: 'An import reached the end of its file (`completed`, or `completed_with_errors` when rows failed); the object is the import with its final counts' },
  'import.failed': { description: 'An import stopped because its file could not be read (no header row, say); `error` says why' },
  'import.cancelled': { description: 'An import was cancelled; rows written before stay' },
  'inbox_message.received': { description: 'A message came into the inbox (polled over IMAP or posted to an inbound URL); the object is the message with its `thread_id`. Recorded once per Message-ID, automatic replies and delivery status notifications included (`is_auto_reply`)' },
  'export.completed': { description: 'An export finished writing its CSV; the object is the export with its `download_url`' },
  'export.failed': { description: 'An export stopped without a file (its filters or search no longer apply, or its job gave up); `error` says why' },
  'list.entries_added': { description: 'E-mail addresses or domains were added to a suppression list; `added` names the new values' },
  'list.entry_deleted': { description: 'An entry was removed from a suppression list' },
  'list.members_added': { description: 'Records were added to a list; `added` names their ids' },
  'list.member_removed': { description: 'A record was removed from a list; `removed` names its id' },
  'message.sent': { description: 'The provider took a message (or, in test mode, the local driver recorded it); the object is the outbox message' },
  'message.delivered': { description: 'A message was delivered to its recipient\'s server' },
  'message.bounced': { description: 'A message bounced; `error` says why, and a hard bounce suppresses the address' },
  'message.failed': { description: 'A message could not be sent: the provider refused it for good, no provider is configured, or the process stopped during the provider call (`error` says which; such a message is not sent again by itself)' },
  'message.opened': { description: 'A message was first opened' },
  'message.clicked': { description: 'A link in a message was first clicked' },
  'reply.received': { description: 'A reply to a message arrived; `is_auto_reply` tells an out-of-office or other automatic answer from a person\'s reply (automatic ones do not count as replies), and `returns_at` is when an out-of-office answer says its writer is back (unix seconds; null when it does not say)' },
  'sms.sent': { description: 'The SMS provider took a text (or, in test mode, the local driver recorded it), beside `message.sent`; the object is the outbox message' },
  'sms.received': { description: 'A text came in to an SMS connection\'s number, beside `inbox_message.received`; the object is the inbox message' },
  'organization.updated': { description: 'The organization\'s settings changed (`PATCH /v1/organization`: `phone_region`); the object is the organization, `previous_attributes` holds the earlier values' },
  'sandbox.reset': { description: 'The test-mode data set was replaced by a fresh sandbox data set' },
  'sequence.step_added': { description: 'A step was added to a sequence; the object is the sequence with the `step`' },
  'sequence.step_updated': { description: 'A step of a sequence changed; the object is the sequence with the `step`, `previous_attributes` the step\'s earlier values' },
  'sequence.step_removed': { description: 'A step was removed from a sequence; the object is the sequence with `step_id`' },
  'sequence.steps_reordered': { description: 'The steps of a sequence were given a new order; the object is the sequence with `step_ids` in that order' },
  'task.completed': { description: 'An open task was completed (recorded beside its `task.updated`); the object is the task with `completed_at`' },
  'task.reopened': { description: 'A completed task was set back to open (recorded beside its `task.updated`)' },
  'usage.grant': { description: 'Credits were granted' },
  'usage.debit': { description: 'Credits were debited for a billable operation' },
  'usage.refund': { description: 'A debit was refunded' },
  'webhook_endpoint.disabled': { description: 'A webhook endpoint was disabled by the service: it answered 410 Gone, or failed for longer than the retry window' },
  'webhook.test': { description: 'A test event, sent only to the endpoint it was requested for (`POST /v1/webhooks/{id}/test`)', fanOut: false },
} as const satisfies Record<string, EventTypeInfo>;

declare const declared: unique symbol;
/** An event type declared by a definition (`Resource.events`): a string only the kernel makes. */
export type DeclaredEventType = string & { readonly [declared]: true };
export type EventType = keyof typeof OWN_EVENT_TYPES | DeclaredEventType;

/**
 * The whole catalog, by type, and its names in their listed order (grouped by record kind, the kinds
 * in alphabetical order; in a kind, created, updated and deleted, then its actions', then its own).
 * Both grow as definitions declare their events, all of them before an app is built; the schemas of
 * `eventTypeSchema` hold the list itself, so they are complete when routes compile.
 */
export const EVENT_TYPES: Record<string, EventTypeInfo> = {};
export const EVENT_TYPE_NAMES: string[] = [];
const NAMES_OR_ALL: string[] = ['*'];
const rank = new Map<string, number>();

function add(type: string, info: EventTypeInfo, order: number): void {
  if (!Object.hasOwn(EVENT_TYPES, type)) EVENT_TYPE_NAMES.push(type);
  EVENT_TYPES[type] = info;
  rank.set(type, order);
  const kind = (t: string) => t.slice(0, t.indexOf('.'));
  EVENT_TYPE_NAMES.sort((a, b) => (kind(a) === kind(b) ? rank.get(a)! - rank.get(b)! : kind(a) < kind(b) ? -1 : 1));
  NAMES_OR_ALL.splice(1, NAMES_OR_ALL.length - 1, ...EVENT_TYPE_NAMES);
  // The record lists its types in the same order (the OpenAPI document's webhooks follow it).
  for (const name of EVENT_TYPE_NAMES) {
    const entry = EVENT_TYPES[name];
    delete EVENT_TYPES[name];
    EVENT_TYPES[name] = entry;
  }
}

let order = 0;
// Declared events come first in their kind, in the order declared; then the kind's own.
const OWN_RANK = 1_000_000;
for (const [type, info] of Object.entries(OWN_EVENT_TYPES)) add(type, info, OWN_RANK + order++);

/** Declares the events of a definition (by a key of its choosing: its type and description), answering their types. */
export function declareEventTypes<K extends string>(events: Record<K, { type: string; description: string }>): Record<K, DeclaredEventType> {
  const entries = Object.entries(events) as Array<[K, { type: string; description: string }]>;
  for (const [, e] of entries) add(e.type, { description: e.description }, order++);
  return Object.fromEntries(entries.map(([k, e]) => [k, e.type])) as Record<K, DeclaredEventType>;
}

/** A schema for one event type of the catalog (or `*` with `orAll`), whose list grows with it. */
export const eventTypeSchema = (options: { description: string; examples?: unknown[] }, orAll = false) =>
  Type.Unsafe<string>({ type: 'string', enum: orAll ? NAMES_OR_ALL : EVENT_TYPE_NAMES, ...options });

export const isEventType = (value: string): value is EventType => Object.hasOwn(EVENT_TYPES, value);

/**
 * The `<resource>.<action>` type of a kernel resource's write: declared by its definition, so
 * always in the catalog once the resource is defined.
 */
export function resourceEvent(resource: string, action: 'created' | 'updated' | 'deleted'): EventType {
  const type = `${resource}.${action}`;
  if (!isEventType(type)) throw new Error(`Event type ${type} is not in the catalog: ${resource} is not a defined resource`);
  return type;
}

/** Whether events of `type` go to every endpoint subscribed to them. */
export const fansOut = (type: string): boolean => EVENT_TYPES[type]?.fanOut !== false;
