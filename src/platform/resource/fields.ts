// Field kinds: each field of a resource is built from one of these small constructors, which give its
// input and output schemas (with description and example), its column and its row <-> API mapping.
import { Type, type TSchema } from 'typebox';
import { parseJson } from '../../db/sql.ts';
import { HTTP_URL } from '../http-url.ts';
import { ianaZone, TIME_ZONE } from '../time/zones.ts';
import { Email, Nullable, Str, StringEnum, Tags } from '../schemas.ts';

export type OnDelete = 'restrict' | 'cascade' | 'set null';

export interface Field {
  /** What the field holds; filters and search read it to know which comparisons fit. */
  kind: 'text' | 'int' | 'decimal' | 'money' | 'enum' | 'email' | 'url' | 'tags' | 'ref' | 'json' | 'timestamp' | 'boolean' | 'secret' | 'sealed';
  description: string;
  /** The schema of a value sent by a client (without null; see `nullable`). */
  input: TSchema;
  /** The schema of the value the API answers. */
  output: TSchema;
  /** Needed on create (else 400 `<field> is required`, or the resource's message). */
  required: boolean;
  /** A client may send null to clear it; the API may answer null. */
  nullable: boolean;
  /** Answered but never written by a client (computed or maintained by the service). */
  readOnly: boolean;
  /** Written on create, never changed by an update. */
  createOnly: boolean;
  /** The value of a create that does not give one. */
  default: unknown;
  /** Unique within the tenant (null excepted): a second holder is 409 naming the first. */
  unique: boolean;
  /** API value -> column value. */
  toRow: (value: unknown) => unknown;
  /** Column value -> API value. */
  fromRow: (value: unknown) => unknown;
  /** For `ref` fields: the referenced table and what deleting its row does to this one. */
  ref?: { table: string; onDelete: OnDelete; check: boolean };
  /** For `enum` fields: the values. */
  values?: readonly string[];
  /** For `secret` fields: how the secret is made, kept and rotated (secrets.ts). */
  secret?: SecretSpec;
  /**
   * Written by clients and never answered (`sealed` fields: credentials): the kernel seals the value
   * before the write (sealed-fields.ts) and answers only whether one is set, as `<field>_set`.
   */
  sealed?: { answeredAs: string };
}

/**
 * A secret the service makes (a signing secret; next write keys, provider credentials): generated on
 * create and answered only by the create and by its rotation (`POST /<plural>/{id}/rotate-<field>`),
 * never by reads, lists, events or logs.
 */
export interface SecretSpec {
  /** A new secret, as the client is shown it once. */
  generate: () => string;
  /** `plain` when the service itself uses the secret (to sign), `hash` (its SHA-256) when it only compares one presented. */
  store: 'plain' | 'hash';
  /** A rotation keeps the previous secret usable for `seconds` (in `column`, until the unix time in `untilColumn`), so its users can switch. */
  previous?: { column: string; untilColumn: string; seconds: number };
  /** The rotation route's texts; without them the secret cannot be rotated. */
  rotate?: { summary: string; description: string };
}

interface Common {
  description: string;
  example?: unknown;
  required?: boolean;
  nullable?: boolean;
  readOnly?: boolean;
  createOnly?: boolean;
  default?: unknown;
  unique?: boolean;
}

const same = (v: unknown) => v;
const numeric = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const asJson = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
const fromJson = (v: unknown) => (v === null || v === undefined ? null : parseJson(v));

function field(kind: Field['kind'], o: Common, input: TSchema, output: TSchema, map: Partial<Pick<Field, 'toRow' | 'fromRow'>> = {}): Field {
  const nullable = o.nullable ?? !o.required;
  return {
    kind, description: o.description, input, output: nullable ? Nullable(output) : output,
    required: o.required ?? false, nullable, readOnly: o.readOnly ?? false, createOnly: o.createOnly ?? false,
    default: o.default ?? (nullable ? null : undefined), unique: o.unique ?? false,
    toRow: map.toRow ?? same, fromRow: map.fromRow ?? same,
  };
}

const doc = (o: Common) => ({ description: o.description, ...(o.example === undefined ? {} : { examples: [o.example] }) });

export const text = (o: Common & { max?: number; min?: number }) =>
  field('text', o, Str({ ...doc(o), maxLength: o.max ?? 200, ...(o.min ? { minLength: o.min } : {}) }), Type.String(doc(o)));

