// Key management at its own base, /auth/v1. Live keys manage every key of their organization;
// test keys see and manage test keys only. Every route here needs a key with the scope `*`, except
// the scope catalog, which any key may read.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { parseScopes, serializeScopes } from '../../platform/credentials.ts';
import { badRequest, forbidden, notFound } from '../../platform/errors.ts';
import { previous } from '../../platform/resource/changes.ts';
import { Data, errorResponses, Str } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import * as rules from './api-keys.rules.ts';
import * as s from './api-keys.schemas.ts';
import * as store from './api-keys.store.ts';

const tags = ['API keys'];
const visibleMode = (req: FastifyRequest) => (req.apiKey.mode === 'test' ? 'test' : undefined);
const KeyParams = Type.Object({ id: Str({ description: 'Identifier of the key', maxLength: 64, examples: ['key_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }) });

export async function apiKeyRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, keys } = app.services;

  app.post('/api-keys', {
    schema: {
      tags, summary: 'Create an API key',
      description: 'Creates a key for the caller\'s organization. The token is in this response only; only its hash is stored. `mode` defaults to live; test keys can only create test keys. `scopes` (default `["*"]`) restricts what the key may do; `expires_at` ends its life; `is_agency` makes an agency key (agency organizations only, else 403).',
      body: s.ApiKeyCreateSchema, response: { 201: Data(s.CreatedApiKeySchema, 'The new key and its token'), ...errorResponses() },
    },
  }, (req, reply) => {
    const mode = req.body.mode ?? 'live';
    if (req.apiKey.mode === 'test' && mode !== 'test') throw forbidden('Test keys can only manage test keys; pass "mode": "test"');
    const options = {
      isAgency: rules.checkAgency(req.apiKey, req.body.is_agency),
      scopes: req.body.scopes === undefined ? undefined : rules.checkScopes(app, req.body.scopes),
      expiresAt: rules.checkExpiry(req.body.expires_at),
    };
    return mutate(req, reply, 201, async (w) => {
      const { api_key_token, ...record } = await store.createApiKey(w.tx, req.scope.orgId, req.body.name, mode, options);
      w.emit('api_key.created', { id: record.api_key_id, ...record });
      return { ...record, api_key_token };
    });
  });

  app.get('/api-keys', {
    schema: {
      tags, summary: 'List API keys', description: 'Lists the keys of the organization that are not revoked, expired ones included (test keys see test keys only). Tokens are never returned.',
      response: { 200: s.ApiKeyListSchema, ...errorResponses() },
    },
  }, async (req) => {
    const list = await store.listApiKeys(database.db, req.scope.orgId, visibleMode(req));
    return { data: { keys: list, total: list.length } };
  });

  app.get('/api-keys/:id', {
    schema: {
      tags, summary: 'Get an API key', description: 'One key of the organization that is not revoked (test keys see test keys only); never its token.',
      params: KeyParams, response: { 200: Data(s.ApiKeySchema, 'The key'), ...errorResponses(404) },
    },
  }, async (req) => {
    const key = await store.findApiKey(database.db, req.scope.orgId, req.params.id, visibleMode(req));
    if (!key) throw notFound('API key not found');
    return { data: store.toApiKey(key) };
  });

  app.patch('/api-keys/:id', {
    schema: {
      tags, operationId: 'updateApiKey', summary: 'Rename an API key or narrow its scopes',
      description: 'Changes the name or narrows the scopes of a key: every scope given must already be held by the key (and by the caller); to widen, create a new key. Takes effect at once on this process and within two seconds on others.',
      params: KeyParams, body: s.ApiKeyUpdateSchema, response: { 200: Data(s.ApiKeySchema, 'The key after the change'), ...errorResponses(404) },
    },
  }, (req, reply) => {
    if (req.body.name === undefined && req.body.scopes === undefined) throw badRequest('No fields to update');
    const scopes = req.body.scopes === undefined ? undefined : rules.checkScopes(app, req.body.scopes);
    return mutate(req, reply, 200, async (w) => {
      const key = await store.findApiKey(w.tx, req.scope.orgId, req.params.id, visibleMode(req));
      if (!key) throw notFound('API key not found');
      if (scopes) rules.checkNarrowing(parseScopes(key.scopes), req.apiKey.scopes, scopes);
      const before = store.toApiKey(key);
      const after = store.toApiKey({ ...key, name: req.body.name ?? key.name, scopes: scopes ? serializeScopes(scopes) : key.scopes });
      // The same name or scopes again change nothing: no write, no event.
      const earlier = previous(before, after);
      if (Object.keys(earlier).length === 0) return before;
      await store.updateApiKey(w.tx, req.scope.orgId, key.id, { name: req.body.name, scopes });
      w.emit('api_key.updated', { id: key.id, ...after }, earlier);
      return after;
    }).then(() => keys.forget(req.params.id));
  });

  app.delete('/api-keys/:id', {
    schema: {
      tags, summary: 'Revoke an API key', description: 'Revokes a key at once; requests with it then get 401 (within two seconds on other processes).',
      params: KeyParams,
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

  app.get('/scopes', {
    schema: {
      tags, operationId: 'listScopes', summary: 'List the scopes a key can hold',
      description: 'Every scope, generated from the routes the service serves: `*`, and `<group>:read` and `<group>:write` for each resource group (the first path segment after `/v1`, so `/v1/lists/{id}/entries` belongs to `lists`). `read` opens GET routes, `write` every other method and includes `read`. Key management and agency grants need `*`. Any key may read this list.',
      response: { 200: s.ScopeCatalogSchema, ...errorResponses() },
    },
  }, async () => ({ data: { scopes: rules.catalogOf(app) } }));
}
