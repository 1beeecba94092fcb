// Values read off JSON schemas of the OpenAPI document: the documented example of a field (every
// field documents one), and the JSON types a field accepts.
import { randomBytes } from 'node:crypto';
import type { Schema } from './api.ts';

export type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';

export const branches = (schema: Schema): Schema[] => schema.anyOf ?? schema.oneOf ?? [schema];

/** The JSON types `schema` accepts (integer-valued numbers count as integers). */
export function acceptedTypes(schema: Schema): Set<JsonType> {
  const out = new Set<JsonType>();
  for (const b of branches(schema)) {
    if (b.const !== undefined) out.add(typeOf(b.const));
    for (const v of b.enum ?? []) out.add(typeOf(v));
    for (const t of [b.type].flat()) if (t) out.add(t as JsonType);
  }
  if (out.has('number')) out.add('integer');
  return out;
}

export function typeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as JsonType;
}

export const isReference = (field: string) => /_ids?$/.test(field);

const unique = () => randomBytes(5).toString('hex');

/** Fields that must differ between objects of one tenant get a fresh value, others their example. */
function uniqueValue(field: string, schema: Schema): unknown {
  const string = branches(schema).find((b) => b.type === 'string');
  if (!string) return undefined;
  if (string.format === 'email') return `u${unique()}@example.com`;
  if (field === 'domain' || field.endsWith('_domain')) return `d${unique()}.example.com`;
  return undefined;
}

/** The documented example of a schema (else a value built from its type and bounds). */
export function exampleOf(schema: Schema, field = ''): unknown {
  const fresh = uniqueValue(field, schema);
  if (fresh !== undefined) return fresh;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return structuredClone(schema.examples[0]);
  if (schema.example !== undefined) return structuredClone(schema.example);
  if (schema.default !== undefined) return structuredClone(schema.default);
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return exampleOf(alternatives.find((b: Schema) => b.type !== 'null') ?? alternatives[0], field);
  switch ([schema.type].flat()[0]) {
    case 'string': return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number': return schema.minimum ?? 1;
    case 'boolean': return true;
    case 'null': return null;
    case 'array': return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => exampleOf(schema.items ?? {}));
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = exampleOf(schema.properties[name], name);
      return out;
    }
    default: return 'x';
  }
}

/** The string schema of a field (its non-null branch), if it takes strings. */
export const stringBranch = (schema: Schema): Schema | undefined => branches(schema).find((b) => b.type === 'string');