export const email = (o: Common) =>
  field('email', o, Email(o.description, o.example as string | undefined), Type.String(doc(o)), {
    toRow: (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
  });

/** A link a person may open: only an absolute http(s) URL (http-url.ts); `javascript:` and the like are 422. */
export const url = (o: Common & { max?: number }) =>
  field('url', o, Str({ ...doc(o), maxLength: o.max ?? 500, format: HTTP_URL }), Type.String(doc(o)));

/**
 * An IANA time zone name (`Europe/Berlin`), in which a record's hours are read: an unknown name or an
 * offset (`+02:00`, which ignores daylight saving) is 422; stored as the zone data names it.
 */
export const timeZone = (o: Common) =>
  field('text', o, Str({ ...doc(o), maxLength: 64, format: TIME_ZONE }), Type.String(doc(o)), { toRow: (v) => (typeof v === 'string' ? ianaZone(v) ?? v : v) });

export const int = (o: Common & { min?: number; max?: number }) =>
  field('int', o, Type.Integer({ ...doc(o), minimum: o.min ?? 0, maximum: o.max ?? Number.MAX_SAFE_INTEGER }), Type.Integer(doc(o)), { fromRow: numeric });

/** A number with a fractional part (a percentage, say), stored as a double: it reads back as the same JSON number. */
export const decimal = (o: Common & { min?: number; max?: number }) =>
  field('decimal', o, Type.Number({ ...doc(o), minimum: o.min ?? 0, maximum: o.max ?? Number.MAX_SAFE_INTEGER }), Type.Number(doc(o)), { fromRow: numeric });

/** An amount in integer minor units (cents). */
export const money = (o: Common) =>
  field('money', o, Type.Integer({ ...doc(o), minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.Integer(doc(o)), { fromRow: numeric });

export const timestamp = (o: Common) =>
  field('timestamp', o, Type.Integer({ ...doc(o), minimum: 0, maximum: 1e11 }), Type.Integer(doc(o)), { fromRow: numeric });

export const boolean = (o: Common) =>
  field('boolean', o, Type.Boolean(doc(o)), Type.Boolean(doc(o)), {
    toRow: (v) => (v === null || v === undefined ? v : v ? 1 : 0),
    fromRow: (v) => (v === null || v === undefined ? null : Boolean(v)),
  });

export const enumOf = <const T extends readonly string[]>(values: T, o: Common) => ({
  ...field('enum', o, StringEnum(values, doc(o)), StringEnum(values, doc(o))),
  values,
});

export const tags = (o: Partial<Common> = {}) =>
  field('tags', { description: 'Free-form labels', nullable: false, default: [], ...o }, Tags,
    Type.Array(Type.String(), { description: o.description ?? 'Free-form labels', examples: [o.example ?? ['vip']] }),
    { toRow: asJson, fromRow: (v) => fromJson(v) ?? [] });

/** Any JSON value with its own schemas. */
export const json = (o: Common & { input: TSchema; output: TSchema }) =>
  field('json', o, o.input, o.output, { toRow: asJson, fromRow: fromJson });

/** A secret made by the service (see SecretSpec): never written by a client, answered only when made. */
export const secret = (o: { description: string; example: string } & SecretSpec) => ({
  ...field('secret', { description: o.description, example: o.example, readOnly: true, nullable: false }, Type.String(doc(o)), Type.String(doc(o))),
  secret: { generate: o.generate, store: o.store, previous: o.previous, rotate: o.rotate },
});

/**
 * A value the client writes and the service reads back, but no answer ever carries (provider
 * credentials): sealed under SECRET_KEY before it is stored (sealing.ts), answered only as the
 * boolean `<name>_set`. `name` is the field's own name, for that answer.
 */
export const sealed = (name: string, o: Common & { input: TSchema }) => ({
  ...field('sealed', o, o.input, Type.Boolean({ description: `Whether ${name} are set (they are never answered)`, examples: [true] }), {
    fromRow: (v) => v !== null && v !== undefined,
  }),
  output: Type.Boolean({ description: `Whether ${name} are set (they are never answered)`, examples: [true] }),
  sealed: { answeredAs: `${name}_set` },
});

/** The id of a record of another resource of the same tenant (checked on write: 404 when absent). */
export const ref = (table: string, o: Common & { onDelete: OnDelete; prefix: string; check?: boolean }) => ({
  ...field('ref', o, Str({ ...doc({ ...o, example: o.example ?? `${o.prefix}_01JD8X4M6R2T9Q3V5W7Y8Z0A1B` }), maxLength: 64 }),
    Type.String(doc({ ...o, example: o.example ?? `${o.prefix}_01JD8X4M6R2T9Q3V5W7Y8Z0A1B` }))),
  // `check: false` when the group's own hook checks the reference (with more than its existence).
  ref: { table, onDelete: o.onDelete, check: o.check ?? true },
});
