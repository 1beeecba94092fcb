// Completes the OpenAPI document @fastify/swagger generates from the route schemas, in one place, so
// that every route (a group's own, the kernel's, one added tomorrow) is documented alike:
// - schemas with a `title` become named components (`Contact`, `ContactCreate`, `ContactList`, …)
//   referenced with `$ref`; request and success bodies still unnamed get one from their operationId;
// - every error status is the `Error` shape narrowed to the `type`s that status carries, one named
//   component per status (`NotFoundError`, `ConflictError`, …; 422: `ValidationError` or
//   `IdempotencyConflictError`), from the one mapping of errors.ts;
// - the statuses the platform answers for any route (auth, scopes, rate limit, body and header
//   limits, Idempotency-Key in flight, …), the headers it sends (`X-Request-Id`, `X-RateLimit-*`,
//   `Retry-After`, `Idempotent-Replayed`) and the `Idempotency-Key` request header on writes;
// - `text/event-stream` answers, and the webhook payloads (one per event type).
// Route facts the document cannot show (public or not) arrive in the `x-route` marker set by the
// per-route transform (openapi.ts), and are removed here.
import { ERROR_TYPES, typesOfStatus } from './errors.ts';
import { EVENT_TYPES } from './event-types.ts';
import { ERROR_DESCRIPTIONS, pascal } from './schemas.ts';

type Json = Record<string, unknown>;
type Operation = Json & { operationId?: string; parameters?: Json[]; requestBody?: Json; responses: Record<string, Json> };

/** The per-route facts the transform passes on (openapi.ts). */
export interface RouteFacts {
  public: boolean;
  /** The statuses a public route answers though it takes no key: 403 (an origin refused), 401 (a signature). */
  refuses?: number[];
  /** Request bodies the route parses itself, by media type (route config `parsedBodies`). */
  parsedBodies?: Record<string, { schema: unknown }>;
}
export const ROUTE_FACTS = 'x-route';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const WRITES = new Set(['post', 'put', 'patch', 'delete']);
const JSON_TYPE = 'application/json';
const EVENT_STREAM = 'text/event-stream';

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });


/** JSON with sorted keys: two schemas are the same shape when their canonical forms are equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (!isObject(value)) return JSON.stringify(value);
  return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
}

/** Keywords whose values are data, not subschemas. */
const DATA_KEYWORDS = new Set(['examples', 'example', 'enum', 'const', 'default', 'required']);

/** The named components of a document being completed: one name per shape. */
class Components {
  readonly schemas: Record<string, Json>;
  readonly #shapes = new Map<string, string>();

  constructor(schemas: Record<string, Json>) {
    this.schemas = schemas;
    for (const [name, schema] of Object.entries(schemas)) this.#shapes.set(name, this.#shapeOf(schema));
  }

  /** The shape regardless of the description of this use of it (a `$ref` may carry its own). */
  #shapeOf(schema: Json): string {
    const { description: _description, ...shape } = schema;
    return canonical(shape);
  }

  /** A reference to `schema` under `name` (or `name2`, … when another shape holds the name). */
  name(name: string, schema: Json): Json {
    const shape = this.#shapeOf(schema);
    let chosen = name;
    for (let n = 2; this.#shapes.has(chosen) && this.#shapes.get(chosen) !== shape; n++) chosen = `${name}${n}`;
    if (!this.schemas[chosen]) {
      this.schemas[chosen] = schema;
      this.#shapes.set(chosen, shape);
    }
    const description = schema.description;
    return description !== undefined && description !== this.schemas[chosen].description ? { ...schemaRef(chosen), description } : schemaRef(chosen);
  }

  /** Replaces, innermost first, every titled subschema of `schema` by a reference to its component. */
  hoist(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.hoist(s));
    if (!isObject(schema)) return schema;
    const out: Json = {};
    for (const [key, value] of Object.entries(schema)) out[key] = DATA_KEYWORDS.has(key) ? value : this.hoist(value);
    // A `properties` map may have a member named `title`: its value is a schema, never a string.
    return typeof out.title === 'string' && !('$ref' in out) ? this.name(pascal(out.title), out) : out;
  }
}


/**
 * Statuses whose stored answer a retry with the same Idempotency-Key may replay: what a handler
 * answered, not what the platform refused before claiming the key (auth, rate, body and header limits).
 */
