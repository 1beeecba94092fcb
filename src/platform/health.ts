// Health and the API description: no credential needed. Both are operational endpoints, outside
// the API they describe, so they are left out of the OpenAPI document.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ping } from '../db/database.ts';
import { errorResponses } from './schemas.ts';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', {
    config: { public: true },
    schema: {
      hide: true,
      tags: ['Platform'],
      summary: 'Health check',
      description: 'Answers 200 when the service and its store answer, 503 otherwise. Needs no credential.',
      security: [],
      response: {
        200: Type.Object({ status: Type.Literal('ok', { description: 'Always `ok`' }) }, { description: 'Healthy' }),
        503: errorResponses()[503],
      },
    },
  }, async () => {
    await ping(app.services.database);
    return { status: 'ok' as const };
  });

  app.get('/v1/openapi.json', {
    config: { public: true },
    schema: {
      hide: true,
      tags: ['Platform'],
      summary: 'OpenAPI description',
      description: 'This API\'s OpenAPI 3.1 description, for client generation. Needs no credential.',
      security: [],
      response: { 200: Type.Object({}, { additionalProperties: true, description: 'The OpenAPI document' }) },
    },
  }, async () => app.swagger());
}
