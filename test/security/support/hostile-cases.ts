// The enumerated part of the hostile-input suite: for a route's request schema, every kind of body
// mutation (hostile.ts) at least once and every boundary value of every field; for its query
// parameters, every bound, key form and raw value. Derived from the OpenAPI schemas only, so a new or
// changed route is covered as soon as it is declared. The random part (fast-check) runs on top.
import type { Schema } from './api.ts';
import {
  ANY_VALUES, asJson, boundaryValues, INJECTIONS, JUNK_QUERIES, nested, NEVER_WRITABLE, NEVER_WRITABLE_VALUES, NOT_OBJECTS,
  ODD_QUERY_KEYS, polluted, POLLUTIONS, QUERY_KEY_FORMS, RAW_QUERY_VALUES, UNICODE_EDGES, unstorable, withKey, WRONG_CONTENT_TYPES,
  type Family, type HostileBody,
} from './hostile.ts';
import { acceptedTypes, exampleOf, isReference, stringBranch, typeOf, type JsonType } from './schema-values.ts';

type Body = Record<string, unknown>;

/** The mutation kinds that apply to a schema (each needs fields, required fields or strings). */
export function familiesFor(schema: Schema): Family[] {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const fields = Object.keys(properties);
  const plain = fields.filter((f) => !isReference(f));
  const out: Family[] = ['valid', 'never-writable field', 'unknown field', 'not an object', 'deep nesting', 'truncated', 'prototype pollution', 'wrong content type'];
  if (fields.length > 0) out.push('wrong type', 'duplicate key');
  if ((schema.required ?? []).length > 0) out.push('missing required field');
  if (plain.some((f) => stringBranch(properties[f]))) out.push('huge string', 'unicode edge', 'injection');
  if (plain.some((f) => boundaryValues(properties[f]).length > 0)) out.push('bound');
  return out;
}

/** One value of each JSON type, the first of ANY_VALUES of that type. */
const ONE_OF_EACH_TYPE = new Map<JsonType, unknown>();
for (const value of ANY_VALUES) if (!ONE_OF_EACH_TYPE.has(typeOf(value))) ONE_OF_EACH_TYPE.set(typeOf(value), value);

/**
 * Every enumerated body for a schema. `base` makes a valid body (a new one each call, so fields
 * that must be unique stay unique); the mutations are applied to it.
 */
