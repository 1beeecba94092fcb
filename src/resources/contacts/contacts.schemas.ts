import { Type, type Static } from 'typebox';
import { Email, Nullable, PageQuery, Str, Tags, Timestamp } from '../../platform/schemas.ts';

// Field documentation, shared by the request and response schemas.
const doc = {
  name: ['Full name; derived from first_name and last_name when omitted', 'Ada Lovelace'],
  first_name: ['Given name', 'Ada'],
  last_name: ['Family name', 'Lovelace'],
  title: ['Job title', 'VP Engineering'],
  company: ['Company name as written on the contact', 'Analytical Engines Ltd'],
  work_email: ['Work e-mail address, stored lower-case; its domain links the contact to the company with that domain', 'ada@example.com'],
  personal_email: ['Personal e-mail address, stored lower-case', 'ada@home.example'],
  phone: ['Phone number', '+44 20 7946 0000'],
  linkedin_url: ['LinkedIn profile URL', 'https://www.linkedin.com/in/ada'],
  city: ['City', 'London'],
  country: ['Country', 'GB'],
  seniority: ['Seniority', 'vp'],
  department: ['Department', 'engineering'],
} as const;
type Field = keyof typeof doc;

const input = (f: Field, maxLength = 200) => Type.Optional(Nullable(Str({ description: doc[f][0], maxLength, examples: [doc[f][1]] })));
const email = (f: Field) => Type.Optional(Nullable(Email(doc[f][0], doc[f][1])));
const output = (f: Field) => Nullable(Type.String({ description: doc[f][0], examples: [doc[f][1]] }));

const writable = {
  name: input('name'),
  first_name: input('first_name'),
  last_name: input('last_name'),
  title: input('title'),
  company: input('company'),
  work_email: email('work_email'),
  personal_email: email('personal_email'),
  phone: input('phone', 50),
  linkedin_url: input('linkedin_url', 500),
  city: input('city', 100),
  country: input('country', 100),
  seniority: input('seniority', 50),
  department: input('department', 100),
  tags: Type.Optional(Tags),
};
const ListId = Str({ description: 'The list the contact belongs to (type contacts or leads)', maxLength: 64, examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] });

export const ContactCreateSchema = Type.Object({ list_id: ListId, ...writable }, { additionalProperties: false, description: 'A new contact' });
export type ContactCreate = Static<typeof ContactCreateSchema>;

export const ContactUpdateSchema = Type.Object({ list_id: Type.Optional(ListId), ...writable }, {
  additionalProperties: false, description: 'Fields to change; null clears a field; a new list_id moves the contact to that list',
});
export type ContactUpdate = Static<typeof ContactUpdateSchema>;

export const ContactSchema = Type.Object({
  id: Type.String({ description: 'Identifier of the contact', examples: ['con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  list_id: Type.String({ description: 'The list the contact belongs to', examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  name: output('name'),
  first_name: output('first_name'),
  last_name: output('last_name'),
  title: output('title'),
  company: output('company'),
  company_id: Nullable(Type.String({ description: 'The company whose domain matches the work e-mail domain; read-only', examples: ['cmp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  work_email: output('work_email'),
  personal_email: output('personal_email'),
  phone: output('phone'),
  linkedin_url: output('linkedin_url'),
  city: output('city'),
  country: output('country'),
  seniority: output('seniority'),
  department: output('department'),
  tags: Type.Array(Type.String(), { description: 'Free-form labels', examples: [['vip']] }),
  suppressed: Type.Boolean({ description: 'True when an e-mail address of the contact, or its domain, is on a suppression list; read-only', examples: [false] }),
  created_at: Timestamp('When the contact was created, unix seconds'),
  updated_at: Timestamp('When the contact last changed, unix seconds'),
}, { description: 'A contact' });
export type Contact = Static<typeof ContactSchema>;

export const ContactQuerySchema = Type.Object({
  ...PageQuery,
  title: Type.Optional(Str({ description: 'Title contains this text, case-insensitively', maxLength: 200, examples: ['engineer'] })),
  list_id: Type.Optional(Str({ description: 'Only contacts on this list', maxLength: 64, examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  company: Type.Optional(Str({ description: 'Company name, exactly', maxLength: 200, examples: ['Analytical Engines Ltd'] })),
  work_email: Type.Optional(Str({ description: 'Work e-mail address, exactly (case-insensitive)', maxLength: 254, examples: ['ada@example.com'] })),
  tag: Type.Optional(Str({ description: 'Contacts carrying this tag', maxLength: 100, examples: ['vip'] })),
  created_after: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e11, description: 'Created at or after this time, unix seconds', examples: [1767225600] })),
  created_before: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e11, description: 'Created before this time, unix seconds', examples: [1767225600] })),
}, { additionalProperties: false });
export type ContactQuery = Static<typeof ContactQuerySchema>;
