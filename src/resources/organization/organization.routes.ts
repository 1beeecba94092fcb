// Who the caller is: the organization a request acts on and the mode of its key, with the
// organization's settings. Clients (the web dashboard among them) read it once after sign-in to name
// the organization and flag test mode.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Selectable } from 'kysely';
import type { DB, Mode } from '../../db/schema.ts';
import { badRequest, forbidden, notFound, validationError } from '../../platform/errors.ts';
import { isPhoneRegion } from '../../platform/phone.ts';
import { PHONE_REGION } from '../../platform/phone-region.ts';
import { Data, errorResponses, Str, StringEnum, Timestamp } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';

const tags = ['Organization'];

// Described on the union, so that the description reaches the document and the generated client.
const PhoneRegion = (description: string) => Type.Union([Str({ description, minLength: 2, maxLength: 2, examples: ['GB'] }), Type.Null()], { description, examples: ['GB'] });
const PHONE_REGION_DOC = 'The country (ISO 3166-1 alpha-2, `GB`, `US`) a phone number written without its country code is read in, for contacts and suppressions; null (the default) takes international numbers (`+44 20 7946 0000`) only';

const OrganizationSchema = Type.Object({
  id: Type.String({ description: 'Identifier of the organization the request acts on', examples: ['org_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  name: Type.String({ description: 'Name of the organization', examples: ['Acme Corp'] }),
  is_agency: Type.Boolean({ description: 'Whether the organization is an agency', examples: [false] }),
  phone_region: PhoneRegion(PHONE_REGION_DOC),
  created_at: Timestamp('When the organization was created, unix seconds'),
  mode: StringEnum(['live', 'test'] as const, { description: 'The mode of the calling key: which data set the request sees', examples: ['test'] }),
}, { description: 'The organization of the request and the calling key\'s mode' });

const OrganizationUpdateSchema = Type.Object({
  phone_region: Type.Optional(PhoneRegion(`${PHONE_REGION_DOC}. Given in any case, stored upper-case; a code no phone numbering plan has is 422`)),
}, { additionalProperties: false, description: 'The settings to change' });

const organizationOf = (org: Selectable<DB['organizations']>, mode: Mode) =>
  ({ id: org.id, name: org.name, is_agency: org.is_agency === 1, phone_region: org.phone_region, created_at: org.created_at, mode });

export async function organizationRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = app.services.database.db;

  app.get('/organization', {
    schema: {
      tags, summary: 'Get the organization of the key',
      description: 'The organization the request acts on (the key\'s own, or the client named by `X-Org-Id` for an agency key), its settings and the mode of the calling key.',
      response: { 200: Data(OrganizationSchema, 'The organization'), ...errorResponses(404) },
    },
  }, async (req) => {
    const org = await db.selectFrom('organizations').selectAll().where('id', '=', req.scope.orgId).executeTakeFirst();
    if (!org) throw notFound('Organization not found');
    return { data: organizationOf(org, req.scope.mode) };
  });

  app.patch('/organization', {
    schema: {
      tags, operationId: 'updateOrganization', summary: 'Change the organization\'s settings',
      description: 'Changes the settings given (`phone_region`). They are the organization\'s, not a mode\'s: both modes read them, so only a live key changes them (a test key is 403). An empty body is 400 `No fields to update`. Records `organization.updated` (in the mode of the key: live) with the earlier values in `previous_attributes`.',
      body: OrganizationUpdateSchema, response: { 200: Data(OrganizationSchema, 'The organization'), ...errorResponses(404) },
    },
  }, async (req, reply) => {
    if (Object.keys(req.body).length === 0) throw badRequest('No fields to update');
    if (req.scope.mode !== 'live') throw forbidden('The organization\'s settings apply to both modes: change them with a live key');
    const region = req.body.phone_region?.toUpperCase() ?? null;
    if (region !== null && !isPhoneRegion(region)) {
      throw validationError([{ loc: ['body', 'phone_region'], msg: 'value is not a region phone numbers can be read in: an ISO 3166-1 alpha-2 code like GB or US', type: 'value_error.phone_region' }]);
    }
    await mutate(req, reply, 200, async (w) => {
      const before = await w.tx.selectFrom('organizations').select('phone_region').where('id', '=', w.scope.orgId).executeTakeFirst();
      const org = await w.tx.updateTable('organizations').set({ phone_region: region }).where('id', '=', w.scope.orgId).returningAll().executeTakeFirst();
      if (!org || !before) throw notFound('Organization not found');
      // Later writes of this transaction (a group commit's) read the new region.
      w.changed(PHONE_REGION);
      const record = organizationOf(org, w.scope.mode);
      w.emit('organization.updated', record, { phone_region: before.phone_region });
      return record;
    });
  });
}
