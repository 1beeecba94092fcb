// The operations of quotes beyond their CRUD (quotes.resource.ts) and lifecycle (quotes.lifecycle.ts):
// the duplicate; the products a quote can use; the quotes of a contact and of a deal. The public
// side (no API key) is in public.routes.ts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { paginate } from '../../platform/pagination.ts';
import type { Resource } from '../../platform/resource/define.ts';
import { countRows, getRow, listRows, present } from '../../platform/resource/store.ts';
import { Data, errorResponses, ListOf, Str } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import { contacts } from '../contacts/contacts.resource.ts';
import { deals } from '../deals/deals.resource.ts';
import { PipelineQuery } from '../deals/pipelines.schemas.ts';
import { products } from '../products/products.resource.ts';
import { quotes } from './quotes.resource.ts';
import { duplicateQuote } from './transitions.ts';

const tags = [quotes.tag];
const params = quotes.schemas.params;
const record = quotes.schemas.record;


/** A page of `r` with the request's paging and these filters (the kernel's list, without its cache). */
function pageOf(app: FastifyInstance, req: FastifyRequest, r: Resource, filters: Record<string, unknown>) {
  const { db, dialect } = app.services.database;
  const query = { ...(req.query as Record<string, unknown>), ...filters };
  const count = () => countRows(r, db, dialect, req.scope, query);
  return paginate(req, req.query as Record<string, unknown>, { fetch: (page) => listRows(r, db, dialect, req.scope, query, page, count), count, keyOf: (row) => row.id, map: (rows) => present(r, db, req.scope, rows) });
}

const QuotableQuery = Type.Object({
  ...PipelineQuery.properties,
  currency: Type.Optional(Str({ description: 'Only products priced in this currency (a quote can use only those of its own)', minLength: 3, maxLength: 3, examples: ['USD'] })),
}, { additionalProperties: false });

export async function quoteRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.services.database.db;

  // A duplicate makes a new quote (201); the moves of a quote are its lifecycle's (quotes.lifecycle.ts).
  app.post('/quotes/:id/duplicate', {
    schema: {
      tags, summary: 'Duplicate a quote', params, response: { 201: Data(record, 'The quote'), ...errorResponses(404, 409) },
      description: 'Makes a new draft with the quote\'s title, deal, contact, currency, lines, tax rate, validity, terms and custom fields, and the next number, whatever the state of the quote. Records `quote.created`. Lines are checked again: a product made inactive since is 400.',
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => duplicateQuote(w, req.params.id)));

  app.get('/quotes/quotable-products', {
    schema: {
      tags, operationId: 'listQuotableProducts', summary: 'List the products a quote can use', description: 'The active products, newest first, with an exact `total`; `currency` keeps those of one currency.',
      querystring: QuotableQuery, response: { 200: ListOf(products.schemas.record, 'A page of active products'), ...errorResponses() },
    },
  }, (req) => pageOf(app, req, products, { active: true }));

  for (const [parent, column] of [[contacts, 'contact_id'], [deals, 'deal_id']] as const) {
    app.get(`/${parent.plural}/:id/quotes`, {
      schema: {
        tags, summary: `List the quotes of ${parent.name === 'contact' ? 'a contact' : 'a deal'}`,
        description: `The quotes with this \`${column}\`, newest first, with an exact \`total\` and their state as of now; 404 \`${parent.notFound}\`.`,
        params: parent.schemas.params, querystring: PipelineQuery, response: { 200: ListOf(record, `A page of the ${parent.name}'s quotes`), ...errorResponses(404) },
      },
    }, async (req) => {
      const owner = await getRow(parent, db(), app.services.database.dialect, req.scope, (req.params as { id: string }).id);
      return pageOf(app, req, quotes, { [column]: owner.id });
    });
  }
}
