import { Type, type Static } from 'typebox';
import { Nullable, PageQuery, Str, StringEnum, Timestamp } from '../../platform/schemas.ts';

export const LIST_TYPES = ['contacts', 'companies', 'suppressions', 'deals', 'leads'] as const;
/** Types whose members are contacts. */
export const CONTACT_LIST_TYPES = ['contacts', 'leads'];

const ListType = StringEnum(LIST_TYPES, { description: 'What the list holds; `suppressions` lists hold e-mail addresses and domains never to contact', examples: ['contacts'] });
const Name = Str({ description: 'Name of the list', minLength: 1, maxLength: 200, examples: ['Q4 webinar attendees'] });
const Description = Str({ description: 'Free-text description', maxLength: 2000, examples: ['Everyone who joined the October webinar'] });

export const ListSchema = Type.Object({
  id: Type.String({ description: 'Identifier of the list', examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  name: Type.String({ description: 'Name of the list', examples: ['Q4 webinar attendees'] }),
  type: ListType,
  description: Nullable(Type.String({ description: 'Free-text description', examples: ['Everyone who joined the October webinar'] })),
  member_count: Type.Integer({ description: 'Contacts on the list, or entries of a suppression list', examples: [42] }),
  created_at: Timestamp('When the list was created, unix seconds'),
  updated_at: Timestamp('When the list last changed, unix seconds'),
}, { description: 'A list' });
export type List = Static<typeof ListSchema>;

export const ListCreateSchema = Type.Object({
  name: Name,
  type: ListType,
  description: Type.Optional(Nullable(Description)),
}, { additionalProperties: false, description: 'A new list' });
export type ListCreate = Static<typeof ListCreateSchema>;

export const ListUpdateSchema = Type.Object({
  name: Type.Optional(Name),
  description: Type.Optional(Nullable(Description)),
}, { additionalProperties: false, description: 'Fields to change; the type of a list is fixed' });
export type ListUpdate = Static<typeof ListUpdateSchema>;

export const ListQuerySchema = Type.Object({
  ...PageQuery,
  type: Type.Optional(ListType),
}, { additionalProperties: false });
export type ListQuery = Static<typeof ListQuerySchema>;

export const DeleteListQuerySchema = Type.Object({
  cascade: Type.Optional(Type.Boolean({ description: 'Also delete the members of the list (contacts or entries)', default: false, examples: [true] })),
}, { additionalProperties: false });

export const EntrySchema = Type.Object({
  id: Type.String({ description: 'Identifier of the entry', examples: ['ent_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  list_id: Type.String({ description: 'The suppression list', examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  value: Type.String({ description: 'A lower-cased e-mail address or domain', examples: ['ada@example.com'] }),
  kind: StringEnum(['email', 'domain'] as const, { description: 'Whether the value is an address or a whole domain', examples: ['email'] }),
  created_at: Timestamp('When the entry was added, unix seconds'),
}, { description: 'A suppression-list entry' });
export type Entry = Static<typeof EntrySchema>;

export const EntriesCreateSchema = Type.Object({
  values: Type.Array(Str({ description: 'An e-mail address or a domain', minLength: 1, maxLength: 254, examples: ['ada@example.com'] }), {
    minItems: 1, maxItems: 1000, description: 'E-mail addresses and domains to suppress', examples: [['ada@example.com', 'example.org']],
  }),
}, { additionalProperties: false, description: 'Values to add to a suppression list' });

export const EntriesAddedSchema = Type.Object({
  added: Type.Integer({ description: 'How many values were new', examples: [1] }),
  existing: Type.Integer({ description: 'How many values were already on the list', examples: [1] }),
  entries: Type.Array(EntrySchema, { description: 'The entries for the values given, new or existing' }),
}, { description: 'The result of adding entries' });

export const EntryParamsSchema = Type.Object({
  id: Str({ description: 'Identifier of the list', maxLength: 64, examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  entry_id: Str({ description: 'Identifier of the entry', maxLength: 64, examples: ['ent_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
});

export const EntriesQuerySchema = Type.Object({ ...PageQuery }, { additionalProperties: false });
