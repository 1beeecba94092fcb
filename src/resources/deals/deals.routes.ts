// The operations of deals beyond their CRUD (which comes from deals.resource.ts) and their children
// (the contacts and evidence on a deal, deal-*.children.ts): the summary, the
// stage history, a contact's deals, a deal's checklist, and the pipelines (pipelines.routes.ts).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { paginate } from '../../platform/pagination.ts';
import { getRow } from '../../platform/resource/store.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { Data, errorResponses, ListOf, Nullable } from '../../platform/schemas.ts';
import { contacts } from '../contacts/contacts.resource.ts';
import { dealChecklist } from './deal-evidence.ts';
import { dealEvidence } from './deal-evidence.children.ts';
import { contactDealsPage } from './deal-contacts.ts';
import { deals } from './deals.resource.ts';
import { PipelineQuery } from './pipelines.schemas.ts';
import { presentStageHistory } from './stage-history.ts';
import { pipelineRoutes } from './pipelines.routes.ts';
import { dealsSummary, SummaryQuery, SummarySchema } from './summary.ts';

const tags = [deals.tag];
const params = deals.schemas.params;

const HistorySchema = Type.Object({
  id: Type.String({ description: 'Identifier of the history row', examples: ['dsh_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  deal_id: Type.String({ description: 'The deal', examples: ['dea_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  pipeline_id: Type.String({ description: 'The pipeline of the stage', examples: ['pip_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  stage_id: Type.String({ description: 'The stage', examples: ['stg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  stage_name: Nullable(Type.String({ description: 'Name of the stage now; once the stage is deleted, the name it had then', examples: ['Proposal'] })),
  entered_at: Type.Integer({ description: 'When the deal entered the stage, unix seconds', examples: [1767225600] }),
  left_at: Nullable(Type.Integer({ description: 'When the deal left the stage, unix seconds; null while it is there', examples: [1767312000] })),
  seconds_in_stage: Type.Integer({ description: 'Seconds spent in the stage: until left_at, or until now while the deal is there', examples: [86400] }),
}, { description: 'A stay of a deal in a stage' });

const ElementSchema = Type.Object({
  key: Type.String({ description: 'The evidence key', examples: ['budget_confirmed'] }),
  title: Type.String({ description: 'Its title in the library', examples: ['Budget confirmed'] }),
  met: Type.Boolean({ description: 'True when the deal has this evidence', examples: [false] }),
  evidence: Nullable(dealEvidence.schemas.record),
}, { description: 'An element of a checklist stage, met or missing' });

const StageChecklistSchema = Type.Object({
  stage_id: Type.String({ description: 'The deal stage', examples: ['stg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  stage_name: Type.String({ description: 'Its name', examples: ['Proposal'] }),
  checklist_stage_id: Nullable(Type.String({ description: 'The checklist stage it links; null without a link (nothing required)', examples: ['cks_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  checklist_stage_name: Nullable(Type.String({ description: 'Name of the checklist stage', examples: ['Validate'] })),
  exit_criteria: Nullable(Type.String({ description: 'The checklist stage\'s exit criteria', examples: ['The economic buyer has seen the business case'] })),
  channel_scripts: Type.Record(Type.String(), Type.String(), { description: 'The checklist stage\'s scripts by channel', examples: [{ call: 'Ask who signs.' }] }),
  ready: Type.Boolean({ description: 'True when every required element is met (the deal may enter without force)', examples: [false] }),
  missing: Type.Array(Type.String(), { description: 'The required keys not met', examples: [['budget_confirmed']] }),
  required: Type.Array(ElementSchema, { description: 'Required elements' }),
  recommended: Type.Array(ElementSchema, { description: 'Recommended elements' }),
}, { description: 'What a stage asks of the deal' });

const ChecklistSchema = Type.Object({
  deal_id: Type.String({ description: 'The deal', examples: ['dea_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  current: StageChecklistSchema,
  next: Nullable(StageChecklistSchema),
  evidence: Type.Array(dealEvidence.schemas.record, { description: 'All evidence on the deal, by key' }),
}, { description: 'The checklist of a deal: its stage and the next stage of its pipeline' });

export async function dealRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.services.database.db;
  const dialect = () => app.services.database.dialect;
  await app.register(pipelineRoutes);

  app.get('/deals/summary', {
    schema: {
      tags, summary: 'Summarize deals by stage',
      description: 'For every stage of a pipeline (the default pipeline unless `pipeline_id` is given): the number of deals and, per currency, the sum of amounts and of weighted amounts (amount × probability). Read from totals maintained in each deal write\'s transaction: exact, and as fast at 100,000 deals as at 10. Unknown pipeline: 404 `Pipeline not found`.',
      querystring: SummaryQuery, response: { 200: Data(SummarySchema, 'The summary'), ...errorResponses(404) },
    },
  }, async (req) => ({ data: await dealsSummary(db(), app.services.database.dialect, req.scope, req.query.pipeline_id) }));

  app.get('/deals/:id/stage-history', {
    schema: {
      tags, summary: 'Get the stage history of a deal', description: 'The stages the deal has been in, newest first, with when it entered and left each and the seconds it spent there.',
      params, querystring: PipelineQuery, response: { 200: ListOf(HistorySchema, 'A page of the stage history'), ...errorResponses(404) },
    },
  }, async (req) => {
    const deal = await getRow(deals, db(), dialect(), req.scope, req.params.id);
    const rows = () => selectIn(db(), 'deal_stage_history', req.scope).where('deal_id', '=', deal.id);
    return paginate(req, req.query, {
      fetch: async (page) => {
        let q = rows().selectAll();
        if (page.after !== undefined) q = q.where('id', '<', String(page.after));
        return q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute();
      },
      count: async () => Number((await rows().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n),
      keyOf: (row) => row.id,
      map: (page) => presentStageHistory(db(), req.scope, page),
    });
  });

  app.get('/deals/:id/checklist', {
    schema: {
      tags, summary: 'Get the checklist of a deal',
      description: 'For the deal\'s stage and the next stage of its pipeline (null after the last): the linked checklist stage, each required and recommended element met or missing with its evidence, `missing` and `ready` (whether the deal may enter without force); and all evidence on the deal.',
      params, response: { 200: Data(ChecklistSchema, 'The checklist'), ...errorResponses(404) },
    },
  }, async (req) => ({ data: await dealChecklist(db(), dialect(), req.scope, req.params.id) }));

  app.get('/contacts/:id/deals', {
    schema: {
      tags, summary: 'List the deals of a contact', description: 'The deals the contact is on, newest first, with an exact `total`; 404 `Contact not found`.',
      params: contacts.schemas.params, querystring: PipelineQuery, response: { 200: ListOf(deals.schemas.record, 'A page of the contact\'s deals'), ...errorResponses(404) },
    },
  }, async (req) => {
    const contact = await getRow(contacts, db(), dialect(), req.scope, req.params.id);
    return paginate(req, req.query, { ...contactDealsPage(db(), req.scope, contact.id), keyOf: (row) => row.id });
  });
}
