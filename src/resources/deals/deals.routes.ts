// The operations of deals beyond their CRUD (which comes from deals.resource.ts): the summary, the
// stage history, the contacts on a deal and a contact's deals, and the pipelines (pipelines.routes.ts).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { paginate } from '../../platform/pagination.ts';
import { getRow } from '../../platform/resource/store.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { Data, DeletedSchema, errorResponses, ListOf, Nullable, Str } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import { contacts } from '../contacts/contacts.resource.ts';
import { contactDealsPage, dealContactsPage, putDealContact, removeDealContact } from './deal-contacts.ts';
import { deals } from './deals.resource.ts';
import { PipelineQuery } from './pipelines.schemas.ts';
import { presentStageHistory } from './stage-history.ts';
import { pipelineRoutes } from './pipelines.routes.ts';
import { dealsSummary, SummaryQuery, SummarySchema } from './summary.ts';

const tags = [deals.tag];
const params = deals.schemas.params;
const contactParams = Type.Object({ id: params.properties.id, contact_id: Str({ description: 'Identifier of the contact', maxLength: 64, examples: ['con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }) });

const HistorySchema = Type.Object({
  id: Type.String({ description: 'Identifier of the history row', examples: ['dsh_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  deal_id: Type.String({ description: 'The deal', examples: ['dea_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  pipeline_id: Type.String({ description: 'The pipeline of the stage', examples: ['pip_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  stage_id: Type.String({ description: 'The stage', examples: ['stg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  stage_name: Nullable(Type.String({ description: 'Name of the stage now; null once the stage was deleted', examples: ['Proposal'] })),
  entered_at: Type.Integer({ description: 'When the deal entered the stage, unix seconds', examples: [1767225600] }),
  left_at: Nullable(Type.Integer({ description: 'When the deal left the stage, unix seconds; null while it is there', examples: [1767312000] })),
  seconds_in_stage: Type.Integer({ description: 'Seconds spent in the stage: until left_at, or until now while the deal is there', examples: [86400] }),
}, { description: 'A stay of a deal in a stage' });

const LinkSchema = Type.Object({
  deal_id: Type.String({ description: 'The deal', examples: ['dea_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  contact_id: Type.String({ description: 'The contact', examples: ['con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  role: Nullable(Type.String({ description: 'The contact\'s role on the deal', examples: ['Decision maker'] })),
  created_at: Type.Integer({ description: 'When the contact was put on the deal, unix seconds', examples: [1767225600] }),
  updated_at: Type.Integer({ description: 'When the role last changed, unix seconds', examples: [1767225600] }),
  contact: contacts.schemas.record,
}, { description: 'A contact on a deal' });

const RoleSchema = Type.Object({
  role: Type.Optional(Nullable(Str({ description: 'The contact\'s role on the deal; null clears it, omitted keeps it', maxLength: 100, examples: ['Decision maker'] }))),
}, { additionalProperties: false, description: 'The contact\'s role on the deal' });

export async function dealRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.services.database.db;
  await app.register(pipelineRoutes);

  app.get('/deals/summary', {
    schema: {
      tags, summary: 'Summarize deals by stage',
      description: 'For every stage of a pipeline (the default pipeline unless `pipeline_id` is given): the number of deals and, per currency, the sum of amounts and of weighted amounts (amount × probability). Read from totals maintained in each deal write\'s transaction: exact, and as fast at 100,000 deals as at 10. Unknown pipeline: 404 `Pipeline not found`.',
      querystring: SummaryQuery, response: { 200: Data(SummarySchema, 'The summary'), ...errorResponses(404) },
    },
  }, async (req) => ({ data: await dealsSummary(db(), req.scope, req.query.pipeline_id) }));

  app.get('/deals/:id/stage-history', {
    schema: {
      tags, summary: 'Get the stage history of a deal', description: 'The stages the deal has been in, newest first, with when it entered and left each and the seconds it spent there.',
      params, querystring: PipelineQuery, response: { 200: ListOf(HistorySchema, 'A page of the stage history'), ...errorResponses(404) },
    },
  }, async (req) => {
    const deal = await getRow(deals, db(), req.scope, req.params.id);
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

  app.get('/deals/:id/contacts', {
    schema: {
      tags, summary: 'List the contacts on a deal', description: 'The contacts on the deal with their roles, by contact id (newest contact first), with an exact `total`.',
      params, querystring: PipelineQuery, response: { 200: ListOf(LinkSchema, 'A page of the deal\'s contacts'), ...errorResponses(404) },
    },
  }, async (req) => {
    const deal = await getRow(deals, db(), req.scope, req.params.id);
    const page = dealContactsPage(db(), req.scope, deal.id);
    return paginate(req, req.query, { ...page, keyOf: (l) => l.contact_id });
  });

  app.put('/deals/:id/contacts/:contact_id', {
    schema: {
      tags, summary: 'Put a contact on a deal',
      description: 'Puts the contact on the deal with an optional `role`, or changes its role there (idempotent: putting it again changes nothing but the role given). Records `deal.contact_added` or `deal.contact_updated`. Unknown deal: 404 `Deal not found`; unknown contact: 404 `Contact not found`.',
      params: contactParams, body: RoleSchema, response: { 200: Data(LinkSchema, 'The contact on the deal'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 200, async (w) => (await putDealContact(w, req.params.id, req.params.contact_id, req.body?.role)).link));

  app.delete('/deals/:id/contacts/:contact_id', {
    schema: {
      tags, summary: 'Remove a contact from a deal', description: 'Takes the contact off the deal (both stay). Not on the deal: 404 `Contact is not on this deal`.',
      params: contactParams, response: { 200: Data(DeletedSchema('con', 'contact link'), 'The contact was removed from the deal'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => removeDealContact(w, req.params.id, req.params.contact_id)));

  app.get('/contacts/:id/deals', {
    schema: {
      tags, summary: 'List the deals of a contact', description: 'The deals the contact is on, newest first, with an exact `total`; 404 `Contact not found`.',
      params: contacts.schemas.params, querystring: PipelineQuery, response: { 200: ListOf(deals.schemas.record, 'A page of the contact\'s deals'), ...errorResponses(404) },
    },
  }, async (req) => {
    const contact = await getRow(contacts, db(), req.scope, req.params.id);
    return paginate(req, req.query, { ...contactDealsPage(db(), req.scope, contact.id), keyOf: (row) => row.id });
  });
}
