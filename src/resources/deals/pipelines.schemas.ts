// Request and response schemas of deal pipelines and their stages.
import { Type } from 'typebox';
import { Nullable, Str, StringEnum } from '../../platform/schemas.ts';

export const STAGE_TYPES = ['open', 'won', 'lost'] as const;
export type StageType = (typeof STAGE_TYPES)[number];

const stageId = (description: string) => Str({ description, maxLength: 64, examples: ['stg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] });
const probability = Type.Integer({ minimum: 0, maximum: 100, description: 'Chance of winning a deal in this stage, in percent (0–100); weights the amounts of the deals summary', examples: [25] });
const color = Type.String({ description: 'Display color, `#rrggbb`', pattern: '^#[0-9A-Fa-f]{6}$', examples: ['#4f46e5'] });
const stageType = StringEnum(STAGE_TYPES, { description: '`open` while the deal is worked, `won` or `lost` once it is closed; a deal\'s status is the type of its stage', examples: ['open'] });
const checklistStageId = Str({ description: 'Link a stage of a stage checklist pipeline (`cks_…`; unknown: 404 `Checklist stage not found`): deals then enter only with the evidence it requires. Null unlinks', maxLength: 64, examples: ['cks_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] });
const stageName = Str({ description: 'Name of the stage', minLength: 1, maxLength: 100, examples: ['Proposal'] });

export const StageSchema = Type.Object({
  id: Type.String({ description: 'Identifier of the stage', examples: ['stg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  pipeline_id: Type.String({ description: 'The pipeline the stage belongs to', examples: ['pip_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  name: Type.String({ description: 'Name of the stage', examples: ['Proposal'] }),
  position: Type.Integer({ description: 'Place of the stage in its pipeline, from 0; new deals start in the stage at position 0', examples: [2] }),
  probability: Type.Integer({ description: 'Chance of winning, in percent', examples: [50] }),
  stage_type: stageType,
  color: Nullable(Type.String({ description: 'Display color', examples: ['#4f46e5'] })),
  checklist_stage_id: Nullable(Type.String({ description: 'The linked stage of a stage checklist pipeline (`/v1/pipelines`): a deal enters this stage only with every evidence key it requires (else 409), unless forced; null without a link', examples: ['cks_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  created_at: Type.Integer({ description: 'When the stage was created, unix seconds', examples: [1767225600] }),
  updated_at: Type.Integer({ description: 'When the stage last changed, unix seconds', examples: [1767225600] }),
}, { title: 'DealStage', description: 'A stage of a deal pipeline' });

export const PipelineSchema = Type.Object({
  id: Type.String({ description: 'Identifier of the pipeline', examples: ['pip_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  name: Type.String({ description: 'Name of the pipeline', examples: ['New business'] }),
  is_default: Type.Boolean({ description: 'True for the one default pipeline of the organization and mode, where deals go when no pipeline is given', examples: [true] }),
  stages: Type.Array(StageSchema, { description: 'The stages, in order of position' }),
  created_at: Type.Integer({ description: 'When the pipeline was created, unix seconds', examples: [1767225600] }),
  updated_at: Type.Integer({ description: 'When the pipeline or one of its stages last changed, unix seconds', examples: [1767225600] }),
}, { title: 'DealPipeline', description: 'A deal pipeline and its stages' });

export const StageCreateSchema = Type.Object({
  name: stageName,
  probability: Type.Optional(probability),
  stage_type: Type.Optional(stageType),
  color: Type.Optional(Nullable(color)),
  checklist_stage_id: Type.Optional(Nullable(checklistStageId)),
}, { title: 'DealStageCreate', additionalProperties: false, description: 'A new stage, added at the end of the pipeline. `stage_type` defaults to `open`; `probability` to 100 for won, else 0' });

export const StageUpdateSchema = Type.Object({
  name: Type.Optional(stageName),
  probability: Type.Optional(probability),
  stage_type: Type.Optional(stageType),
  color: Type.Optional(Nullable(color)),
  checklist_stage_id: Type.Optional(Nullable(checklistStageId)),
}, { title: 'DealStageUpdate', additionalProperties: false, description: 'Stage fields to change; null clears a field' });

export const PipelineCreateSchema = Type.Object({
  name: Str({ description: 'Name of the pipeline', minLength: 1, maxLength: 200, examples: ['New business'] }),
  is_default: Type.Optional(Type.Boolean({ description: 'Make this the default pipeline (the previous default stops being one)', examples: [false] })),
  stages: Type.Optional(Type.Array(StageCreateSchema, { minItems: 1, maxItems: 50, description: 'The stages, in order; the standard sales stages when omitted' })),
}, { title: 'DealPipelineCreate', additionalProperties: false, description: 'A new pipeline' });

export const PipelineUpdateSchema = Type.Object({
  name: Type.Optional(Str({ description: 'Name of the pipeline', minLength: 1, maxLength: 200, examples: ['Renewals'] })),
  is_default: Type.Optional(Type.Literal(true, { description: 'Make this the default pipeline; the previous default stops being one. There is always exactly one default, so `false` is refused: make another pipeline the default instead' })),
}, { title: 'DealPipelineUpdate', additionalProperties: false, description: 'Pipeline fields to change' });

export const PipelineParams = Type.Object({ id: Str({ description: 'Identifier of the pipeline', maxLength: 64, examples: ['pip_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }) });
export const StageParams = Type.Object({ id: PipelineParams.properties.id, stage_id: stageId('Identifier of the stage') });

export const StageDeleteQuery = Type.Object({
  move_to: Type.Optional(stageId('Another stage of the same pipeline that receives the deals of the deleted stage (each records a stage change); required when the stage holds deals')),
}, { additionalProperties: false });

export const StageOrderSchema = Type.Object({
  stage_ids: Type.Array(stageId('A stage of the pipeline'), { minItems: 1, maxItems: 50, description: 'Every stage of the pipeline, once each, in the new order' }),
}, { title: 'DealStageOrder', additionalProperties: false, description: 'The new order of the stages' });

export const PipelineQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Page number, 1-indexed; ignored when `cursor` is given', examples: [1] })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Items per page, 1 to 200', examples: [50] })),
  cursor: Type.Optional(Type.String({ maxLength: 512, description: 'Opaque `next_cursor` from a previous page' })),
}, { additionalProperties: false });

/** The stages of a new pipeline when none are given. */
export const DEFAULT_STAGES: Array<{ name: string; probability: number; stage_type: StageType; color: string }> = [
  { name: 'Qualification', probability: 10, stage_type: 'open', color: '#94a3b8' },
  { name: 'Discovery', probability: 25, stage_type: 'open', color: '#60a5fa' },
  { name: 'Proposal', probability: 50, stage_type: 'open', color: '#a78bfa' },
  { name: 'Negotiation', probability: 75, stage_type: 'open', color: '#f59e0b' },
  { name: 'Closed won', probability: 100, stage_type: 'won', color: '#22c55e' },
  { name: 'Closed lost', probability: 0, stage_type: 'lost', color: '#ef4444' },
];
