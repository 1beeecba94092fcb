// Lists: of contacts or leads (their contacts' list_id), of companies or deals (members), or of
// suppression entries. Deleting a list with members needs `cascade=true`.
import { Type } from 'typebox';
import { conflict } from '../../platform/errors.ts';
import { defineResource } from '../../platform/resource/define.ts';
import { enumOf, int, text } from '../../platform/resource/fields.ts';
import { deleteIn } from '../../platform/resource/tenancy.ts';
import { deleteListFields } from '../fields/fields.store.ts';

export const LIST_TYPES = ['contacts', 'companies', 'suppressions', 'deals', 'leads'] as const;
/** Types whose members are contacts. */
export const CONTACT_LIST_TYPES = ['contacts', 'leads'];

export const lists = defineResource({
  name: 'list', plural: 'lists', prefix: 'lst', table: 'lists', notFound: 'List not found',
  tag: 'Lists', tagDescription: 'Lists of contacts, companies, leads, deals, and suppression lists',
  fields: {
    name: text({ required: true, min: 1, description: 'Name of the list', example: 'Q4 webinar attendees' }),
    type: enumOf(LIST_TYPES, { required: true, createOnly: true, description: 'What the list holds; `suppressions` lists hold e-mail addresses and domains never to contact', example: 'contacts' }),
    description: text({ max: 2000, description: 'Free-text description', example: 'Everyone who joined the October webinar' }),
    member_count: int({ readOnly: true, nullable: false, default: 0, description: 'Records on the list (contacts, companies or deals), or entries of a suppression list', example: 42 }),
  },
  filters: { type: 'eq' },
  ownedTables: ['list_entries', 'list_members'],
  eventDocs: { updated: 'A list was renamed or its description changed' },
  routes: {
    messages: { enum: { type: 'Invalid list type' } },
    docs: {
      create: { summary: 'Create a list', description: 'Creates a list. `type` is one of contacts, companies, suppressions, deals, leads; any other value is 400 `Invalid list type`.' },
      update: { description: 'Changes the name or description (the type of a list is fixed); an empty body is 400 `No fields to update`.' },
      delete: { description: 'Deletes a list. A list that still has members is refused with 409 unless `cascade=true`, which deletes its contacts, members or entries too. Campaigns aimed at the list lose their audience (`list_id` becomes null). The custom fields of the list are deleted with it (each records `field.deleted`).' },
    },
    deleteQuery: { cascade: Type.Optional(Type.Boolean({ description: 'Also delete the members of the list (contacts, members or entries)', default: false, examples: [true] })) },
    errors: { delete: [409] },
  },
  hooks: {
    async beforeDelete(w, row, query) {
      const members = Number(row.member_count);
      if (members > 0 && query.cascade !== true) {
        throw conflict(`List has ${members} member${members === 1 ? '' : 's'}; remove them first or pass cascade=true to delete them with the list`);
      }
      await deleteIn(w.tx, 'list_entries', w.scope).where('list_id', '=', row.id).execute();
      await deleteIn(w.tx, 'list_members', w.scope).where('list_id', '=', row.id).execute();
      // The list's own custom fields go with it (the registry is read late: it imports this module).
      const { resources } = await import('../registry.ts');
      await deleteListFields(w, resources, row.id);
    },
  },
});
