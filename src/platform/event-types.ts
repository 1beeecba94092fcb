// The catalog of every event type the service emits. `WriteContext.emit` accepts only a type listed
// here, so `GET /v1/webhooks/event-types`, the `type` filter of `GET /v1/events` and the webhook
// subscriptions all read this one list and cannot drift from the code that emits events.

interface EventTypeInfo {
  readonly description: string;
  /** False for events sent to one endpoint only (a test), never fanned out to subscriptions. */
  readonly fanOut?: false;
}

export const EVENT_TYPES = {
  'api_key.created': { description: 'An API key was created (the token is never part of the event)' },
  'api_key.revoked': { description: 'An API key was revoked' },
  'api_key.updated': { description: 'An API key was renamed or its scopes narrowed; `previous_attributes` holds the earlier values' },
  'agency_client.created': { description: 'An agency created a client organization (recorded in the agency\'s organization)' },
  'agency_client.linked': { description: 'An agency redeemed a grant and is linked to the client organization' },
  'agency_client.unlinked': { description: 'An agency unlinked a client organization (the organization and its data remain)' },
  'agency_grant.created': { description: 'The organization offered an agency access (the grant code is never part of the event)' },
  'agency_grant.revoked': { description: 'The organization revoked an agency\'s grant; the agency is unlinked' },
  'campaign.created': { description: 'A campaign was created' },
  'campaign.updated': { description: 'A campaign was changed; `previous_attributes` holds the earlier values' },
  'campaign.deleted': { description: 'A campaign was deleted; the object is the campaign as it was' },
  'campaign.launched': { description: 'A campaign was launched and its audience enrolled' },
  'campaign.paused': { description: 'An active campaign was paused' },
  'campaign.resumed': { description: 'A paused campaign was resumed' },
  'company.created': { description: 'A company was created' },
  'company.updated': { description: 'A company was changed; `previous_attributes` holds the earlier values' },
  'company.deleted': { description: 'A company was deleted; the object is the company as it was' },
  'contact.created': { description: 'A contact was created' },
  'contact.updated': { description: 'A contact was changed; `previous_attributes` holds the earlier values' },
  'contact.deleted': { description: 'A contact was deleted; the object is the contact as it was' },
  'deal.created': { description: 'A deal was created' },
  'deal.updated': { description: 'A deal was changed (also when its stage was deleted or changed type); `previous_attributes` holds the earlier values' },
  'deal.deleted': { description: 'A deal was deleted; the object is the deal as it was' },
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
  'evidence_key.created': { description: 'The organization added a key of its own to the evidence library' },
  'field.created': { description: 'A custom field was defined' },
  'field.updated': { description: 'A custom field\'s definition was changed; `previous_attributes` holds the earlier values' },
  'field.deleted': { description: 'A custom field was deleted: no record answers it any more' },
  'import.progress': { description: 'A batch of an import\'s rows was written; the object is the import with its counts (`rows_processed`, `created`, `updated`, `skipped`, `failed`). One event per batch, not per row' },
  'import.completed': { description: 'An import reached the end of its file (`completed`, or `completed_with_errors` when rows failed); the object is the import with its final counts' },
  'import.failed': { description: 'An import stopped because its file could not be read (no header row, say); `error` says why' },
  'import.cancelled': { description: 'An import was cancelled; rows written before stay' },
  'export.completed': { description: 'An export finished writing its CSV; the object is the export with its `download_url`' },
  'export.failed': { description: 'An export stopped without a file (its filters or search no longer apply, or its job gave up); `error` says why' },
  'list.created': { description: 'A list was created' },
  'list.updated': { description: 'A list was renamed or its description changed' },
  'list.deleted': { description: 'A list was deleted; the object is the list as it was' },
  'list.entries_added': { description: 'E-mail addresses or domains were added to a suppression list; `added` names the new values' },
  'list.entry_deleted': { description: 'An entry was removed from a suppression list' },
  'list.members_added': { description: 'Records were added to a list; `added` names their ids' },
  'list.member_removed': { description: 'A record was removed from a list; `removed` names its id' },
  'pipeline.created': { description: 'A stage checklist pipeline (methodology) was created, by hand or from a template; the object holds its stages' },
  'pipeline.updated': { description: 'A stage checklist pipeline, or one of its stages, was changed, added, reordered or deleted; the object is the pipeline with its stages' },
  'pipeline.deleted': { description: 'A stage checklist pipeline was deleted with its stages; the object is the pipeline as it was' },
  'note.created': { description: 'A note was created' },
  'note.updated': { description: 'A note was changed (its content, pin or associations); `previous_attributes` holds the earlier values' },
  'note.deleted': { description: 'A note was deleted; the object is the note as it was' },
  'product.created': { description: 'A product was created' },
  'product.updated': { description: 'A product was changed; `previous_attributes` holds the earlier values' },
  'product.deleted': { description: 'A product was deleted; the object is the product as it was' },
  'quote.created': { description: 'A draft quote was created (also by `POST /v1/quotes/{id}/duplicate`)' },
  'quote.updated': { description: 'A draft quote was changed; `previous_attributes` holds the earlier values' },
  'quote.deleted': { description: 'A draft quote was deleted; the object is the quote as it was' },
  'quote.sent': { description: 'A quote was sent: it has a public link and can no longer be edited (the link\'s token is never part of the event: the send answers it once)' },
  'quote.viewed': { description: 'The recipient opened a sent quote for the first time' },
  'quote.accepted': { description: 'The recipient accepted a quote; the object carries `signer_name`, `signer_ip` and `accepted_at`. Nothing else changes: the seller decides what happens to the deal' },
  'quote.declined': { description: 'The recipient declined a quote; the object carries `decline_reason`' },
  'quote.expired': { description: 'A sent or viewed quote passed its `valid_until` without an answer (recorded by the scheduled expiry)' },
  'quote.voided': { description: 'The seller voided a quote; its link shows it as void and can no longer be answered' },
  'quote.returned_to_draft': { description: 'A quote became a draft again (edit-as-draft): `revision` went up by one and the previous public link stopped working' },
  'sandbox.reset': { description: 'The test-mode data set was replaced by a fresh sandbox data set' },
  'task.created': { description: 'A task was created' },
  'task.updated': { description: 'A task was changed; `previous_attributes` holds the earlier values' },
  'task.completed': { description: 'An open task was completed (recorded beside its `task.updated`); the object is the task with `completed_at`' },
  'task.reopened': { description: 'A completed task was set back to open (recorded beside its `task.updated`)' },
  'task.deleted': { description: 'A task was deleted; the object is the task as it was' },
  'usage.grant': { description: 'Credits were granted' },
  'usage.debit': { description: 'Credits were debited for a billable operation' },
  'usage.refund': { description: 'A debit was refunded' },
  'webhook_endpoint.created': { description: 'A webhook endpoint was created (its secret is never part of the event)' },
  'webhook_endpoint.updated': { description: 'A webhook endpoint was changed; `previous_attributes` holds the earlier values' },
  'webhook_endpoint.deleted': { description: 'A webhook endpoint was deleted' },
  'webhook_endpoint.disabled': { description: 'A webhook endpoint was disabled by the service: it answered 410 Gone, or failed for longer than the retry window' },
  'webhook.test': { description: 'A test event, sent only to the endpoint it was requested for (`POST /v1/webhooks/{id}/test`)', fanOut: false },
} as const satisfies Record<string, EventTypeInfo>;

export type EventType = keyof typeof EVENT_TYPES;

export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES) as EventType[];

export const isEventType = (value: string): value is EventType => Object.hasOwn(EVENT_TYPES, value);

/**
 * The `<resource>.<action>` type of a kernel resource's write. The kernel's types are built from the
 * resource's name, so they are checked here: a resource whose events are not catalogued fails at its
 * first write (and the webhooks tests check every registered resource).
 */
export function resourceEvent(resource: string, action: 'created' | 'updated' | 'deleted'): EventType {
  const type = `${resource}.${action}`;
  if (!isEventType(type)) throw new Error(`Event type ${type} is not in the catalog (src/platform/event-types.ts)`);
  return type;
}

/** Whether events of `type` go to every endpoint subscribed to them. */
export const fansOut = (type: string): boolean => (EVENT_TYPES as Record<string, EventTypeInfo>)[type]?.fanOut !== false;
