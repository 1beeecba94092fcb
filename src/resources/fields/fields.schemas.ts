// Schemas of the fields group: a field definition (custom or built-in), its create and update bodies.
import { Type } from 'typebox';
import { DATA_TYPES } from '../../platform/resource/custom-fields.ts';
import { Nullable, Str, StringEnum, Timestamp } from '../../platform/schemas.ts';

export const FIELD_NAME = '^[a-z][a-z0-9_]{0,62}$';

const Options = Type.Object({
  values: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '^[^|\\u0000\\ud800-\\udfff]+$', description: 'One allowed value', examples: ['enterprise'] }), {
    minItems: 1, maxItems: 500, uniqueItems: true, description: 'The allowed values of an enum or multi_enum field', examples: [['smb', 'mid_market', 'enterprise']],
  })),
  currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$', maxLength: 3, description: 'ISO 4217 code of a currency field (default USD)', examples: ['EUR'] })),
}, { additionalProperties: false, description: 'Type-specific settings: `values` for enum and multi_enum (required there), `currency` for currency' });

export const FieldSchema = Type.Object({
  id: Type.String({ description: 'Identifier: `fld_…` for a custom field, `<object>.<name>` for a built-in one', examples: ['fld_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  object: Type.String({ description: 'The object the field belongs to', examples: ['contacts'] }),
  name: Type.String({ description: 'Key of the value in `custom_fields` (snake_case)', examples: ['industry_segment'] }),
  title: Type.String({ description: 'Label to show', examples: ['Industry segment'] }),
  data_type: StringEnum(DATA_TYPES, { description: 'Type of the values', examples: ['enum'] }),
  is_global: Type.Boolean({ description: 'True for the built-in fields of the object (read-only), false for custom fields', examples: [false] }),
  options: Nullable(Options),
  required: Type.Boolean({ description: 'A value is needed when a record is created', examples: [false] }),
  unique: Type.Boolean({ description: 'No two records of the tenant hold the same value', examples: [false] }),
  description: Nullable(Type.String({ description: 'What the field means', examples: ['Segment used for routing'] })),
  list_id: Nullable(Type.String({ description: 'For a list-specific field: the list whose records it applies to', examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  created_at: Nullable(Timestamp('When the field was defined, unix seconds; null for built-in fields')),
  updated_at: Nullable(Timestamp('When the definition last changed, unix seconds; null for built-in fields')),
}, { description: 'A field of an object: custom (defined by the organization) or built-in' });

const doc = (description: string, examples: unknown[]) => ({ description, examples });

export const CreateField = (objects: readonly string[]) => Type.Object({
  object: StringEnum(objects, doc('The object that gets the field', ['contacts'])),
  name: Type.String({ pattern: FIELD_NAME, maxLength: 63, ...doc('snake_case key, unique per object; never the name of a built-in field', ['industry_segment']) }),
  title: Type.Optional(Str({ minLength: 1, maxLength: 200, ...doc('Label to show; defaults to the name', ['Industry segment']) })),
  data_type: StringEnum(DATA_TYPES, doc('Type of the values', ['enum'])),
  options: Type.Optional(Options),
  required: Type.Optional(Type.Boolean(doc('Require a value when a record is created (default false)', [false]))),
  unique: Type.Optional(Type.Boolean(doc('No two records may hold the same value (text, number, email, url, currency; default false); fixed at creation', [false]))),
  description: Type.Optional(Nullable(Str({ maxLength: 2000, ...doc('What the field means', ['Segment used for routing']) }))),
  list_id: Type.Optional(Nullable(Str({ maxLength: 64, ...doc('Make the field apply only to records of this list (objects whose records are on lists)', ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B']) }))),
}, { additionalProperties: false, description: 'A new custom field' });

export const UpdateField = Type.Object({
  title: Type.Optional(Str({ minLength: 1, maxLength: 200, ...doc('Label to show', ['Segment']) })),
  description: Type.Optional(Nullable(Str({ maxLength: 2000, ...doc('What the field means', ['Segment used for routing']) }))),
  required: Type.Optional(Type.Boolean(doc('Require a value when a record is created', [true]))),
  options: Type.Optional(Options),
}, { additionalProperties: false, description: 'Changes to a custom field; name, object, data_type, unique and list_id are fixed. Enum values can be added, never removed' });

export const FieldQuery = (objects: readonly string[]) => ({
  object: Type.Optional(StringEnum(objects, doc('Only the fields of this object', ['contacts']))),
  list_id: Type.Optional(Str({ maxLength: 64, ...doc('Only global fields and those of this list', ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B']) })),
});
