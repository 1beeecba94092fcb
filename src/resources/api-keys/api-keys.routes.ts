// Key management at its own base, /auth/v1. Live keys manage every key of their organization;
// test keys see and manage test keys only.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { forbidden, notFound } from '../../platform/errors.ts';
import { Data, errorResponses, Str } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import * as s from './api-keys.schemas.ts';
import * as store from './api-keys.store.ts';

const tags = ['API keys'];
const visibleMode = (req: FastifyRequest) => (req.apiKey.mode === 'test' ? 'test' : undefined);

export async function apiKeyRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, keys } = app.services;

  app.post('/api-keys', {
    schema: {
      tags, summary: 'Create an API key',
      description: 'Creates a key for the caller\'s organization. The token is in this response only; only its hash is stored. `mode` defaults to live; test keys can only create test keys.',
      body: s.ApiKeyCreateSchema, response: { 201: Data(s.CreatedApiKeySchema, 'The new key and its token'), ...errorResponses() },
    },
  }, (req, reply) => {
    const mode = req.body.mode ?? 'live';
    if (req.apiKey.mode === 'test' && mode !== 'test') throw forbidden('Test keys can only manage test keys; pass "mode": "test"');
    return mutate(req, reply, 201, async (w) => {
      const created = await store.createApiKey(w.tx, req.scope.orgId, req.body.name, mode);
      w.emit('api_key.created', { id: created.api_key_id, ...store.toApiKey({ ...created, id: created.api_key_id, is_agency: 0 }) });
      return { api_key_id: created.api_key_id, api_key_token: created.api_key_token, name: created.name, mode: created.mode };
    });
  });

  app.get('/api-keys', {
    schema: {
      tags, summary: 'List API keys', description: 'Lists the active keys of the organization (test keys see test keys only). Tokens are never returned.',
      response: { 200: s.ApiKeyListSchema, ...errorResponses() },
    },
  }, async (req) => {
    const list = await store.listApiKeys(database.db, req.scope.orgId, visibleMode(req));
    return { data: { keys: list, total: list.length } };
  });

  app.delete('/api-keys/:id', {
    schema: {
      tags, summary: 'Revoke an API key', description: 'Revokes a key at once; requests with it then get 401 (within two seconds on other processes).',
      params: Type.Object({ id: Str({ description: 'Identifier of the key', maxLength: 64, examples: ['key_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }) }),
      response: {
        200: Data(Type.Object({
          api_key_id: Type.String({ description: 'The revoked key', examples: ['key_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
          revoked: Type.Literal(true, { description: 'Always true' }),
        }), 'The key was revoked'),
        ...errorResponses(404),
      },
    },
  }, (req, reply) => mutate(req, reply, 200, async (w) => {
    const key = await store.findApiKey(w.tx, req.scope.orgId, req.params.id, visibleMode(req));
    if (!key) throw notFound('API key not found');
    await store.revokeApiKey(w.tx, key.id, req.scope.orgId);
    w.emit('api_key.revoked', { id: key.id, ...store.toApiKey(key) });
    return { api_key_id: key.id, revoked: true as const };
  }).then(() => keys.forget(req.params.id)));
}
