import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { badRequest } from '../../platform/errors.ts';
import { paginate } from '../../platform/pagination.ts';
import { Data, DeletedSchema, errorResponses, IdParams, ListOf } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import * as s from './companies.schemas.ts';
import * as store from './companies.store.ts';

const tags = ['Companies'];
const params = IdParams('cmp', 'company');

export async function companyRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.services;
  const db = database.db;

  app.get('/companies', {
    schema: {
      tags, summary: 'Search company data',
      description: 'Lists companies, newest first, with an exact `total`. Filters combine: `name` (contains, case-insensitive), `domain` (exact, normalized like on write), `industry`, `country`, `min_employees`, `max_employees`.',
      querystring: s.CompanyQuerySchema, response: { 200: ListOf(s.CompanySchema, 'A page of companies'), ...errorResponses() },
    },
  }, (req) => paginate(req, req.query, {
    fetch: (page) => store.listCompanies(db, database.dialect, req.scope, req.query, page),
    count: () => store.countCompanies(db, database.dialect, req.scope, req.query),
    keyOf: (row) => row.id,
    map: (rows) => store.toCompanies(db, req.scope, rows),
  }));

  app.post('/companies', {
    schema: {
      tags, summary: 'Create a company',
      description: 'Creates a company and links the contacts whose work e-mail has its domain. The domain is normalized (`https://www.Example.com/x` → `example.com`); a domain that another company of the organization already has is 409 naming that company; text that is not a domain is 422.',
      body: s.CompanyCreateSchema, response: { 201: Data(s.CompanySchema, 'The created company'), ...errorResponses(409) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.createCompany(w, req.body)));

  app.get('/companies/:id', {
    schema: { tags, summary: 'Get a company', description: 'Reads one company; 404 `Company not found` if it does not exist or was deleted.', params, response: { 200: Data(s.CompanySchema, 'The company'), ...errorResponses(404) } },
  }, async (req) => {
    const [company] = await store.toCompanies(db, req.scope, [await store.findCompany(db, req.scope, req.params.id)]);
    return { data: company };
  });

  app.patch('/companies/:id', {
    schema: {
      tags, summary: 'Update a company',
      description: 'Changes the fields given. A new domain moves the links: contacts of the old domain are unlinked, those of the new one linked. An empty body is 400 `No fields to update`.',
      params, body: s.CompanyUpdateSchema, response: { 200: Data(s.CompanySchema, 'The updated company'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => {
    if (Object.keys(req.body).length === 0) throw badRequest('No fields to update');
    return mutate(req, reply, 200, (w) => store.updateCompany(w, req.params.id, req.body));
  });

  app.delete('/companies/:id', {
    schema: { tags, summary: 'Delete a company', description: 'Deletes a company and unlinks its contacts (their `company_id` becomes null); reading it afterwards is 404.', params, response: { 200: Data(DeletedSchema('cmp', 'company'), 'The company was deleted'), ...errorResponses(404) } },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.deleteCompany(w, req.params.id)));
}
