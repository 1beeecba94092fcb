import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { badRequest } from '../../platform/errors.ts';
import { paginate } from '../../platform/pagination.ts';
import { Data, DeletedSchema, errorResponses, IdParams, ListOf } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import * as s from './campaigns.schemas.ts';
import * as store from './campaigns.store.ts';

const tags = ['Campaigns'];
const params = IdParams('cpg', 'campaign');
const created = (description: string) => ({ 201: Data(s.CampaignSchema, description) });

export async function campaignRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = app.services.database.db;

  app.get('/campaigns', {
    schema: {
      tags, summary: 'List campaigns', description: 'Lists campaigns, newest first, with an exact `total`; filter by `status` and `list_id`.',
      querystring: s.CampaignQuerySchema, response: { 200: ListOf(s.CampaignSchema, 'A page of campaigns'), ...errorResponses() },
    },
  }, (req) => paginate(req, req.query, {
    fetch: (page) => store.listCampaigns(db, req.scope, req.query, page),
    count: () => store.countCampaigns(db, req.scope, req.query),
    keyOf: (row) => row.id,
    map: (rows) => rows.map(store.toCampaign),
  }));

  app.post('/campaigns', {
    schema: {
      tags, summary: 'Create a multichannel campaign',
      description: 'Creates a campaign as a `draft`. `list_id` (the audience) must be a list of type contacts or leads: an unknown list is 404 `List not found`, another type 400. Every step\'s channel must be one of `channels`; an unknown time zone or an empty sending window is 422.',
      body: s.CampaignCreateSchema, response: { ...created('The created campaign'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.createCampaign(w, req.body)));

  app.get('/campaigns/:id', {
    schema: { tags, summary: 'Get a campaign', description: 'Reads one campaign; 404 `Campaign not found` if it does not exist or was deleted.', params, response: { 200: Data(s.CampaignSchema, 'The campaign'), ...errorResponses(404) } },
  }, async (req) => ({ data: store.toCampaign(await store.findCampaign(db, req.scope, req.params.id)) }));

  app.patch('/campaigns/:id', {
    schema: {
      tags, summary: 'Update a campaign',
      description: 'Changes the fields given. Only draft or paused campaigns can be edited (otherwise 409), and a launched campaign keeps its audience. An empty body is 400 `No fields to update`.',
      params, body: s.CampaignUpdateSchema, response: { 200: Data(s.CampaignSchema, 'The updated campaign'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => {
    if (Object.keys(req.body).length === 0) throw badRequest('No fields to update');
    return mutate(req, reply, 200, (w) => store.updateCampaign(w, req.params.id, req.body));
  });

  app.delete('/campaigns/:id', {
    schema: { tags, summary: 'Delete a campaign', description: 'Deletes a campaign in any state, with its enrollments; reading it afterwards is 404.', params, response: { 200: Data(DeletedSchema('cpg', 'campaign'), 'The campaign was deleted'), ...errorResponses(404) } },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.deleteCampaign(w, req.params.id)));

  app.post('/campaigns/:id/launch', {
    schema: {
      tags, summary: 'Launch a drafted campaign',
      description: 'Moves a draft to `active`, stamps `launched_at` and enrolls the contacts of its audience list that are not suppressed (`audience_count` is the exact number enrolled). Costs one credit per enrolled contact, debited in the same transaction: with too few credits the launch is refused with 402 and nothing changes. Not a draft: 409 `Campaign is not a draft`; no audience list: 400.',
      params, response: { ...created('The launched campaign'), ...errorResponses(402, 404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.launchCampaign(w, req.params.id)));

  app.post('/campaigns/:id/pause', {
    schema: { tags, summary: 'Pause a campaign', description: 'Moves an active campaign to `paused`; any other state is 409.', params, response: { ...created('The paused campaign'), ...errorResponses(404, 409) } },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.pauseCampaign(w, req.params.id)));

  app.post('/campaigns/:id/resume', {
    schema: { tags, summary: 'Resume a campaign', description: 'Moves a paused campaign back to `active`; any other state is 409.', params, response: { ...created('The resumed campaign'), ...errorResponses(404, 409) } },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.resumeCampaign(w, req.params.id)));
}
