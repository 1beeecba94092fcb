import { Type } from 'typebox';
import { Nullable, Str, StringEnum, Timestamp } from '../../platform/schemas.ts';

const Mode = StringEnum(['live', 'test'] as const, { description: 'live acts on production data, test on the sandbox data set; fixed at creation', examples: ['live'] });

// The form of a scope; which scopes exist comes from the route table (400 naming an unknown one).
const Scope = Type.String({ description: 'A scope: `*`, or `<group>:read` / `<group>:write`', minLength: 1, maxLength: 100, pattern: '^(\\*|[a-z][a-z0-9_-]*:(read|write))$', examples: ['contacts:write'] });

const Scopes = (description: string) => Type.Array(Scope, {
  minItems: 1, maxItems: 200, description, examples: [['contacts:write', 'lists:read']],
});

const ExpiresAt = Nullable(Type.Integer({ description: 'When the key stops working, unix seconds; null if never. After it the key answers 401 `API key has expired`', examples: [1798761600] }));

export const ApiKeySchema = Type.Object({
  api_key_id: Type.String({ description: 'Identifier of the key', examples: ['key_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  name: Type.String({ description: 'Label of the key', examples: ['CI pipeline'] }),
  mode: Mode,
  is_agency: Type.Boolean({ description: 'Whether this is an agency key: it may act for the agency\'s linked client organizations with `X-Org-Id`', examples: [false] }),
  scopes: Scopes('What the key may do: `["*"]` is everything; `<group>:write` includes `<group>:read`'),
  expires_at: ExpiresAt,
  created_at: Timestamp('When the key was created, unix seconds'),
  last_used_at: Nullable(Type.Integer({ description: 'When the key was last used, unix seconds, at roughly per-minute granularity; null if never', examples: [1767225600] })),
}, { title: 'ApiKey', description: 'An API key record; never includes the token' });

export const CreatedApiKeySchema = Type.Object({
  ...ApiKeySchema.properties,
  api_key_token: Type.String({ description: 'The token, shown only in this response; store it now', examples: ['svc_live_3q2t9ZkVbN8sW1xYpLr7uFh0mGcJdEaT4oKiQyU6nXw'] }),
}, { title: 'CreatedApiKey', description: 'A new key with its token' });

export const ApiKeyCreateSchema = Type.Object({
  name: Str({ description: 'Label of the key', minLength: 1, maxLength: 200, examples: ['CI pipeline'] }),
  mode: Type.Optional(Mode),
  is_agency: Type.Optional(Type.Boolean({ description: 'An agency key (only an agency organization\'s): may act for its linked clients with `X-Org-Id`. Default false', examples: [false] })),
  scopes: Type.Optional(Scopes('What the key may do, from `GET /auth/v1/scopes`; default `["*"]`. An unknown scope is 400')),
  expires_at: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e11, description: 'When the key stops working, unix seconds; must be in the future. Default: never', examples: [1798761600] })),
}, { title: 'ApiKeyCreate', additionalProperties: false, description: 'A new key; mode defaults to live, scopes to everything' });

export const ApiKeyUpdateSchema = Type.Object({
  name: Type.Optional(ApiKeyCreateSchema.properties.name),
  scopes: Type.Optional(Scopes('The key\'s new scopes: each must already be held by the key (scopes only narrow)')),
}, { title: 'ApiKeyUpdate', additionalProperties: false, description: 'A new name or narrower scopes; at least one field' });

export const ApiKeyListSchema = Type.Object({
  data: Type.Object({
    keys: Type.Array(ApiKeySchema, { description: 'The keys not revoked (expired ones included), newest first' }),
    total: Type.Integer({ description: 'Number of keys', examples: [2] }),
  }),
}, { title: 'ApiKeyList', description: 'The keys of the organization' });

export const ScopeCatalogSchema = Type.Object({
  data: Type.Object({
    scopes: Type.Array(Type.Object({
      scope: Type.String({ description: 'The scope', examples: ['contacts:write'] }),
      description: Type.String({ description: 'What it allows', examples: ['Create, change and delete contacts (includes contacts:read)'] }),
      routes: Type.Array(Type.String(), { description: 'The routes it opens, as `METHOD /path`', examples: [['POST /v1/contacts', 'DELETE /v1/contacts/{id}']] }),
    }), { description: 'Every scope, generated from the routes the service serves' }),
  }),
}, { title: 'ScopeCatalog', description: 'The scopes a key can hold' });
