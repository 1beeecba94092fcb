// Hostile inputs generated with fast-check from the documented request schemas: a valid-looking
// body (every field drawn from its schema) and one mutation of it, as JSON or as raw text.
import fc from 'fast-check';
import type { Schema } from './api.ts';
import { acceptedTypes, branches, exampleOf, isReference, stringBranch, typeOf } from './schema-values.ts';

/** Strings that break naive code: NUL, lone surrogates, direction overrides, emoji, BOM, escapes. */
export const UNICODE_EDGES = [
  '\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\ud83dy', '\u202eevil\u202c', '\u200f\u05e9\u05dc\u05d5\u05dd', '👩‍👩‍👧‍👦', '🏳️‍🌈',
  '\ufeffbom', 'e\u0301', '\u200b', '\uffff', '\u{10ffff}', '\\u0000', '\r\n\t', ' ', '', 'Ω≈ç√∫', '\u0085', '\u2028\u2029',
];

/** Strings aimed at query building, JSON handling and output encoding. */
export const INJECTIONS = [
  "' OR '1'='1", "'; DROP TABLE contacts; --", '" OR ""="', "1; SELECT pg_sleep(5)--", "') OR 1=1 --", '%', '_', '%_%', '\\', "\\'",
  '{"$gt": ""}', '{"__proto__": {"admin": true}}', '__proto__', 'constructor', '${7*7}', '{{7*7}}', '<script>alert(1)</script>',
  '../../../etc/passwd', '\u0000\' OR 1=1', 'NaN', 'Infinity', '-0', '1e309', 'null', 'true', '[]', '{}', 'SELECT * FROM api_keys',
];

export const NEVER_WRITABLE = ['id', 'org_id', 'mode', 'created_at', 'updated_at'];

/** Values of every JSON type, for wrong-type mutations. */
export const ANY_VALUES: unknown[] = [null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 31), '', 'text', '0', [], [1, 'a'], {}, { a: 1 }, [[[]]]];

/** NUL and lone surrogates: what no store keeps as given, so every string field must refuse them. */
export const unstorable = (v: string) => v.includes('\u0000') || /[\ud800-\udfff]/u.test(v);

/** The shared pattern of free-text fields (refusing what is unstorable). */
const isFreeText = (pattern: string | undefined) => pattern === undefined || pattern.startsWith('^[^\\u0000');

const safeString = (s: Schema) => fc.string({ unit: 'grapheme', minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 40) })
  .filter((v) => !unstorable(v) && v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? Infinity));

/** Values a schema accepts (patterns and formats fall back to the documented example). */
export function valid(schema: Schema, field = ''): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((b: Schema) => valid(b, field)));
  switch ([schema.type].flat()[0]) {
    case 'string':
      if (schema.format === 'email') return fc.emailAddress().filter((e) => e.length <= (schema.maxLength ?? 254));
      if (schema.format || !isFreeText(schema.pattern)) return fc.constant(exampleOf(schema, field));
      return safeString(schema);
    case 'integer': return fc.integer({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9 });
    case 'number': return fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
    case 'boolean': return fc.boolean();
    case 'null': return fc.constant(null);
    case 'array': {
      const items = valid(schema.items ?? {});
      const constraints = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) };
      return schema.uniqueItems ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) }) : fc.array(items, constraints);
    }
    case 'object': {
      const properties: Record<string, Schema> = schema.properties ?? {};
      const shape = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, valid(v, k)]));
      return fc.record(shape, { requiredKeys: schema.required ?? [] });
    }
    default: return fc.constant(exampleOf(schema, field));
  }
}

/** The kinds of body mutation; every run sends each that applies to a route (hostile-cases.ts). */
export type Family = 'valid' | 'never-writable field' | 'unknown field' | 'not an object' | 'deep nesting' | 'truncated'
  | 'prototype pollution' | 'wrong content type' | 'wrong type' | 'duplicate key' | 'missing required field' | 'huge string'
  | 'unicode edge' | 'injection' | 'bound';

export interface HostileBody {
  /** The kind of mutation. */
  family: Family;
  /** What was done, for failure messages. */
  kind: string;
  /** The body text sent. */
  payload: string;
  contentType?: string;
  /** True when the service must refuse it (any 4xx). */
  mustRefuse: boolean;
  /** A never-writable field the body carries, if any. */
  forbiddenField?: string;
}

export const asJson = (family: Family, kind: string, body: unknown, mustRefuse: boolean, extra: Partial<HostileBody> = {}): HostileBody =>
  ({ family, kind, payload: JSON.stringify(body), mustRefuse, ...extra });

