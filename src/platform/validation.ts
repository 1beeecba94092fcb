// Request validation. Bodies are validated strictly (no type coercion, unknown fields refused) so
// that a wrong type is an error rather than a silent conversion; query strings and path parameters
// are coerced from text as usual. Ajv errors become the spec's shapes: missing required fields and
// invalid enumeration values are 400 with a message, everything else is 422 `[{loc, msg, type}]`;
// either names the field at fault in `param` when there is one (errors.ts).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { AppError, malformedCursor, validationError, type FieldError } from './errors.ts';
import { HTTP_URL, isHttpUrl, NOT_HTTP_URL } from './http-url.ts';
import { NO_NUL } from './schemas.ts';
import { ianaZone, NOT_A_TIME_ZONE, TIME_ZONE } from './time/zones.ts';

function makeAjv(coerceTypes: boolean | 'array') {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: false,
    unicodeRegExp: true,
  });
  (addFormats as unknown as (a: Ajv, f: string[]) => void)(ajv, ['email', 'uri', 'date', 'date-time']);
  ajv.addFormat(HTTP_URL, { type: 'string', validate: isHttpUrl });
  ajv.addFormat(TIME_ZONE, { type: 'string', validate: (v: string) => ianaZone(v) !== undefined });
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv('array');

/**
 * A route's validator, compiled by Ajv when it first validates (like the serializers, see
 * serializers.ts: a process compiles only what it is asked). Its `errors` are the last call's.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown): boolean => {
    compiled ??= ajv.compile(schema as object);
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate;
};

const LOC: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

const MESSAGES: Record<string, (e: ErrorObject) => [string, string]> = {
  type: (e) => [`Input should be a valid ${e.params.type}`, `${e.params.type}_type`],
  format: (e) => (e.params.format === 'email' ? ['value is not a valid email address', 'value_error.email']
    : e.params.format === HTTP_URL ? [NOT_HTTP_URL, 'value_error.url']
      : e.params.format === TIME_ZONE ? [NOT_A_TIME_ZONE, 'value_error.timezone'] : [`value is not a valid ${e.params.format}`, `value_error.${e.params.format}`]),
  maxLength: (e) => [`String should have at most ${e.params.limit} characters`, 'string_too_long'],
  minLength: (e) => [`String should have at least ${e.params.limit} characters`, 'string_too_short'],
  maximum: (e) => [`Input should be less than or equal to ${e.params.limit}`, 'less_than_equal'],
  minimum: (e) => [`Input should be greater than or equal to ${e.params.limit}`, 'greater_than_equal'],
  maxItems: (e) => [`List should have at most ${e.params.limit} items`, 'too_long'],
  minItems: (e) => [`List should have at least ${e.params.limit} items`, 'too_short'],
  // Every text refuses NUL and lone surrogates (schemas.ts); a pattern of a field's own says what it wants.
  pattern: (e) => [e.params.pattern === NO_NUL ? 'String contains characters that are not allowed' : `String should match pattern '${e.params.pattern}'`, 'string_pattern_mismatch'],
  additionalProperties: () => ['Extra inputs are not permitted', 'extra_forbidden'],
  uniqueItems: () => ['List items should be unique', 'unique_items'],
  const: (e) => [`Input should be ${JSON.stringify(e.params.allowedValue)}`, 'literal_error'],
  anyOf: () => ['Input does not match any allowed shape', 'union_error'],
  minProperties: () => ['At least one field is required', 'missing'],
};

function fieldPath(e: ErrorObject): string[] {
  const path = e.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (e.keyword === 'required') path.push(String(e.params.missingProperty));
  if (e.keyword === 'additionalProperties') path.push(String(e.params.additionalProperty));
  return path;
}

/** Per-route messages for the spec's named 400s, set in a route's `config.messages`. */
export interface RouteMessages {
  required?: Record<string, string>;
  enum?: Record<string, string>;
}

export function toValidationError(errors: ErrorObject[], part: string, messages: RouteMessages = {}): AppError {
  const where = LOC[part] ?? part;
  // A `cursor` is opaque: anything but one as issued is 400 (the specification), never a 422 about
  // its type or length (given twice, it is a list).
  if (where === 'query' && errors.some((e) => fieldPath(e)[0] === 'cursor')) return malformedCursor();
  for (const e of errors) {
    const path = fieldPath(e);
    const field = path.join('.');
    if (e.keyword === 'required' && path.length === 1) {
      return new AppError('bad_request', messages.required?.[field] ?? `${field} is required`, { param: field });
    }
    if (e.keyword === 'enum') {
      const allowed = (e.params.allowedValues as unknown[]).join(', ');
      return new AppError('bad_request', messages.enum?.[field] ?? `Invalid ${field || where}: must be one of ${allowed}`, field ? { param: field } : {});
    }
  }
  // A nullable field reports a failure for each branch of its union: keep the branch that says
  // what is wrong with the value given, not "should be null" or "matches no branch".
  const isNullBranch = (e: ErrorObject) => e.keyword === 'type' && e.params.type === 'null';
  const specific = new Set(errors.filter((e) => e.keyword !== 'anyOf' && !isNullBranch(e)).map((e) => e.instancePath));
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of errors) {
    if (isNullBranch(e) || (e.keyword === 'anyOf' && specific.has(e.instancePath))) continue;
    const [msg, type] = MESSAGES[e.keyword]?.(e) ?? [e.message ?? 'Invalid value', e.keyword];
    const loc = [where, ...fieldPath(e)];
    const key = `${loc.join('\u0001')}|${type}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ loc, msg, type });
  }
  return validationError(out);
}

const members = new WeakMap<object, ValidateFunction>();
/**
 * Checks one member of a body against a schema known only once the rest is read (a connection's
 * settings, whose shape its provider names): refused as the body's own validation refuses, the
 * errors under the member (`body.settings.smtp.port`).
 */
export function checkBodyMember(schema: object, value: unknown, member: string): void {
  let validate = members.get(schema);
  if (!validate) members.set(schema, validate = bodyAjv.compile(schema));
  if (!validate(value)) throw toValidationError(validate.errors!.map((e) => ({ ...e, instancePath: `/${member}${e.instancePath}` })), 'body');
}
