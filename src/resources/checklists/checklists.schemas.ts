// Request and response schemas of stage checklist pipelines: their stages, the evidence library and
// the templates.
import { Type, type Static } from 'typebox';
import { Nullable, Str, StringEnum } from '../../platform/schemas.ts';
import { STAGE_TYPES } from '../deals/pipelines.schemas.ts';

/** Evidence keys are snake_case. */
export const KEY_PATTERN = '^[a-z][a-z0-9_]{0,62}$';

const evidenceKey = (description: string, example: string) => Type.String({ pattern: KEY_PATTERN, maxLength: 63, description, examples: [example] });
const keyList = (description: string, example: string[]) => Type.Array(evidenceKey('An evidence key of the library', example[0] ?? 'budget_confirmed'), { maxItems: 50, uniqueItems: true, description, examples: [example] });
const stageType = StringEnum(STAGE_TYPES, { description: 'The deal status this stage stands for: `open` while worked, `won` or `lost` once closed', examples: ['open'] });
const stageName = Str({ description: 'Name of the stage', minLength: 1, maxLength: 100, examples: ['Qualify'] });
const scripts = Type.Object({}, {
  additionalProperties: Str({ description: 'A script', maxLength: 5000 }), propertyNames: { pattern: KEY_PATTERN, maxLength: 63 },
  maxProperties: 20, description: 'What to say in each channel at this stage, by channel (`email`, `call`, …)', examples: [{ email: 'Hi {{first_name}}, …', call: 'Ask who signs.' }],
});
const exitCriteria = Str({ description: 'What must be true to leave the stage, in words', maxLength: 2000, examples: ['The economic buyer has seen the business case'] });
const required = keyList('Evidence keys that must be on a deal before it may enter a deal stage linked to this stage', ['budget_confirmed', 'decision_maker_identified']);
const recommended = keyList('Evidence keys worth having at this stage; never enforced', ['competition_known']);

export const ChecklistStageSchema = Type.Object({
  id: Type.String({ description: 'Identifier of the checklist stage', examples: ['cks_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  pipeline_id: Type.String({ description: 'The methodology the stage belongs to', examples: ['ckp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  name: Type.String({ description: 'Name of the stage', examples: ['Qualify'] }),
  position: Type.Integer({ description: 'Place of the stage in its methodology, from 0', examples: [1] }),
  stage_type: stageType,
  required_elements: Type.Array(Type.String(), { description: 'Evidence keys a deal needs before entering a deal stage linked here', examples: [['budget_confirmed']] }),
  recommended_elements: Type.Array(Type.String(), { description: 'Evidence keys worth having here; never enforced', examples: [['competition_known']] }),
  channel_scripts: Type.Record(Type.String(), Type.String(), { description: 'Scripts by channel', examples: [{ email: 'Hi {{first_name}}, …', call: 'Ask who signs.' }] }),
  exit_criteria: Nullable(Type.String({ description: 'What must be true to leave the stage', examples: ['The economic buyer has seen the business case'] })),
  created_at: Type.Integer({ description: 'When the stage was created, unix seconds', examples: [1767225600] }),
  updated_at: Type.Integer({ description: 'When the stage last changed, unix seconds', examples: [1767225600] }),
}, { title: 'ChecklistStage', description: 'A stage of a methodology and the evidence it asks for' });

export const ChecklistStageCreate = Type.Object({
  name: stageName,
  stage_type: Type.Optional(stageType),
  required_elements: Type.Optional(required),
  recommended_elements: Type.Optional(recommended),
  channel_scripts: Type.Optional(scripts),
  exit_criteria: Type.Optional(Nullable(exitCriteria)),
}, { additionalProperties: false, description: 'A new stage, added at the end. `stage_type` defaults to `open`; element lists and scripts to empty' });

export const ChecklistStageUpdate = Type.Object({
  name: Type.Optional(stageName),
  stage_type: Type.Optional(stageType),
  required_elements: Type.Optional(required),
  recommended_elements: Type.Optional(recommended),
  channel_scripts: Type.Optional(scripts),
  exit_criteria: Type.Optional(Nullable(exitCriteria)),
}, { additionalProperties: false, description: 'Stage fields to change; null clears `exit_criteria`' });

export type StageInput = Static<typeof ChecklistStageUpdate>;

export const ChecklistStages = Type.Array(ChecklistStageCreate, { maxItems: 50, description: 'The stages of a new methodology, in order' });

const stageId = (description: string) => Str({ description, maxLength: 64, examples: ['cks_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] });
export const PipelineParams = Type.Object({ id: Str({ description: 'Identifier of the methodology', maxLength: 64, examples: ['ckp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }) });
export const StageParams = Type.Object({ id: PipelineParams.properties.id, stage_id: stageId('Identifier of the checklist stage') });
export const StageOrder = Type.Object({
  stage_ids: Type.Array(stageId('A stage of the methodology'), { minItems: 1, maxItems: 50, description: 'Every stage of the methodology, once each, in the new order' }),
}, { additionalProperties: false, description: 'The new order of the stages' });

export const EvidenceKeySchema = Type.Object({
  key: Type.String({ description: 'The snake_case key', examples: ['budget_confirmed'] }),
  title: Type.String({ description: 'Short title', examples: ['Budget confirmed'] }),
  description: Nullable(Type.String({ description: 'What counts as this evidence', examples: ['Money for the purchase exists and its size is known'] })),
  built_in: Type.Boolean({ description: 'True for the canonical keys every organization has; false for the organization\'s own', examples: [true] }),
}, { title: 'EvidenceKey', description: 'A key of the evidence library' });

export const EvidenceKeyCreate = Type.Object({
  key: evidenceKey('The new key, snake_case; not a key the library already has (409)', 'security_review_passed'),
  title: Str({ description: 'Short title', minLength: 1, maxLength: 100, examples: ['Security review passed'] }),
  description: Type.Optional(Nullable(Str({ description: 'What counts as this evidence', maxLength: 2000, examples: ['The buyer\'s security team signed off on our questionnaire'] }))),
}, { additionalProperties: false, description: 'An evidence key of the organization' });

export const TemplateRequest = (templates: readonly string[]) => Type.Object({
  template: StringEnum(templates, { description: 'The built-in methodology: `meddpicc`, `bant` or `spiced`', examples: ['meddpicc'] }),
  name: Type.Optional(Str({ description: 'Name of the new methodology; the template\'s name when omitted', minLength: 1, maxLength: 200, examples: ['MEDDPICC'] })),
}, { additionalProperties: false, description: 'The template to make a methodology from' });
