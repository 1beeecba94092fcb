// Deal pipelines and their stages: /v1/deals/pipelines…
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../platform/errors.ts';
import { paginate } from '../../platform/pagination.ts';
import { Data, DeletedSchema, errorResponses, ListOf } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import * as s from './pipelines.schemas.ts';
import * as store from './pipelines.store.ts';

const tags = ['Deals'];
const base = '/deals/pipelines';

export async function pipelineRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.services.database.db;

  app.get(base, {
    schema: {
      tags, summary: 'List deal pipelines', description: 'Lists the pipelines with their stages, newest first, with an exact `total`.',
      querystring: s.PipelineQuery, response: { 200: ListOf(s.PipelineSchema, 'A page of pipelines'), ...errorResponses() },
    },
  }, (req) => paginate(req, req.query, {
    fetch: (page) => store.pipelinePage(db(), req.scope, page),
    count: () => store.countPipelines(db(), req.scope),
    keyOf: (row) => row.id,
    map: (rows) => store.presentPipelines(db(), req.scope, rows),
  }));

  app.post(base, {
    schema: {
      tags, summary: 'Create a deal pipeline',
      description: 'Creates a pipeline with the stages given, in order (the standard sales stages when omitted). `is_default: true` makes it the default pipeline and the previous default an ordinary one.',
      body: s.PipelineCreateSchema, response: { 201: Data(s.PipelineSchema, 'The created pipeline'), ...errorResponses() },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.createPipeline(w, req.body)));

  app.get(`${base}/:id`, {
    schema: { tags, summary: 'Get a deal pipeline', description: 'Reads one pipeline with its stages; 404 `Pipeline not found`.', params: s.PipelineParams, response: { 200: Data(s.PipelineSchema, 'The pipeline'), ...errorResponses(404) } },
  }, async (req) => ({ data: await store.readPipeline(db(), req.scope, req.params.id) }));

  app.patch(`${base}/:id`, {
    schema: {
      tags, summary: 'Update a deal pipeline',
      description: 'Renames a pipeline or makes it the default (`is_default: true`; the previous default stops being one). There is always exactly one default pipeline, so `is_default: false` is 422: make another pipeline the default instead. An empty body is 400 `No fields to update`.',
      params: s.PipelineParams, body: s.PipelineUpdateSchema, response: { 200: Data(s.PipelineSchema, 'The updated pipeline'), ...errorResponses(404) },
    },
  }, (req, reply) => {
    if (Object.keys(req.body).length === 0) throw badRequest('No fields to update');
    return mutate(req, reply, 200, (w) => store.updatePipeline(w, req.params.id, req.body));
  });

  app.delete(`${base}/:id`, {
    schema: {
      tags, summary: 'Delete a deal pipeline',
      description: 'Deletes a pipeline and its stages. The default pipeline cannot be deleted (409), nor a pipeline that holds deals (409 with their number): move or delete them first.',
      params: s.PipelineParams, response: { 200: Data(DeletedSchema('pip', 'deal pipeline'), 'The pipeline was deleted'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.deletePipeline(w, req.params.id)));

  app.post(`${base}/:id/stages`, {
    schema: {
      tags, summary: 'Add a stage to a deal pipeline', description: 'Adds a stage at the end of the pipeline (at most 50 stages: else 409). Reorder with `PUT …/stages/order`. `checklist_stage_id` links a stage of a stage checklist pipeline (unknown: 404 `Checklist stage not found`).',
      params: s.PipelineParams, body: s.StageCreateSchema, response: { 201: Data(s.StageSchema, 'The created stage'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.addStage(w, req.params.id, req.body)));

  app.put(`${base}/:id/stages/order`, {
    schema: {
      tags, summary: 'Reorder the stages of a deal pipeline',
      description: 'Sets the order of the stages: `stage_ids` names every stage of the pipeline exactly once (a stage left out or named twice is 400; an id that is no stage of the pipeline is 404 `Stage not found`). New deals start in the first stage.',
      params: s.PipelineParams, body: s.StageOrderSchema, response: { 200: Data(s.PipelineSchema, 'The pipeline in its new order'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.orderStages(w, req.params.id, req.body.stage_ids)));

  app.patch(`${base}/:id/stages/:stage_id`, {
    schema: {
      tags, summary: 'Update a stage of a deal pipeline',
      description: 'Changes the fields given. A new `stage_type` changes the status of the stage\'s deals (closing them now, or reopening them); a new `probability` changes the weighted amounts of deals that follow it. `checklist_stage_id` links a stage of a stage checklist pipeline (unknown: 404 `Checklist stage not found`; null unlinks); deals already in the stage stay. An empty body is 400 `No fields to update`.',
      params: s.StageParams, body: s.StageUpdateSchema, response: { 200: Data(s.StageSchema, 'The updated stage'), ...errorResponses(404) },
    },
  }, (req, reply) => {
    if (Object.keys(req.body).length === 0) throw badRequest('No fields to update');
    return mutate(req, reply, 200, (w) => store.updateStage(w, req.params.id, req.params.stage_id, req.body));
  });

  app.delete(`${base}/:id/stages/:stage_id`, {
    schema: {
      tags, summary: 'Delete a stage of a deal pipeline',
      description: 'Deletes a stage. A stage that holds deals needs `move_to`, another stage of the same pipeline, which receives them (each records `deal.stage_changed` and a stage-history row); without it the answer is 409 with the number of deals. `move_to` naming the stage itself or a stage of another pipeline is 400. The last stage of a pipeline cannot be deleted (409).',
      params: s.StageParams, querystring: s.StageDeleteQuery, response: { 200: Data(DeletedSchema('stg', 'deal stage'), 'The stage was deleted'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.deleteStage(w, req.params.id, req.params.stage_id, req.query.move_to)));
}
