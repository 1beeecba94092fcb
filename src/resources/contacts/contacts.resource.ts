// Contacts. Each belongs to a list of type contacts or leads (whose member_count moves with it) and
// is linked to the company whose domain matches its work e-mail. `suppressed` is read, not stored.
import { Type } from 'typebox';
import { defineResource } from '../../platform/resource/define.ts';
import { email, ref, tags, text, timeZone, url } from '../../platform/resource/fields.ts';
import { beforeDelete, beforeWrite, count, enrich, list, read } from './contacts.store.ts';
import { createReads } from './contacts.create-reads.ts';

const doc = (description: string, example: string) => ({ description, example });

export const contacts = defineResource({
  name: 'contact', plural: 'contacts', prefix: 'con', table: 'contacts', notFound: 'Contact not found',
  tag: 'Contacts', tagDescription: 'People, each on a list',
  fields: {
    list_id: ref('lists', { required: true, onDelete: 'cascade', check: false, prefix: 'lst', description: 'The list the contact belongs to (type contacts or leads); a new list_id moves the contact' }),
    name: text(doc('Full name; derived from first_name and last_name when omitted', 'Ada Lovelace')),
    first_name: text(doc('Given name', 'Ada')),
    last_name: text(doc('Family name', 'Lovelace')),
    title: text(doc('Job title', 'VP Engineering')),
    company: text(doc('Company name as written on the contact', 'Analytical Engines Ltd')),
    company_id: ref('companies', { readOnly: true, onDelete: 'set null', prefix: 'cmp', description: 'The company whose domain matches the work e-mail domain; read-only' }),
    work_email: email(doc('Work e-mail address, stored lower-case; its domain links the contact to the company with that domain', 'ada@example.com')),
    personal_email: email(doc('Personal e-mail address, stored lower-case', 'ada@home.example')),
    phone: text({ ...doc('Phone number, stored in E.164 (`+442079460000`) however it is written; a national number is read in the organization\'s `phone_region` (without one it is 422, as is a number that is none)', '+442079460000'), max: 50 }),
    linkedin_url: url(doc('LinkedIn profile URL', 'https://www.linkedin.com/in/ada')),
    city: text({ ...doc('City', 'London'), max: 100 }),
    country: text({ ...doc('Country', 'GB'), max: 100 }),
    seniority: text({ ...doc('Seniority', 'vp'), max: 50 }),
    department: text({ ...doc('Department', 'engineering'), max: 100 }),
    timezone: timeZone({ description: 'The IANA time zone the contact lives in (`Europe/Berlin`); a sequence with `use_contact_timezone` sends in its hours. An unknown name is 422', example: 'Europe/London' }),
    tags: tags(),
  },
  computed: {
    suppressed: Type.Boolean({ description: 'True when an e-mail address of the contact, or its domain, is on a suppression list; read-only', examples: [false] }),
  },
  filters: {
    title: { op: 'contains', description: 'Title contains this text, case-insensitively' },
    list_id: { op: 'eq', description: 'Only contacts on this list' },
    company: { op: 'eq_ci', description: 'Company name, exactly (case-insensitive)' },
    work_email: { op: 'eq', description: 'Work e-mail address, exactly (case-insensitive)', normalize: (v: string) => v.trim().toLowerCase() },
    tag: { field: 'tags', op: 'has', description: 'Contacts carrying this tag' },
    created_after: { field: 'created_at', op: 'gte', schema: Type.Integer({ minimum: 0, maximum: 1e11, description: 'Created at or after this time, unix seconds', examples: [1767225600] }) },
    created_before: { field: 'created_at', op: 'lt', schema: Type.Integer({ minimum: 0, maximum: 1e11, description: 'Created before this time, unix seconds', examples: [1767225600] }) },
  },
  search: ['name', 'first_name', 'last_name', 'title', 'company', 'work_email', 'personal_email'],
  counter: 'contacts',
  customFields: true,
  // Assert matches by work e-mail (stored lower-case), then by LinkedIn URL as stored.
  assert: { keys: [{ field: 'work_email', normalize: (v) => v.trim().toLowerCase() }, { field: 'linkedin_url' }] },
  hooks: { beforeWrite, beforeDelete, enrich, list, count, read, readAhead: createReads },
  routes: {
    messages: { required: { list_id: 'list_id is required when creating contacts' } },
    docs: {
      list: { summary: 'Search and list contacts', description: 'Lists contacts, newest first, with an exact `total`. Filters combine: `title` (contains, case-insensitive), `list_id`, `company` (case-insensitive), `work_email`, `tag`, `created_after`, `created_before`.' },
      create: { description: 'Creates a contact on a list of type contacts or leads. Without `list_id`: 400 `list_id is required when creating contacts`; an unknown list: 404 `List not found`; a malformed e-mail: 422.' },
      update: { description: 'Changes the fields given; a new `list_id` moves the contact. An empty body is 400 `No fields to update`.' },
    },
    errors: { create: [404] },
  },
});