const REFUSED_BEFORE_CLAIM = new Set(['401', '408', '413', '414', '415', '417', '429', '431']);
const REPLAYED = (status: string) => status.startsWith('2') || (status.startsWith('4') && !REFUSED_BEFORE_CLAIM.has(status));

const PARAM = { type: 'string', description: 'The one field of the request at fault, when there is one (`list_id`, `filters.0.value`, `cursor`)', examples: ['work_email'] };

const COMPONENT_SCHEMAS: Record<string, Json> = {
  FieldError: {
    type: 'object', required: ['loc', 'msg', 'type'], description: 'One field error of a 422',
    properties: {
      loc: { type: 'array', items: { type: 'string' }, description: 'Where the error is: body, query, path or header, then the field', examples: [['body', 'work_email']] },
      msg: { type: 'string', description: 'What is wrong', examples: ['value is not a valid email address'] },
      type: { type: 'string', description: 'Machine-readable error type', examples: ['value_error.email'] },
    },
  },
  Error: {
    type: 'object', required: ['type', 'detail'],
    description: 'An error: every 4xx and 5xx answer has this shape (a 422 of field errors is a `ValidationError`). Programs branch on `type`; `detail` is for people.',
    properties: {
      type: { type: 'string', enum: [...ERROR_TYPES], description: 'What kind of error this is: one of a closed set, stable across releases (new types may be added). Each response lists the types it may carry.', examples: ['not_found'] },
      detail: { type: 'string', description: 'What is wrong, for a person to read', examples: ['Contact not found'] },
      param: PARAM,
      scope: { type: 'string', description: 'On a 403 for a missing scope: the scope the key lacks', examples: ['contacts:write'] },
      missing: { type: 'array', items: { type: 'string' }, description: 'On the 409 of a deal entering a stage without the evidence it requires: the missing evidence keys', examples: [['budget_confirmed']] },
    },
  },
  ValidationError: {
    type: 'object', required: ['type', 'detail'], description: 'A 422: the body, query or path fails validation',
    properties: {
      type: { type: 'string', enum: ['validation_error'], description: 'Always `validation_error`' },
      detail: { type: 'array', items: schemaRef('FieldError'), description: 'Every field error' },
      param: { ...PARAM, description: 'The field at fault when every field error is about the same one: its `loc` after body, query or path, joined with dots' },
    },
  },
};

/** `not_found` → `NotFoundError`, `internal_error` → `InternalError`: the component of a status's error body. */
const errorComponentName = (type: string) => `${pascal(type.replace(/_error$/, ''))}Error`;

/**
 * The body of an error response of `status`: the `Error` shape narrowed to the types the status
 * carries (errors.ts), named after its first; a 422 is a `ValidationError` or such an error.
 */
