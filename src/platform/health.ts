// Health and the API description: no credential needed. Both are operational endpoints, outside
// the API they describe, so they are left out of the OpenAPI document.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ping } from '../db/database.ts';
import { queueStats } from './jobs/queue.ts';
import { errorResponses } from './schemas.ts';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', {
    config: { public: true },
    schema: {
      hide: true,
      tags: ['Platform'],
      summary: 'Health check',
      description: 'Answers 200 when the service and its store answer, with the figures of the job queue; 503 otherwise. Needs no credential.',
      security: [],
      response: {
        200: Type.Object({
          status: Type.Literal('ok', { description: 'Always `ok`' }),
          jobs: Type.Object({
            counts: Type.Record(Type.String(), Type.Integer(), { description: 'Jobs by status: queued, running, failed (waiting to retry), dead, and succeeded within the last hour' }),
            oldest_due_age_seconds: Type.Integer({ description: 'How long the oldest due job has waited to start; 0 when none waits' }),
            workers: Type.Union([Type.Literal('inline'), Type.Literal('off')], { description: 'Whether this process runs jobs' }),
            running_here: Type.Integer({ description: 'Jobs this process is running now' }),
          }, { description: 'The background job queue (shared by every process on the store)' }),
        }, { description: 'Healthy' }),
        503: errorResponses()[503],
      },
    },
  }, async () => {
    await ping(app.services.database);
    const { workers, config, database } = app.services;
    const queue = await queueStats(database.db);
    return { status: 'ok' as const, jobs: { ...queue, workers: config.workers, running_here: workers?.runner.active ?? 0 } };
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
