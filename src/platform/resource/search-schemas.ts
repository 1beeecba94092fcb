// The request and response schemas of search (they feed validation and the OpenAPI document).
import { Type, type TSchema } from 'typebox';
import { PageQuery, Str, StringEnum } from '../schemas.ts';
import { componentName, type Resource } from './define.ts';
import { FITTING, OPERATORS } from './search.ts';
import { builtInFields } from './search-fields.ts';

const Scalar = (description: string) => [
  Str({ description, maxLength: 1000, examples: ['VP Engineering'] }),
  Type.Number({ description, examples: [250] }),
  Type.Boolean({ description, examples: [true] }),
];

const Value = Type.Union([
  ...Scalar('A value of the field\'s kind'),
  Type.Array(Type.Union(Scalar('One of the values')), { maxItems: 100, description: 'Values of `any_of`, `none_of`, `all_of`, or `[low, high]` of `between`', examples: [['vip', 'q4']] }),
], {
  description: 'The value compared: a string, number or boolean of the field\'s kind; an array for `any_of`, `none_of`, `all_of` and `between` (`[low, high]`, both included); true or false for `exists` (default true); absent for `is_empty` and `is_not_empty`',
  examples: ['engineer'],
});

const operators = Object.entries(FITTING).map(([type, ops]) => `${type}: ${ops.join(', ')}`).join('; ');

function filter(r: Resource): TSchema {
  const fields = [...builtInFields(r).keys()].map((f) => `\`${f}\``).join(', ');
  return Type.Object({
    field: Str({ description: `A field of the ${r.name}: ${fields}, or \`custom_fields.<name>\` for a custom field. An unknown field is 400 naming it`, maxLength: 200, examples: ['title'] }),
    operator: StringEnum(OPERATORS, { description: `How the field is compared. The operators that fit each kind of field: ${operators}. Another is 400 naming it`, examples: ['contains'] }),
    value: Type.Optional(Value),
  }, { additionalProperties: false, description: 'One condition on a field' });
}

/** The body of `POST /v1/search/<plural>`. */
export function searchBody(r: Resource): TSchema {
  const f = filter(r);
  return Type.Object({
    filters: Type.Optional(Type.Array(f, { maxItems: 50, description: 'Conditions that must all hold', examples: [[{ field: 'title', operator: 'contains', value: 'engineer' }]] })),
    filter_groups: Type.Optional(Type.Array(Type.Array(f, { minItems: 1, maxItems: 50, description: 'Conditions that must all hold' }), {
      maxItems: 20, description: 'Groups of which at least one must hold (each group\'s conditions all hold), beside `filters`',
      examples: [[[{ field: 'tags', operator: 'any_of', value: ['vip'] }], [{ field: 'created_at', operator: 'gte', value: 1767225600 }]]],
    })),
    q: Type.Optional(Str({ description: `Full-text search over ${(r.search ?? []).join(', ')}: every word must begin a word of one of them (prefix match, ignoring case and punctuation)`, maxLength: 500, examples: ['ada love'] })),
    sort: Type.Optional(Type.Array(Type.Object({
      field: Str({ description: 'A field of text, number, boolean or enumeration kind, built-in or custom', maxLength: 200, examples: ['last_name'] }),
      direction: Type.Optional(StringEnum(['asc', 'desc'] as const, { description: 'Ascending (default) or descending; records without a value come last either way', examples: ['asc'] })),
    }, { additionalProperties: false, description: 'A sort key' }), { maxItems: 3, description: 'Sort keys, applied in turn, then newest first. Text sorts ignore case. Default: newest first', examples: [[{ field: 'last_name', direction: 'asc' }]] })),
    limit: PageQuery.limit,
    cursor: Type.Optional(Str({ maxLength: 65_536, description: 'Opaque `next_cursor` of the previous page of the same search (it carries the last sort key and id); another search\'s cursor is 400', examples: ['WyJhZGEiLCJjb25fMDFKRDhYNE02UjJUOVEzVjVXN1k4WjBBMUIiXQ.c2ln'] })),
  }, { additionalProperties: false, title: `${componentName(r)}Search`, description: `A search of ${r.plural}` });
}

export const GlobalSearchQuery = Type.Object({
  q: Str({ description: 'Words to look for; every word must begin a word of a record\'s searched fields', minLength: 1, maxLength: 500, examples: ['ada'] }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 5, description: 'Top hits per object, 1 to 50', examples: [5] })),
}, { additionalProperties: false });

/** The answer of `GET /v1/search`: per object, its best hits and how many there are. */
export function globalSearchResult(resources: Resource[]): TSchema {
  const groups: Record<string, TSchema> = {};
  for (const r of resources) {
    groups[r.plural] = Type.Optional(Type.Object({
      total: Type.Integer({ description: `Every ${r.name} that matches`, examples: [3] }),
      data: Type.Array(r.schemas.record, { description: 'The best hits, best first' }),
    }, { description: `Matching ${r.plural}; absent when the key may not read ${r.plural}` }));
  }
  return Type.Object({ data: Type.Object(groups, { description: 'Hits grouped by object' }) }, { description: 'Hits of every searchable object' });
}
