// Stage checklist pipelines: sales methodologies (MEDDPICC, BANT, SPICED or an organization's own),
// each a list of stages with the evidence a deal needs before it may enter a deal stage linked to
// one (see checklists.store.ts for the stages and deals/deal-evidence.ts for the gate).
import { Type } from 'typebox';
import { defineResource } from '../../platform/resource/define.ts';
import { enumOf, text } from '../../platform/resource/fields.ts';
import { ChecklistStages, ChecklistStageSchema } from './checklists.schemas.ts';
import { afterWrite, beforeDelete, beforeWrite, enrich } from './checklists.store.ts';
import { TEMPLATES } from './templates.ts';

export const checklistPipelines = defineResource({
  name: 'pipeline', plural: 'pipelines', prefix: 'ckp', table: 'checklist_pipelines', notFound: 'Pipeline not found',
  tag: 'Stage checklist pipelines', tagDescription: 'Sales methodologies: stages with the evidence a deal needs before entering them, the evidence library and built-in templates',
  fields: {
    name: text({ required: true, min: 1, description: 'Name of the methodology', example: 'MEDDPICC' }),
    description: text({ max: 2000, description: 'What the methodology is for', example: 'Enterprise qualification for deals above 50k' }),
    template: enumOf(TEMPLATES, { readOnly: true, description: 'The built-in template it was made from; null for one made by hand; read-only', example: 'meddpicc' }),
  },
  computed: {
    stages: Type.Array(ChecklistStageSchema, { description: 'The stages, in order of position' }),
  },
  inputs: { create: { stages: ChecklistStages } },
  filters: { name: { op: 'contains', description: 'Name contains this text, case-insensitively' }, template: { op: 'eq', description: 'Only methodologies made from this template' } },
  ownedTables: ['checklist_stages', 'evidence_keys'],
  hooks: { beforeWrite, afterWrite, beforeDelete, enrich },
  eventDocs: {
    created: 'A stage checklist pipeline (methodology) was created, by hand or from a template; the object holds its stages',
    updated: 'A stage checklist pipeline, or one of its stages, was changed, added, reordered or deleted; the object is the pipeline with its stages',
    deleted: 'A stage checklist pipeline was deleted with its stages; the object is the pipeline as it was',
  },
  routes: {
    docs: {
      list: { summary: 'List stage checklist pipelines', description: 'Lists the methodologies with their stages, newest first, with an exact `total`. Filters: `name` (contains, case-insensitive), `template`.' },
      create: { summary: 'Create a stage checklist pipeline', description: 'Creates a methodology, with the `stages` given in order (none when omitted; add them with `POST /v1/pipelines/{id}/stages`). Every key of `required_elements` and `recommended_elements` must be in the evidence library, else 422 naming it.' },
      get: { summary: 'Get a stage checklist pipeline', description: 'Reads one methodology with its stages; 404 `Pipeline not found`.' },
      update: { summary: 'Update a stage checklist pipeline', description: 'Renames a methodology or changes its description (stages have their own routes). An empty body is 400 `No fields to update`.' },
      delete: { summary: 'Delete a stage checklist pipeline', description: 'Deletes a methodology and its stages. One whose stages a deal pipeline stage links is 409 naming the deal stage: unlink it first (`PATCH /v1/deals/pipelines/{id}/stages/{stage_id}` with `checklist_stage_id: null`).' },
    },
    errors: { delete: [409] },
  },
});
