// The operation of campaigns beyond their CRUD and lifecycle (campaigns.resource.ts): the launch
// preflight, read without changing anything (the launch runs the same checks as its guard).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { getRow } from '../../platform/resource/store.ts';
import { Data, errorResponses, StringEnum } from '../../platform/schemas.ts';
import { nowSeconds } from '../../platform/clock.ts';
import { campaigns } from './campaigns.resource.ts';
import { CHECK_NAMES, CHECK_STATUSES } from './preflight-checks.ts';
import { preflight } from './preflight.ts';

const CheckSchema = Type.Object({
  name: StringEnum(CHECK_NAMES, { description: 'What the check is about', examples: ['domains'] }),
  status: StringEnum(CHECK_STATUSES, { description: '`fail` blocks the launch (unless forced); `warn` never does', examples: ['fail'] }),
  detail: Type.String({ description: 'What the check found, in words', examples: ['mail.example.com is not verified: DMARC (No TXT record at _dmarc.mail.example.com)'] }),
}, { title: 'PreflightCheck', description: 'One check of the launch preflight' });

export const PreflightSchema = Type.Object({
  ready: Type.Boolean({ description: 'True when no check fails: the launch would not be refused by the preflight', examples: [false] }),
  checks: Type.Array(CheckSchema, { description: 'Every check, in a fixed order: steps, audience, mailboxes, domains, unsubscribe, schedule, credits' }),
}, { title: 'CampaignPreflight', description: 'What must hold before a campaign\'s messages go out' });

export async function campaignRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.services;

  app.get('/campaigns/:id/launch/preflight', {
    schema: {
      tags: [campaigns.tag], operationId: 'preflightCampaignLaunch', summary: 'Check a campaign before its launch',
      description: 'Runs the checks the launch runs, changing nothing: `steps` (present, each with what its channel needs, and every `{{ variable }}` of a subject or body set for every contact enrolled, naming up to 5 that lack one), `audience` (its size, how many are suppressed or have no e-mail address; none left fails), `mailboxes` (attached for e-mail steps, and the sending days their limits need: over 14 warns), `domains` (the sending domain of each mailbox verified: SPF, DKIM and DMARC), `unsubscribe` (campaign e-mail carries a one-click List-Unsubscribe; a body without a visible unsubscribe warns), `schedule` (the sending window opens within 7 days) and `credits` (the balance covers every message the campaign may send, one credit each: contacts enrolled × e-mail steps; each is debited when it is sent). They follow the rules Gmail and Yahoo set for bulk senders. `ready` is false when any check fails; the launch is then refused with 409 unless forced. Any state; 404 `Campaign not found`.',
      params: campaigns.schemas.params, response: { 200: Data(PreflightSchema, 'The checks and whether the campaign is ready'), ...errorResponses(404) },
    },
  }, async (req) => {
    const { db, dialect } = database;
    const row = await getRow(campaigns, db, dialect, req.scope, req.params.id);
    return { data: await preflight(db, req.scope, row, nowSeconds()) };
  });
}
