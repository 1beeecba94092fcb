// Who the caller is: the organization a request acts on and the mode of its key. Clients (the web
// dashboard among them) read it once after sign-in to name the organization and flag test mode.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { notFound } from '../../platform/errors.ts';
import { Data, errorResponses, StringEnum, Timestamp } from '../../platform/schemas.ts';

const tags = ['Organization'];

const OrganizationSchema = Type.Object({
  id: Type.String({ description: 'Identifier of the organization the request acts on', examples: ['org_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  name: Type.String({ description: 'Name of the organization', examples: ['Acme Corp'] }),
  is_agency: Type.Boolean({ description: 'Whether the organization is an agency', examples: [false] }),
  created_at: Timestamp('When the organization was created, unix seconds'),
  mode: StringEnum(['live', 'test'] as const, { description: 'The mode of the calling key: which data set the request sees', examples: ['test'] }),
}, { description: 'The organization of the request and the calling key\'s mode' });

export async function organizationRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = app.services.database.db;

  app.get('/organization', {
    schema: {
      tags, summary: 'Get the organization of the key',
      description: 'The organization the request acts on (the key\'s own, or the client named by `X-Org-Id` for an agency key) and the mode of the calling key.',
      response: { 200: Data(OrganizationSchema, 'The organization'), ...errorResponses(404) },
    },
  }, async (req) => {
    const org = await db.selectFrom('organizations').selectAll().where('id', '=', req.scope.orgId).executeTakeFirst();
    if (!org) throw notFound('Organization not found');
    return { data: { id: org.id, name: org.name, is_agency: org.is_agency === 1, created_at: org.created_at, mode: req.scope.mode } };
  });
}