export function enumeratedBodies(schema: Schema, base: () => Promise<Body>): Array<() => Promise<HostileBody>> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const fields = Object.keys(properties);
  const required: string[] = schema.required ?? [];
  const plain = fields.filter((f) => !isReference(f));
  const strings = plain.filter((f) => stringBranch(properties[f]));
  const cases: Array<() => Promise<HostileBody>> = [];
  const add = (make: (b: Body) => HostileBody) => cases.push(async () => make(await base()));
  const rotate = <T>(items: T[], i: number) => items[i % items.length];

  add((b) => asJson('valid', 'valid', b, false));
  NEVER_WRITABLE.filter((f) => !fields.includes(f)).forEach((f, i) =>
    add((b) => asJson('never-writable field', `never-writable ${f}`, { ...b, [f]: rotate(NEVER_WRITABLE_VALUES, i) }, true, { forbiddenField: f })));
  for (const key of ['unknown_field', `${fields[0] ?? 'x'}_`, (fields[0] ?? 'x').toUpperCase(), '', 'ü']) {
    if (!fields.includes(key)) add((b) => asJson('unknown field', `unknown field ${JSON.stringify(key)}`, { ...b, [key]: 1 }, true));
  }
  for (const value of NOT_OBJECTS) add(() => asJson('not an object', `not an object: ${JSON.stringify(value)}`, value, true));
  for (const depth of [2, 60_000]) {
    for (const array of [false, true]) add((b) => ({ family: 'deep nesting', kind: `nesting ${depth} ${array ? 'arrays' : 'objects'}`, payload: withKey(b, fields[0] ?? 'x', nested(depth, array)), mustRefuse: true }));
  }
  for (const part of [0.1, 0.5, 0.99]) {
    add((b) => {
      const text = JSON.stringify(b);
      return { family: 'truncated', kind: `truncated at ${part}`, payload: text.slice(0, Math.max(1, Math.floor(text.length * part))), mustRefuse: true };
    });
  }
  for (const raw of POLLUTIONS) add((b) => ({ family: 'prototype pollution', kind: `prototype pollution ${raw}`, payload: polluted(b, raw), mustRefuse: true }));
  for (const type of WRONG_CONTENT_TYPES) add((b) => asJson('wrong content type', `content type ${type}`, b, true, { contentType: type }));
  fields.forEach((f, i) => {
    for (const [type, value] of ONE_OF_EACH_TYPE) {
      if (!acceptedTypes(properties[f]).has(type)) add((b) => asJson('wrong type', `wrong type for ${f}: ${type}`, { ...b, [f]: value }, true));
    }
    add((b) => ({ family: 'duplicate key', kind: `duplicate key ${f}`, payload: withKey(b, f, JSON.stringify(rotate(ANY_VALUES, i))), mustRefuse: false }));
  });
  for (const f of required) {
    add((b) => {
      const copy = { ...b };
      delete copy[f];
      return asJson('missing required field', `missing ${f}`, copy, true);
    });
  }
  strings.forEach((f, i) => {
    const max = stringBranch(properties[f])!.maxLength;
    const length = max === undefined ? 700_000 : max + 1;
    const char = rotate(['a', 'é', '😀', '\u202e'], i);
    add((b) => asJson('huge string', `huge string in ${f} (${length})`, { ...b, [f]: char.repeat(length) }, max !== undefined));
  });
  if (strings.length > 0) {
    UNICODE_EDGES.forEach((v, i) => add((b) => asJson('unicode edge', `unicode edge ${JSON.stringify(v)} in ${rotate(strings, i)}`, { ...b, [rotate(strings, i)]: v }, unstorable(v))));
    INJECTIONS.forEach((v, i) => add((b) => asJson('injection', `injection ${JSON.stringify(v)} in ${rotate(strings, i)}`, { ...b, [rotate(strings, i)]: v }, unstorable(v))));
  }
  for (const f of plain) {
    for (const [value, out] of boundaryValues(properties[f])) {
      const shown = typeof value === 'string' ? `${value.length} characters` : Array.isArray(value) ? `${value.length} items` : String(value);
      add((b) => asJson('bound', `bound of ${f}: ${shown}`, { ...b, [f]: value }, out));
    }
  }
  return cases;
}

export interface HostileQuery {
  kind: string;
  query: string;
  /** Out of a documented bound: must be refused (400 or 422). */
  mustRefuse: boolean;
}

/** Every enumerated query string for a route's documented query parameters. */
export function enumeratedQueries(parameters: Array<{ name: string; schema: Schema }>): HostileQuery[] {
  const names = parameters.length > 0 ? parameters.map((p) => p.name) : ['limit'];
  const out: HostileQuery[] = [];
  const rotate = (i: number) => names[i % names.length];
  for (const p of parameters) {
    for (const [value, refuse] of boundaryValues(p.schema)) {
      if (typeof value === 'number' || typeof value === 'string') out.push({ kind: `bound of ${p.name}`, query: `${p.name}=${encodeURIComponent(String(value))}`, mustRefuse: refuse });
    }
    const example = encodeURIComponent(String(exampleOf(p.schema, p.name)));
    out.push({ kind: `repeated ${p.name}`, query: `${p.name}=${example}&${p.name}=${example}`, mustRefuse: false });
    for (const key of QUERY_KEY_FORMS(p.name)) out.push({ kind: `key form ${key}`, query: `${encodeURIComponent(key)}=${example}`, mustRefuse: false });
  }
  RAW_QUERY_VALUES.forEach((v, i) => out.push({ kind: `raw value ${v}`, query: `${rotate(i)}=${v}`, mustRefuse: false }));
  INJECTIONS.forEach((v, i) => out.push({ kind: `injection ${v}`, query: `${rotate(i)}=${encodeURIComponent(v)}`, mustRefuse: false }));
  for (const key of ODD_QUERY_KEYS) out.push({ kind: `odd key ${JSON.stringify(key)}`, query: `${encodeURIComponent(key)}=1`, mustRefuse: false });
  for (const junk of JUNK_QUERIES) out.push({ kind: `junk ${junk}`, query: junk, mustRefuse: false });
  out.push({ kind: 'huge value', query: `${names[0]}=${'q'.repeat(20_000)}`, mustRefuse: false });
  return out;
}
