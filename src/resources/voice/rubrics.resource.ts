// Rubrics: what a call is graded against (`POST /v1/voice/calls/{id}/grade`), criteria with weights.
// Configuration, kept by a sandbox reset.
import { Type } from 'typebox';
import { defineResource } from '../../platform/resource/define.ts';
import { json, text } from '../../platform/resource/fields.ts';
import { fieldError } from '../../platform/time/zones.ts';

const Criterion = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_]*$', description: 'The criterion\'s key, unique in the rubric', examples: ['discovery'] }),
  description: Type.String({ minLength: 1, maxLength: 2000, description: 'What a call must do to meet it', examples: ['Asks how the team handles its pipeline today'] }),
  weight: Type.Integer({ minimum: 1, maximum: 100, description: 'Its weight in the grade, 1 to 100', examples: [30] }),
}, { additionalProperties: false });
const Criteria = Type.Array(Criterion, { minItems: 1, maxItems: 20, description: 'The criteria, 1 to 20, each key once' });

export const voiceRubrics = defineResource({
  name: 'voice_rubric', plural: 'rubrics', prefix: 'rub', table: 'voice_rubrics', notFound: 'Rubric not found',
  tag: 'Call rubrics', tagDescription: 'What calls are graded against: criteria with weights',
  fields: {
    name: text({ required: true, min: 1, max: 200, description: 'Name of the rubric', example: 'Discovery call' }),
    description: text({ max: 2000, description: 'What it is for', example: 'First calls with a new lead' }),
    criteria: json({ required: true, nullable: false, input: Criteria, output: Criteria, description: 'The criteria, each with its weight' }),
  },
  keptOnReset: true,
  hooks: {
    async beforeWrite(_w, _row, { input }) {
      const keys = (input.criteria as Array<{ key: string }> | undefined)?.map((c) => c.key) ?? [];
      const twice = keys.find((k, i) => keys.indexOf(k) !== i);
      if (twice) throw fieldError('criteria', `names the key ${twice} twice: each criterion's key is unique in the rubric`);
    },
  },
  routes: {
    docs: {
      list: { summary: 'List rubrics', description: 'Lists the rubrics calls are graded against, newest first.' },
      create: { summary: 'Create a rubric', description: 'Creates a rubric: 1 to 20 criteria, each with a key (unique in the rubric: 422 otherwise), a description and a weight from 1 to 100.' },
    },
  },
});