export function nested(depth: number, array: boolean): string {
  return array ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

export const WRONG_CONTENT_TYPES = ['text/plain', 'application/xml', 'text/html', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream', 'application/json-patch+json', 'json'];
export const NOT_OBJECTS: unknown[] = [null, [], [{}], 'body', 42, true, '{}'];
export const POLLUTIONS = ['{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}'];
export const NEVER_WRITABLE_VALUES: unknown[] = ['x', 1, null, 'org_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', 'live', 'test'];

/** `body` with the raw text of a pollution object's key in front of its own keys. */
export const polluted = (body: Record<string, unknown>, raw: string) => `${raw.slice(0, -1)},${JSON.stringify(body).slice(1)}`.replace(/,}$/, '}');

export function withKey(body: Record<string, unknown>, key: string, rawValue: string): string {
  const text = JSON.stringify(body);
  const inner = text.slice(1, -1);
  return `{${inner}${inner ? ',' : ''}${JSON.stringify(key)}:${rawValue}}`;
}

/** Values at and just past the bounds a schema declares, each with whether it is out of bounds. */
export function boundaryValues(schema: Schema): Array<[unknown, boolean]> {
  const out: Array<[unknown, boolean]> = [];
  for (const b of branches(schema)) {
    if (b.type === 'integer' || b.type === 'number') {
      if (b.minimum !== undefined) out.push([b.minimum, false], [b.minimum - 1, true]);
      if (b.maximum !== undefined) out.push([b.maximum, false], [b.maximum + 1, true]);
      if (b.type === 'integer') out.push([1.5, true]);
      out.push([2 ** 53, b.maximum !== undefined && b.maximum < 2 ** 53], [-0, b.minimum !== undefined && b.minimum > 0]);
    }
    if (b.type === 'string') {
      if (b.maxLength !== undefined) out.push(['m'.repeat(b.maxLength), false], ['m'.repeat(b.maxLength + 1), true]);
      if ((b.minLength ?? 0) > 0) out.push(['m'.repeat(b.minLength - 1), true]);
    }
    if (b.type === 'array' && b.items) {
      const item = exampleOf(b.items);
      if (b.maxItems !== undefined && !b.uniqueItems) out.push([Array(b.maxItems + 1).fill(item), true]);
      if ((b.minItems ?? 0) > 0) out.push([[], true]);
    }
  }
  return out;
}

/**
 * One mutation of a valid body. `references` holds real ids for the reference fields, so that a
 * refusal is about the mutation, not about a missing object.
 */
export function hostileBody(schema: Schema, references: Record<string, unknown>): fc.Arbitrary<HostileBody> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const fields = Object.keys(properties);
  const required: string[] = schema.required ?? [];
  const plain = fields.filter((f) => !isReference(f));
  const strings = plain.filter((f) => stringBranch(properties[f]));
  const base = (valid(schema) as fc.Arbitrary<Record<string, unknown>>).map((generated) => {
    const b = { ...generated };
    for (const [field, id] of Object.entries(references)) if (field in b || required.includes(field)) b[field] = id;
    return b;
  });
  const pick = (names: string[]) => fc.constantFrom(...names);
  const mutations: Array<fc.Arbitrary<HostileBody>> = [
    base.map((b) => asJson('valid', 'valid', b, false)),
    fc.tuple(base, fc.constantFrom(...NEVER_WRITABLE.filter((f) => !fields.includes(f))), fc.constantFrom(...NEVER_WRITABLE_VALUES))
      .map(([b, f, v]) => asJson('never-writable field', `never-writable ${f}`, { ...b, [f]: v }, true, { forbiddenField: f })),
    fc.tuple(base, fc.string({ minLength: 1, maxLength: 20 }).filter((k) => !fields.includes(k) && k !== '__proto__'), fc.jsonValue({ maxDepth: 2 }))
      .map(([b, k, v]) => asJson('unknown field', `unknown field ${JSON.stringify(k)}`, { ...b, [k]: v }, true)),
    fc.constantFrom(...NOT_OBJECTS).map((v) => asJson('not an object', 'not an object', v, true)),
    fc.tuple(base, fc.integer({ min: 2, max: 60_000 }), fc.boolean()).map(([b, depth, array]) => ({ family: 'deep nesting' as const, kind: `nesting ${depth}`, payload: withKey(b, fields[0] ?? 'x', nested(depth, array)), mustRefuse: true })),
    fc.tuple(base, fc.nat()).map(([b, cut]) => {
      const text = JSON.stringify(b);
      // Cut after its first character at least: an empty body is no body (route-rules.ts), not a truncated one.
      return { family: 'truncated' as const, kind: 'truncated', payload: text.slice(0, Math.max(1, cut % text.length)), mustRefuse: true };
    }),
    fc.tuple(base, fc.constantFrom(...POLLUTIONS)).map(([b, raw]) => ({ family: 'prototype pollution' as const, kind: 'prototype pollution', payload: polluted(b, raw), mustRefuse: true })),
    fc.tuple(base, fc.constantFrom(...WRONG_CONTENT_TYPES)).map(([b, type]) => asJson('wrong content type', `content type ${type}`, b, true, { contentType: type })),
  ];
  if (fields.length > 0) {
    mutations.push(
      fc.tuple(base, pick(fields), fc.constantFrom(...ANY_VALUES)).filter(([, f, v]) => !acceptedTypes(properties[f]).has(typeOf(v)))
        .map(([b, f, v]) => asJson('wrong type', `wrong type for ${f}`, { ...b, [f]: v }, true)),
      fc.tuple(base, pick(fields), fc.constantFrom(...ANY_VALUES)).map(([b, f, v]) => ({ family: 'duplicate key' as const, kind: `duplicate key ${f}`, payload: withKey(b, f, JSON.stringify(v)), mustRefuse: false })),
    );
  }
  if (required.length > 0) {
    mutations.push(fc.tuple(base, pick(required)).map(([b, f]) => {
      const copy = { ...b };
      delete copy[f];
      return asJson('missing required field', `missing ${f}`, copy, true);
    }));
  }
  if (strings.length > 0) {
    mutations.push(
      fc.tuple(base, pick(strings), fc.integer({ min: 1_001, max: 700_000 }), fc.constantFrom('a', 'é', '😀', '\u202e'))
        .map(([b, f, n, c]) => asJson('huge string', `huge string in ${f}`, { ...b, [f]: c.repeat(Math.ceil(n / c.length)) }, (stringBranch(properties[f])!.maxLength ?? Infinity) < n)),
      fc.tuple(base, pick(strings), fc.constantFrom(...UNICODE_EDGES))
        .map(([b, f, v]) => asJson('unicode edge', `unicode edge in ${f}`, { ...b, [f]: v }, unstorable(v))),
      fc.tuple(base, pick(strings), fc.constantFrom(...INJECTIONS)).map(([b, f, v]) => asJson('injection', `injection in ${f}`, { ...b, [f]: v }, unstorable(v))),
    );
  }
  const bounded = plain.flatMap((f) => boundaryValues(properties[f]).map(([v, out]) => [f, v, out] as const));
  if (bounded.length > 0) {
    mutations.push(fc.tuple(base, fc.constantFrom(...bounded)).map(([b, [f, v, out]]) => asJson('bound', `bound of ${f}`, { ...b, [f]: v }, out)));
  }
  return fc.oneof(...mutations);
}