function errorSchemaOf(status: number, components: Components): Json {
  const types = typesOfStatus(status);
  const sentences = types.filter((type) => type !== 'validation_error');
  const branches: Json[] = types.includes('validation_error') ? [schemaRef('ValidationError')] : [];
  if (sentences.length > 0) {
    branches.push(components.name(errorComponentName(sentences[0]), {
      description: `An error of type ${sentences.map((type) => `\`${type}\``).join(' or ')}`,
      allOf: [schemaRef('Error'), { type: 'object', required: ['type'], properties: { type: { type: 'string', enum: sentences } } }],
    }));
  }
  if (branches.length === 0) return schemaRef('Error');
  return branches.length === 1 ? branches[0] : { anyOf: branches };
}

const HEADERS: Record<string, Json> = {
  XRequestId: { description: 'The request id: the `X-Request-Id` the client sent (1 to 64 of `A-Za-z0-9_.:-`), else a new UUID', schema: { type: 'string', examples: ['5f0c6f1e-2a7d-4a39-9d3b-0c1e8f3a9b21'] } },
  XRateLimitLimitSecond: { description: 'Requests allowed per second (per organization; per client address without a valid key, and on public routes)', schema: { type: 'integer', examples: [50] } },
  XRateLimitLimitMinute: { description: 'Requests allowed per minute', schema: { type: 'integer', examples: [1000] } },
  XRateLimitRemaining: { description: 'Requests left in the current minute window', schema: { type: 'integer', examples: [999] } },
  XRateLimitReset: { description: 'When the minute window next frees a slot, unix seconds', schema: { type: 'integer', examples: [1767225660] } },
  RetryAfter: { description: 'Seconds to wait before retrying', schema: { type: 'integer', examples: [1] } },
  IdempotentReplayed: { description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
};
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit-Second': headerRef('XRateLimitLimitSecond'),
  'X-RateLimit-Limit-Minute': headerRef('XRateLimitLimitMinute'),
  'X-RateLimit-Remaining': headerRef('XRateLimitRemaining'),
  'X-RateLimit-Reset': headerRef('XRateLimitReset'),
};

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key', in: 'header', required: false,
  description: 'Makes the write safe to retry: the first request with a key runs and its answer is stored for 24 hours; a retry with the same key and the same request gets that answer again (`Idempotent-Replayed: true`), a retry while the first still runs gets 409, and the same key with a different request 422.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$', examples: ['6c1e2f0a-4b7d-4f3e-9a51-2d8c0b7e4f19'] },
};

const EVENT_STREAM_SCHEMA = {
  type: 'string',
  description: 'Server-Sent Events: for each event the lines `id: <event id>`, `event: <type>` and `data: <the event as JSON, an Event>`, then a blank line; `: ping` comment lines keep the connection open',
  examples: ['id: evt_01JD8X4M6R2T9Q3V5W7Y8Z0A1B\nevent: contact.created\ndata: {"id":"evt_01JD8X4M6R2T9Q3V5W7Y8Z0A1B","type":"contact.created","created_at":1767225600,"data":{"object":{"id":"con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B"}},"previous_attributes":null,"actor":null}\n\n'],
};

/** Every status the platform itself may answer for `method path`, with or without its handler. */
function platformStatuses(method: string, path: string, facts: RouteFacts): string[] {
  const statuses = ['400', '408', '417', '422', '429', '431', '500', '503'];
  if (!facts.public) statuses.push('401', '403');
  if (path.includes('{')) statuses.push('404', '414');
  if (WRITES.has(method)) statuses.push('413', '415');
  if (WRITES.has(method) && !facts.public) statuses.push('409');
  return statuses;
}

function completeResponses(op: Operation, method: string, path: string, facts: RouteFacts, components: Components): void {
  const responses = op.responses;
  if (facts.public) {
    for (const status of [401, 403]) if (!facts.refuses?.includes(status)) delete responses[String(status)];
  }
  for (const status of platformStatuses(method, path, facts)) responses[status] ??= { description: ERROR_DESCRIPTIONS[Number(status)] };
  const idempotent = WRITES.has(method) && !facts.public;
  const limited = path.startsWith('/v1/') || path.startsWith('/auth/v1/') || facts.public;
  for (const [status, response] of Object.entries(responses)) {
    const error = /^[45]/.test(status);
    if (error) {
      // Every error is in the error shape; a page that answers in HTML (a 404 page) keeps its media type.
      const content = (response.content ?? {}) as Record<string, Json>;
      if (content[JSON_TYPE] || Object.keys(content).length === 0) {
        content[JSON_TYPE] = { schema: errorSchemaOf(Number(status), components) };
      }
      response.content = content;
      response.description ??= ERROR_DESCRIPTIONS[Number(status)] ?? 'Error';
    }
    const headers: Record<string, Json> = { 'X-Request-Id': headerRef('XRequestId'), ...(limited ? RATE_LIMIT_HEADERS : {}) };
    if (status === '429' || status === '503') headers['Retry-After'] = headerRef('RetryAfter');
    if (idempotent && REPLAYED(status)) headers['Idempotent-Replayed'] = headerRef('IdempotentReplayed');
    response.headers = { ...(response.headers as Json | undefined), ...headers };
    // A stream is text, whatever JSON schema its route declared for the 200 of its list form.
    const content = response.content as Record<string, Json> | undefined;
    if (content?.[EVENT_STREAM] && !error) content[EVENT_STREAM] = { ...content[EVENT_STREAM], schema: EVENT_STREAM_SCHEMA };
  }
  if (idempotent) op.parameters = [...(op.parameters ?? []).filter((p) => String(p.name).toLowerCase() !== 'idempotency-key'), IDEMPOTENCY_KEY];
}

/** Names the bodies of `op`: titled shapes by their title, the rest after the operation. */
function nameBodies(op: Operation, components: Components): void {
  const base = pascal(op.operationId ?? 'Anonymous');
  const name = (media: Json | undefined, suffix: string) => {
    if (!media || !isObject(media.schema)) return;
    const hoisted = components.hoist(media.schema) as Json;
    media.schema = '$ref' in hoisted || hoisted.type !== 'object' ? hoisted : components.name(`${base}${suffix}`, hoisted);
  };
  const body = (op.requestBody?.content as Record<string, Json> | undefined);
  for (const media of Object.values(body ?? {})) name(media, 'Request');
  for (const [status, response] of Object.entries(op.responses)) {
    for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, Json>)) {
      if (type === JSON_TYPE && status.startsWith('2')) name(media, 'Response');
      else if (isObject(media.schema)) media.schema = components.hoist(media.schema);
    }
  }
  for (const p of op.parameters ?? []) if (isObject(p.schema)) p.schema = components.hoist(p.schema);
}

/** One webhook per event type: the event as `GET /v1/events` lists it, signed as Standard Webhooks says. */
function webhooks(components: Components): Record<string, Json> {
  if (!components.schemas.Event) return {};
  const header = (name: string, description: string, example: string) => ({ name, in: 'header', required: true, description, schema: { type: 'string', examples: [example] } });
  const out: Record<string, Json> = {};
  for (const [type, info] of Object.entries(EVENT_TYPES)) {
    // `contact.created` carries a Contact: name the object when its record is a component.
    const record = components.schemas[pascal(type.split('.')[0])] ? schemaRef(pascal(type.split('.')[0])) : undefined;
    const payload = components.name(`${pascal(type)}Event`, {
      description: info.description,
      allOf: [
        schemaRef('Event'),
        {
          type: 'object',
          properties: {
            type: { type: 'string', enum: [type], description: 'The event type' },
            ...(record ? { data: { type: 'object', description: 'The payload of the event', properties: { object: { ...record, description: 'The object as the API shows it after the change (for a deletion, as it was)' } } } } : {}),
          },
        },
      ],
    });
    out[type] = {
      post: {
        operationId: `on${pascal(type)}`,
        summary: `The ${type} event`,
        description: `${info.description}. POSTed to every active endpoint subscribed to \`${type}\` (or to every event); any 2xx within the timeout acknowledges it, 410 Gone disables the endpoint, anything else is retried. Verify the signature before trusting the body.`,
        tags: ['Webhooks'],
        security: [],
        parameters: [
          header('webhook-id', 'The event id: the same for every attempt, so a receiver can de-duplicate', 'evt_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'),
          header('webhook-timestamp', 'When this attempt was signed, unix seconds', '1767225600'),
          header('webhook-signature', 'Space-separated `v1,<base64 HMAC-SHA256>` signatures of `<webhook-id>.<webhook-timestamp>.<body>` with the endpoint\'s secret(s)', 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='),
        ],
        requestBody: { required: true, content: { [JSON_TYPE]: { schema: payload } } },
        responses: {
          200: { description: 'Acknowledged (any 2xx)' },
          410: { description: 'Gone: the endpoint is disabled and gets no more deliveries' },
        },
      },
    };
  }
  return out;
}

/** Completes the document; see the top of this file. */
export function completeDocument(doc: Json): Json {
  const componentsObject = (doc.components ??= {}) as Json;
  const components = new Components({ ...COMPONENT_SCHEMAS, ...(componentsObject.schemas as Record<string, Json> | undefined) });
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Operation | undefined;
      if (!op) continue;
      const facts = (op[ROUTE_FACTS] ?? { public: false }) as RouteFacts;
      delete op[ROUTE_FACTS];
      if (facts.parsedBodies) {
        const body = (op.requestBody ??= { required: true, content: {} }) as { content: Record<string, unknown> };
        body.content = { ...body.content, ...structuredClone(facts.parsedBodies) };
      }
      completeResponses(op, method, path, facts, components);
      nameBodies(op, components);
    }
  }
  const hooks = webhooks(components);
  Object.assign(componentsObject, {
    schemas: Object.fromEntries(Object.entries(components.schemas).sort(([a], [b]) => a.localeCompare(b))),
    headers: { ...(componentsObject.headers as Json | undefined), ...HEADERS },
  });
  return Object.keys(hooks).length ? { ...doc, webhooks: hooks } : doc;
}
