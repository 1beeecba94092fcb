// The operations of stage checklist pipelines beyond their CRUD (checklists.resource.ts): the stages,
// their order, the evidence library and the built-in templates.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { badRequest } from '../../platform/errors.ts';
import { Data, DeletedSchema, errorResponses } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import { checklistPipelines } from './checklists.resource.ts';
import * as s from './checklists.schemas.ts';
import * as store from './checklists.store.ts';
import { addEvidenceKey, evidenceLibrary } from './evidence-library.ts';
import { TEMPLATES } from './templates.ts';

const tags = [checklistPipelines.tag];
const base = '/pipelines';
const record = checklistPipelines.schemas.record;

export async function checklistRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.services.database.db;

  app.get(`${base}/evidence-library`, {
    schema: {
      tags, summary: 'List the evidence library',
      description: 'The evidence keys stages may require or recommend and deals may carry: the canonical keys every organization has (`built_in: true`), then the organization\'s own, oldest first.',
      response: { 200: Data(Type.Array(s.EvidenceKeySchema), 'Every key of the library'), ...errorResponses() },
    },
  }, async (req) => ({ data: await evidenceLibrary(db(), req.scope) }));

  app.post(`${base}/evidence-library`, {
    schema: {
      tags, summary: 'Add an evidence key',
      description: 'Adds a key of the organization\'s own to the library (records `evidence_key.created`). Keys are snake_case (else 422); a key the library already has, built in or not, is 409.',
      body: s.EvidenceKeyCreate, response: { 201: Data(s.EvidenceKeySchema, 'The new key'), ...errorResponses(409) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => addEvidenceKey(w, req.body)));

  app.post(`${base}/from-template`, {
    schema: {
      tags, summary: 'Create a stage checklist pipeline from a template',
      description: 'Creates a complete methodology from a built-in template (`meddpicc`, `bant` or `spiced`): its stages with their required and recommended evidence, exit criteria and channel scripts. Records `pipeline.created`.',
      body: s.TemplateRequest(TEMPLATES), response: { 201: Data(record, 'The created methodology'), ...errorResponses() },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.fromTemplate(w, req.body.template as (typeof TEMPLATES)[number], req.body.name)));

  app.post(`${base}/:id/stages`, {
    schema: {
      tags, summary: 'Add a stage to a stage checklist pipeline',
      description: `Adds a stage at the end (at most 50: else 409). Unknown evidence keys are 422 naming them. Records \`pipeline.updated\`. Unknown methodology: 404 \`${checklistPipelines.notFound}\`.`,
      params: s.PipelineParams, body: s.ChecklistStageCreate, response: { 201: Data(s.ChecklistStageSchema, 'The created stage'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.addStage(w, req.params.id, req.body)));

  app.put(`${base}/:id/stages/order`, {
    schema: {
      tags, summary: 'Reorder the stages of a stage checklist pipeline',
      description: 'Sets the order of the stages: `stage_ids` names every stage once (a stage left out or named twice is 400; an id that is no stage of the methodology is 404 `Stage not found`).',
      params: s.PipelineParams, body: s.StageOrder, response: { 200: Data(record, 'The methodology in its new order'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.orderStages(w, req.params.id, req.body.stage_ids)));

  app.patch(`${base}/:id/stages/:stage_id`, {
    schema: {
      tags, summary: 'Update a stage of a stage checklist pipeline',
      description: 'Changes the fields given (element lists and scripts are replaced whole). Unknown evidence keys are 422 naming them. New required elements apply to the next deal that enters a linked deal stage, not to deals already there. An empty body is 400 `No fields to update`.',
      params: s.StageParams, body: s.ChecklistStageUpdate, response: { 200: Data(s.ChecklistStageSchema, 'The updated stage'), ...errorResponses(404) },
    },
  }, (req, reply) => {
    if (Object.keys(req.body).length === 0) throw badRequest('No fields to update');
    return mutate(req, reply, 200, (w) => store.updateStage(w, req.params.id, req.params.stage_id, req.body));
  });

  app.delete(`${base}/:id/stages/:stage_id`, {
    schema: {
      tags, summary: 'Delete a stage of a stage checklist pipeline',
      description: 'Deletes a stage; the others close up. A stage a deal pipeline stage links is 409 naming that deal stage: unlink it first.',
      params: s.StageParams, response: { 200: Data(DeletedSchema('cks', 'stage'), 'The stage was deleted'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.deleteStage(w, req.params.id, req.params.stage_id)));
}
