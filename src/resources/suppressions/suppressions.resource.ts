// Suppressions: the addresses never sent to again in an organization and mode, by channel. The
// service records them itself (an unsubscribe link, a hard bounce, a complaint: platform/outbox/
// suppressions.ts, which every send asks first); the API lists them, adds manual ones and removes
// those that may be removed. A suppression is a fact about an address, not an editable record: no
// update. Suppression lists (`/v1/lists/{id}/entries`) suppress as well, by address or domain.
import { CHANNELS, SUPPRESSION_REASONS } from '../../platform/outbox/suppressions.ts';
import { defineResource } from '../../platform/resource/define.ts';
import { enumOf, text } from '../../platform/resource/fields.ts';
import { StringEnum } from '../../platform/schemas.ts';
import { beforeDelete, beforeWrite } from './suppressions.store.ts';

const REASONS_TEXT = '`unsubscribed` (the recipient used the unsubscribe link of a message), `hard_bounce` (the address does not exist), `complaint` (the recipient reported a message as spam) or `manual` (added through the API)';

export const suppressions = defineResource({
  name: 'suppression', plural: 'suppressions', prefix: 'sup', table: 'suppressions', notFound: 'Suppression not found',
  tag: 'Suppressions', tagDescription: 'Addresses never sent to again: unsubscribes, hard bounces, complaints and manual entries, and the one-click unsubscribe links of messages',
  fields: {
    channel: enumOf(CHANNELS, { required: true, createOnly: true, description: 'The channel the address is suppressed on: `email`, `sms` or `phone`', example: 'email' }),
    address: text({
      required: true, createOnly: true, min: 3, max: 254, example: 'ada@example.com',
      description: 'The address: an e-mail address (stored trimmed and lower-cased) or, for `sms` and `phone`, a number in E.164 form (`+4915112345678`)',
    }),
    reason: {
      ...enumOf(SUPPRESSION_REASONS, { nullable: false, default: 'manual', createOnly: true, description: `Why the address is suppressed: ${REASONS_TEXT}`, example: 'unsubscribed' }),
      // What the service records itself is no client's to claim: a create is a manual entry.
      input: StringEnum(['manual'] as const, { description: 'Only `manual` (the default): the other reasons are recorded by the service', examples: ['manual'] }),
    },
    contact_id: text({ readOnly: true, max: 64, description: 'The contact the address belonged to when it was suppressed, when known; read-only', example: 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' }),
    message_id: text({ readOnly: true, max: 998, description: 'The message whose link, bounce or complaint suppressed the address, when there was one; read-only', example: 'msg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' }),
    detail: text({ createOnly: true, max: 500, description: 'A note: why it was added by hand, or what the bounce or complaint said', example: 'Asked by phone not to be e-mailed' }),
  },
  filters: {
    reason: { op: 'eq', schema: StringEnum(SUPPRESSION_REASONS, { description: 'Only suppressions of this reason', examples: ['unsubscribed'] }) },
    channel: { op: 'eq', description: 'Only suppressions of this channel' },
    address: { op: 'eq', description: 'Only the suppression of this address (e-mail addresses compared lower-cased)', normalize: (v: string) => v.trim().toLowerCase() },
  },
  counter: 'suppressions',
  // The links minted for messages go with the tenant's data (a sandbox reset clears both).
  ownedTables: ['unsubscribe_links'],
  eventDocs: {
    created: 'An address was suppressed: by hand, or by the service for an unsubscribe, a hard bounce or a complaint',
    updated: 'A manual or hard-bounce suppression became an unsubscribe or a complaint (the recipient asked); `previous_attributes.reason` holds the earlier reason',
    deleted: 'A suppression was removed: the address may be sent to again (unless a suppression list holds it)',
  },
  hooks: { beforeWrite, beforeDelete },
  routes: {
    omit: ['update'],
    docs: {
      list: { description: 'Lists suppressions, newest first, with an exact `total`. Filters combine: `reason`, `channel`, `address`. Addresses suppressed by a suppression list\'s entries are not listed here: see `/v1/lists/{id}/entries`.' },
      create: {
        summary: 'Suppress an address',
        description: 'Adds a manual suppression: nothing is sent to the address on that channel again, in any list, campaign or sequence. `address` must be an e-mail address for `email`, an E.164 number (`+` and up to 15 digits) for `sms` and `phone` (422 otherwise). An address already suppressed on the channel, whatever the reason, is 409 naming its suppression: the first reason stands.',
      },
      get: { description: 'Reads one suppression; 404 `Suppression not found` if it does not exist or was removed.' },
      delete: {
        summary: 'Remove a suppression',
        description: 'Removes a `manual` or `hard_bounce` suppression: the address may be sent to again. An `unsubscribed` or `complaint` suppression is the recipient\'s own request and is never removed through the API (409).',
      },
    },
    errors: { create: [409], delete: [409] },
  },
});
