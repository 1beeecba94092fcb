// The lifecycle operations of campaigns; their CRUD routes come from campaigns.resource.ts.
import type { FastifyInstance } from 'fastify';
import { Data, errorResponses } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import { campaigns } from './campaigns.resource.ts';
import * as store from './campaigns.store.ts';

const tags = [campaigns.tag];
const params = campaigns.schemas.params;
const created = (description: string) => ({ 201: Data(campaigns.schemas.record, description) });
const idOf = (params: unknown) => (params as { id: string }).id;

export async function campaignRoutes(app: FastifyInstance): Promise<void> {
  app.post('/campaigns/:id/launch', {
    schema: {
      tags, operationId: 'launchCampaign', summary: 'Launch a drafted campaign',
      description: 'Moves a draft to `active`, stamps `launched_at` and enrolls the contacts of its audience list that are not suppressed (`audience_count` is the exact number enrolled). Costs one credit per enrolled contact, debited in the same transaction: with too few credits the launch is refused with 402 and nothing changes. Not a draft: 409 `Campaign is not a draft`; no steps: 409; no audience list: 400.',
      params, response: { ...created('The launched campaign'), ...errorResponses(402, 404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.launchCampaign(w, idOf(req.params))));

  app.post('/campaigns/:id/pause', {
    schema: { tags, summary: 'Pause a campaign', description: 'Moves an active campaign to `paused`; any other state is 409.', params, response: { ...created('The paused campaign'), ...errorResponses(404, 409) } },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.pauseCampaign(w, idOf(req.params))));

  app.post('/campaigns/:id/resume', {
    schema: { tags, summary: 'Resume a campaign', description: 'Moves a paused campaign back to `active`; any other state, or a campaign without steps, is 409.', params, response: { ...created('The resumed campaign'), ...errorResponses(404, 409) } },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.resumeCampaign(w, idOf(req.params))));
}
