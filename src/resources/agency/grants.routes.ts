// Agency grants (/auth/v1/agency-grants): a client organization offers an agency access with a
// single-use code, sees what it granted and revokes it. Like key management, these routes need a
// key with the scope `*` and act on the key's own organization, in the key's mode.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { paginate } from '../../platform/pagination.ts';
import { Data, errorResponses, ListOf } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import * as s from './agency.schemas.ts';
import * as store from './grants.store.ts';

const tags = ['Agency grants'];

export async function agencyGrantRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, links } = app.services;
  const db = database.db;

  app.post('/agency-grants', {
    schema: {
      tags, summary: 'Grant an agency access',
      description: 'Makes a single-use code, valid 24 hours, to hand to an agency, which redeems it with `POST /v1/agency/clients/link`. The code is in this response only. It links the mode of the key that makes it: a live key\'s grant lets the agency\'s live keys act on live data; a test key\'s, its test keys on the sandbox data set.',
      response: { 201: Data(s.CreatedGrantSchema, 'The grant and its code'), ...errorResponses() },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.createGrant(w)));

  app.get('/agency-grants', {
    schema: {
      tags, summary: 'List agency grants',
      description: 'The grants this organization made in the key\'s mode, newest first, with the agency that redeemed each and its status. Codes are never shown again.',
      querystring: s.GrantQuerySchema, response: { 200: ListOf(s.GrantSchema, 'A page of grants'), ...errorResponses() },
    },
  }, (req) => paginate(req, req.query, {
    fetch: (page) => store.listGrants(db, req.scope, page),
    count: () => store.countGrants(db, req.scope),
    keyOf: (row) => row.id,
    map: (rows) => rows.map(store.toGrant),
  }));

  app.delete('/agency-grants/:id', {
    schema: {
      tags, summary: 'Revoke an agency grant',
      description: 'Revokes the grant: an unused code can no longer be redeemed, and an agency linked through it is unlinked, so its keys are refused with 403 at once on this process and within two seconds on others. Revoking a revoked grant answers it unchanged.',
      params: s.GrantParams, response: { 200: Data(s.GrantSchema, 'The revoked grant'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.revokeGrant(w, req.params.id)).then(() => links.forget(req.scope.orgId)));
}
