// Schemas of suppression-list entries (the list itself is defined in lists.resource.ts).
import { Type, type Static } from 'typebox';
import { PageQuery, Str, StringEnum, Timestamp } from '../../platform/schemas.ts';

export const EntrySchema = Type.Object({
  id: Type.String({ description: 'Identifier of the entry', examples: ['ent_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  list_id: Type.String({ description: 'The suppression list', examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  value: Type.String({ description: 'A lower-cased e-mail address or domain', examples: ['ada@example.com'] }),
  kind: StringEnum(['email', 'domain'] as const, { description: 'Whether the value is an address or a whole domain', examples: ['email'] }),
  created_at: Timestamp('When the entry was added, unix seconds'),
}, { title: 'ListEntry', description: 'A suppression-list entry' });
export type Entry = Static<typeof EntrySchema>;

export const EntriesCreateSchema = Type.Object({
  values: Type.Array(Str({ description: 'An e-mail address or a domain', minLength: 1, maxLength: 254, examples: ['ada@example.com'] }), {
    minItems: 1, maxItems: 1000, description: 'E-mail addresses and domains to suppress', examples: [['ada@example.com', 'example.org']],
  }),
}, { title: 'ListEntriesCreate', additionalProperties: false, description: 'Values to add to a suppression list' });

export const EntriesAddedSchema = Type.Object({
  added: Type.Integer({ description: 'How many values were new', examples: [1] }),
  existing: Type.Integer({ description: 'How many values were already on the list', examples: [1] }),
  entries: Type.Array(EntrySchema, { description: 'The entries for the values given, new or existing' }),
}, { title: 'ListEntriesAdded', description: 'The result of adding entries' });

export const EntryParamsSchema = Type.Object({
  id: Str({ description: 'Identifier of the list', maxLength: 64, examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  entry_id: Str({ description: 'Identifier of the entry', maxLength: 64, examples: ['ent_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
});

export const EntriesQuerySchema = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const MembersCreateSchema = Type.Object({
  ids: Type.Array(Str({ description: 'Identifier of a record of the list\'s type', minLength: 1, maxLength: 64, examples: ['cmp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }), {
    minItems: 1, maxItems: 1000, description: 'Records to add: companies for a list of type companies, deals for one of type deals', examples: [['cmp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B']],
  }),
}, { title: 'ListMembersCreate', additionalProperties: false, description: 'Records to add to a list' });

export const MembersAddedSchema = Type.Object({
  added: Type.Integer({ description: 'How many records were new on the list', examples: [1] }),
  existing: Type.Integer({ description: 'How many were on it already', examples: [0] }),
  member_count: Type.Integer({ description: 'Records on the list now', examples: [12] }),
}, { title: 'ListMembersAdded', description: 'The result of adding members' });

export const MemberSchema = Type.Object({}, { additionalProperties: true, description: 'A record of the list\'s type (a company or a deal), as its own endpoint answers it' });

export const MemberParamsSchema = Type.Object({
  id: Str({ description: 'Identifier of the list', maxLength: 64, examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  record_id: Str({ description: 'Identifier of the member record', maxLength: 64, examples: ['cmp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
});
