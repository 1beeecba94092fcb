import { Type } from 'typebox';
import { Nullable, Str, StringEnum, Timestamp } from '../../platform/schemas.ts';

const Mode = StringEnum(['live', 'test'] as const, { description: 'live acts on production data, test on the sandbox data set; fixed at creation', examples: ['live'] });

export const ApiKeySchema = Type.Object({
  api_key_id: Type.String({ description: 'Identifier of the key', examples: ['key_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  name: Type.String({ description: 'Label of the key', examples: ['CI pipeline'] }),
  mode: Mode,
  is_agency: Type.Boolean({ description: 'Whether this is an agency key', examples: [false] }),
  created_at: Timestamp('When the key was created, unix seconds'),
  last_used_at: Nullable(Type.Integer({ description: 'When the key was last used, unix seconds, at roughly per-minute granularity; null if never', examples: [1767225600] })),
}, { description: 'An API key record; never includes the token' });

export const CreatedApiKeySchema = Type.Object({
  api_key_id: ApiKeySchema.properties.api_key_id,
  api_key_token: Type.String({ description: 'The token, shown only in this response; store it now', examples: ['svc_live_3q2t9ZkVbN8sW1xYpLr7uFh0mGcJdEaT4oKiQyU6nXw'] }),
  name: ApiKeySchema.properties.name,
  mode: Mode,
}, { description: 'A new key with its token' });

export const ApiKeyCreateSchema = Type.Object({
  name: Str({ description: 'Label of the key', minLength: 1, maxLength: 200, examples: ['CI pipeline'] }),
  mode: Type.Optional(Mode),
}, { additionalProperties: false, description: 'A new key; mode defaults to live' });

export const ApiKeyListSchema = Type.Object({
  data: Type.Object({
    keys: Type.Array(ApiKeySchema, { description: 'The active keys, newest first' }),
    total: Type.Integer({ description: 'Number of keys', examples: [2] }),
  }),
}, { description: 'The keys of the organization' });
