// Notes: markdown about contacts, companies and deals, newest first (a `pinned` filter gives the
// notes a record shows on top), searchable by their content.
import { validationError } from '../../platform/errors.ts';
import { defineResource } from '../../platform/resource/define.ts';
import { boolean, text } from '../../platform/resource/fields.ts';

/** The largest content, in bytes of UTF-8 (100 KB). */
export const MAX_NOTE_BYTES = 100_000;

export const notes = defineResource({
  name: 'note', plural: 'notes', prefix: 'nte', table: 'notes', notFound: 'Note not found',
  tag: 'Notes', tagDescription: 'Markdown notes on contacts, companies and deals, searchable by content',
  fields: {
    content: text({ required: true, min: 1, max: MAX_NOTE_BYTES, description: `The note, in markdown: at most ${MAX_NOTE_BYTES.toLocaleString('en')} bytes of UTF-8 (100 KB), else 422`, example: 'Called Ada; sending **pricing** on Monday' }),
    created_by: text({ max: 200, description: 'Who wrote the note (a name, e-mail or id of your own)', example: 'grace@example.com' }),
    pinned: boolean({ nullable: false, default: false, description: 'Marks the note to show on top of a record; lists stay newest first, `pinned=true` lists these', example: false }),
    external_key: text({ unique: true, min: 1, max: 200, description: 'Your own identifier of the note, unique within the organization and mode; `PUT /v1/notes/assert` matches on it', example: 'crm-note-4711' }),
  },
  filters: {
    pinned: { op: 'eq', description: 'Only pinned (true) or unpinned (false) notes', normalize: (v: boolean) => (v ? 1 : 0) },
    created_by: { op: 'eq', description: 'Only notes by this author, exactly' },
  },
  search: ['content'],
  customFields: true,
  associations: ['contacts', 'companies', 'deals'],
  assert: { keys: [{ field: 'external_key', normalize: (v) => v.trim() || null }] },
  ownedTables: ['record_associations'],
  eventDocs: { updated: 'A note was changed (its content, pin or associations); `previous_attributes` holds the earlier values' },
  hooks: {
    // The schema counts characters; the limit is in bytes, so multi-byte text is checked here.
    async beforeWrite(_w, row) {
      if (typeof row.content === 'string' && Buffer.byteLength(row.content, 'utf8') > MAX_NOTE_BYTES) {
        throw validationError([{ loc: ['body', 'content'], msg: `content is larger than ${MAX_NOTE_BYTES} bytes (100 KB)`, type: 'value_error.too_large' }]);
      }
    },
  },
  routes: {
    docs: {
      list: { description: 'Lists notes, newest first, with an exact `total`. Filters combine: `pinned`, `created_by`, `contact_id`, `company_id`, `deal_id` (associated with that record), and `custom_fields.<name>`.' },
      create: { description: 'Creates a note. `content` is required markdown of at most 100 KB (422 above it). `associations` names the contacts, companies and deals it is about; an unknown one is 404 naming its kind (`Deal not found`).' },
      update: { description: 'Changes the fields given; each kind of `associations` given replaces that kind\'s associations. An empty body is 400 `No fields to update`.' },
      delete: { description: 'Deletes a note with its associations; reading it afterwards is 404.' },
    },
    errors: { create: [404, 409], update: [404, 409] },
  },
});
