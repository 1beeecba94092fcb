// The contacts on a deal as children of the deal (platform/resource/children.ts): put with an optional
// role (`PUT /v1/deals/{id}/contacts/{contact_id}`), listed and removed. Apart from deal-contacts.ts,
// which the deal's store imports: a definition needs the deal's at once, the store's functions later.
import { defineChildren } from '../../platform/resource/children.ts';
import { text } from '../../platform/resource/fields.ts';
import { Str } from '../../platform/schemas.ts';
import { contacts } from '../contacts/contacts.resource.ts';
import { deals } from './deals.resource.ts';

export const dealContacts = defineChildren({
  parent: deals, name: 'contact', path: 'contacts', table: 'deal_contacts', parentColumn: 'deal_id',
  key: {
    column: 'contact_id', ref: { resource: contacts, as: 'contact' },
    schema: Str({ description: 'Identifier of the contact', maxLength: 64, examples: ['con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  },
  fields: { role: text({ max: 100, description: 'The contact\'s role on the deal; null clears it, omitted keeps it', example: 'Decision maker' }) },
  write: 'put',
  notFound: 'Contact is not on this deal',
  // The events name the contact rather than copying it, like the association events of other CRMs:
  // the contact's own events say how it changes.
  members: { event: 'contact_link', removed: 'id', removedEvent: 'contact_id', removedTitle: 'DeletedContactLink' },
  description: 'A contact on a deal',
  timestamps: { created: 'When the contact was put on the deal, unix seconds', updated: 'When the role last changed, unix seconds' },
  docs: {
    list: { summary: 'List the contacts on a deal', description: 'The contacts on the deal with their roles, by contact id (newest contact first), with an exact `total`.' },
    write: {
      operationId: 'addContactToDeal', summary: 'Put a contact on a deal',
      description: 'Puts the contact on the deal with an optional `role`, or changes its role there (idempotent: putting it again changes nothing but the role given). Records `deal.contact_added` or `deal.contact_updated`. Unknown deal: 404 `Deal not found`; unknown contact: 404 `Contact not found`.',
    },
    delete: { summary: 'Remove a contact from a deal', description: 'Takes the contact off the deal (both stay). Not on the deal: 404 `Contact is not on this deal`.' },
  },
});
