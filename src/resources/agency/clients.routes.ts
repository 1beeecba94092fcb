// An agency's clients (/v1/agency): create, link through a grant code, list, read, unlink, and
// what the agency spent in them. Any key of an agency organization with the `agency` scopes may
// manage clients; acting inside a client takes an agency key and `X-Org-Id`. These routes always
// act on the key's own organization, in the key's mode.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { forbidden } from '../../platform/errors.ts';
import { paginate } from '../../platform/pagination.ts';
import { Data, errorResponses, ListOf } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import * as s from './agency.schemas.ts';
import * as store from './clients.store.ts';

const tags = ['Agency'];

export async function agencyClientRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config, links } = app.services;
  const db = database.db;

  // After authentication (the root hook): only an agency organization has clients.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.apiKey && !request.apiKey.orgIsAgency) return done(forbidden('This organization is not an agency: only agency organizations have clients'));
    done();
  });

  app.post('/agency/clients', {
    schema: {
      tags, summary: 'Create a client organization',
      description: 'Creates an organization (with its starting credits and sandbox data, like any organization, and no keys of its own) linked to the agency in the key\'s mode. Agency keys of that mode then act for it with `X-Org-Id: <org_id>`.',
      body: s.ClientCreateSchema, response: { 201: Data(s.ClientSchema, 'The new client'), ...errorResponses() },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.createClient(w, config, req.body.name)));

  app.post('/agency/clients/link', {
    schema: {
      tags, operationId: 'linkClientOrganization', summary: 'Link an existing organization with its grant code',
      description: 'Redeems a code the client made with `POST /auth/v1/agency-grants`: single use, valid 24 hours, and only with a key of the mode it was made in. An unknown, used, expired or revoked code is 400; a client already linked is 409.',
      body: s.ClientLinkSchema, response: { 201: Data(s.ClientSchema, 'The linked client'), ...errorResponses(409) },
    },
  }, async (req, reply) => {
    let linked = '';
    await mutate(req, reply, 201, async (w) => {
      const client = await store.redeemGrant(w, req.body.grant_code);
      linked = client.org_id;
      return client;
    });
    // A refusal cached before the link must not outlive it here.
    links.forget(linked);
  });

  app.get('/agency/clients', {
    schema: {
      tags, summary: 'List client organizations',
      description: 'The clients linked to the agency in the key\'s mode, newest organization first.',
      querystring: s.ClientQuerySchema, response: { 200: ListOf(s.ClientSchema, 'A page of clients'), ...errorResponses() },
    },
  }, (req) => paginate(req, req.query, {
    fetch: (page) => store.listClients(db, req.scope, page),
    count: () => store.countClients(db, req.scope),
    keyOf: (row) => row.client_org_id,
    map: (rows) => rows.map(store.toClient),
  }));

  app.get('/agency/clients/:org_id', {
    schema: {
      tags, summary: 'Get a client organization', description: 'A client linked in the key\'s mode; any other organization is 404 `Client not found`.',
      params: s.ClientParams, response: { 200: Data(s.ClientSchema, 'The client'), ...errorResponses(404) },
    },
  }, async (req) => ({ data: await store.findClient(db, req.scope, req.params.org_id) }));

  app.delete('/agency/clients/:org_id', {
    schema: {
      tags, summary: 'Unlink a client organization',
      description: 'Ends the agency\'s access to the client in the key\'s mode: agency keys naming it are refused with 403 at once on this process and within two seconds on others. The client organization and its data remain.',
      params: s.ClientParams, response: { 200: Data(s.UnlinkedSchema, 'The client was unlinked'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.unlinkClient(w, req.params.org_id)).then(() => links.forget(req.params.org_id)));

  app.get('/agency/usage', {
    schema: {
      tags, operationId: 'getAgencyUsage', summary: 'Get what the agency spent in its clients this month',
      description: 'For the current calendar month (UTC) and the key\'s mode: the credits the agency\'s keys debited in each client\'s ledger (every debit made through an agency key records the acting organization).',
      response: { 200: Data(s.AgencyUsageSchema, 'Debits per client'), ...errorResponses() },
    },
  }, async (req) => ({ data: await store.agencyUsage(db, req.scope) }));
}
