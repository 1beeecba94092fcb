// The operation of sending domains beyond their CRUD (domains.resource.ts): checking the records.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Data, errorResponses } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import { sendingDomains } from './domains.resource.ts';
import { lookUpRecords, recordCheck } from './verification.ts';

export async function domainRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config } = app.services;

  app.post('/domains/:id/verify', {
    schema: {
      tags: [sendingDomains.tag], operationId: 'verifyDomain', summary: 'Verify a sending domain',
      description: `Looks up each of the domain's DNS records now and answers the domain with each record's \`status\` and \`finding\` (\`No TXT record at _dmarc.example.com\`, \`SPF record does not include …\`). The domain is \`verified\` when every record is found as it should be, \`failed\` otherwise, and records \`domain.verified\` or \`domain.verification_failed\`. DNS servers that do not answer within the configured timeout (5 s by default) make a failed record saying so. Mail is signed with the domain's DKIM key only while it is verified. Looks up real DNS in test mode too (a lookup reaches no one). 404 \`${sendingDomains.notFound}\`.`,
      params: sendingDomains.schemas.params, response: { 200: Data(sendingDomains.schemas.record, 'The domain with what the check found'), ...errorResponses(404) },
    },
  }, async (req, reply) => {
    const checked = await lookUpRecords(database, config, req.scope, req.params.id);
    return mutate(req, reply, 200, (w) => recordCheck(w, checked));
  });
}