/** Raw query values (already encoded, some wrongly on purpose). */
export const RAW_QUERY_VALUES = ['', '0', '-1', '1', '200', '201', '1000001', '1e2', '0x10', '1.5', 'NaN', 'true', 'null', '[]', '%00', '%zz', '%', '%E2%80%AE', '%F0%9F%98%80', '%ED%A0%80', '%C0%AF', '..%2F..%2F'];
/** Query keys that are not plain parameter names: array and object forms of `k`, and odd names. */
export const QUERY_KEY_FORMS = (k: string) => [`${k}[]`, `${k}[0]`, `${k}[a]`];
export const ODD_QUERY_KEYS = ['__proto__', 'constructor', 'unknown', ''];
export const JUNK_QUERIES = ['&&&', '=', '==', '?', '#', 'a', ';', '&=&'];

/** A hostile query string for a route's documented query parameters (raw, not re-encoded). */
export function hostileQuery(parameters: Array<{ name: string; schema: Schema }>): fc.Arbitrary<{ kind: string; query: string }> {
  const names = parameters.map((p) => p.name);
  const known = names.length > 0 ? fc.constantFrom(...names) : fc.constant('limit');
  const rawValue = fc.oneof(
    fc.constantFrom(...RAW_QUERY_VALUES),
    fc.constantFrom(...INJECTIONS).map(encodeURIComponent),
    fc.integer({ min: 1, max: 20_000 }).map((n) => 'q'.repeat(n)),
    fc.string({ maxLength: 30 }).map(encodeURIComponent),
    ...parameters.map((p) => fc.constant(encodeURIComponent(String(exampleOf(p.schema, p.name))))),
  );
  const pair = fc.tuple(
    fc.oneof(known, known.chain((k) => fc.constantFrom(...QUERY_KEY_FORMS(k))), fc.constantFrom(...ODD_QUERY_KEYS), fc.string({ maxLength: 10 }).map(encodeURIComponent)),
    rawValue,
  ).map(([k, v]) => `${k}=${v}`);
  return fc.oneof(
    fc.array(pair, { minLength: 1, maxLength: 6 }).map((pairs) => ({ kind: 'pairs', query: pairs.join('&') })),
    fc.tuple(known, rawValue, rawValue).map(([k, a, b]) => ({ kind: `repeated ${k}`, query: `${k}=${a}&${k}=${b}` })),
    fc.constantFrom(...JUNK_QUERIES).map((q) => ({ kind: 'junk', query: q })),
  );
}

/** Ids that are not ids: traversal, encodings, injection, huge, unicode. */
export const HOSTILE_IDS = [
  '', ' ', '..', '%2e%2e', '..%2F..%2Fetc%2Fpasswd', '%00', 'lst_%00', '%ED%A0%80', '%E2%80%AE', encodeURIComponent("' OR '1'='1"),
  encodeURIComponent('1; DROP TABLE lists'), 'x'.repeat(65), 'x'.repeat(5_000), 'null', 'undefined', '0', '-1', '1e309', '__proto__',
  'constructor', encodeURIComponent('{"$ne":null}'), encodeURIComponent('😀'), '%', '%zz', 'a%2Fb', 'a;b', encodeURIComponent('<script>'),
];
