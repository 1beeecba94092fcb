// The operations of quotes beyond their CRUD (quotes.resource.ts): send, void, duplicate and
// edit-as-draft; the products a quote can use; the quotes of a contact and of a deal. The public
// side (no API key) is in public.routes.ts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { paginate } from '../../platform/pagination.ts';
import type { ApiRecord, Resource } from '../../platform/resource/define.ts';
import { countRows, getRow, listRows, present } from '../../platform/resource/store.ts';
import { Data, errorResponses, ListOf, Str } from '../../platform/schemas.ts';
import { mutate, type WriteContext } from '../../platform/write.ts';
import { contacts } from '../contacts/contacts.resource.ts';
import { deals } from '../deals/deals.resource.ts';
import { PipelineQuery } from '../deals/pipelines.schemas.ts';
import { products } from '../products/products.resource.ts';
import { quotes } from './quotes.resource.ts';
import { duplicateQuote, editAsDraft, sendQuote, voidQuote } from './transitions.ts';

const tags = [quotes.tag];
const params = quotes.schemas.params;
const record = quotes.schemas.record;

const OPERATIONS: Array<{ path: string; status: number; summary: string; description: string; errors: number[]; run: (w: WriteContext, id: string) => Promise<ApiRecord> }> = [
  {
    path: 'send', status: 200, summary: 'Send a quote', errors: [404, 409], run: sendQuote,
    description: 'Moves a draft to `sent` and mints its public link (`public_token`; the page is `/q/{public_token}`). The token is in this answer only: only its hash is stored, and reads, listings and events show `public_token: null`. Records `quote.sent`. Needs at least one line item and a `contact_id` (400), a `valid_until` still ahead when set (400); a quote that is not a draft is 409; a contact deleted since is 404 `Contact not found`.',
  },
  {
    path: 'void', status: 200, summary: 'Void a quote', errors: [404, 409], run: voidQuote,
    description: 'Withdraws a draft, sent or viewed quote: it becomes `void` and its link shows it as void, no longer answerable. Records `quote.voided`. An accepted, declined, expired or void quote is 409.',
  },
  {
    path: 'duplicate', status: 201, summary: 'Duplicate a quote', errors: [404, 409], run: duplicateQuote,
    description: 'Makes a new draft with the quote\'s title, deal, contact, currency, lines, tax rate, validity, terms and custom fields, and the next number, whatever the state of the quote. Records `quote.created`. Lines are checked again: a product made inactive since is 400.',
  },
  {
    path: 'edit-as-draft', status: 200, summary: 'Edit a sent quote as a draft', errors: [404, 409], run: editAsDraft,
    description: 'Brings a sent, viewed, declined or expired quote back to `draft` with `revision` one higher, so it can be edited and sent again (with a new link). The old public link answers 404 from now on. Records `quote.returned_to_draft`. A draft, accepted or void quote is 409.',
  },
];

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

  for (const op of OPERATIONS) {
    app.post(`/quotes/:id/${op.path}`, {
      schema: { tags, summary: op.summary, description: op.description, params, response: { [op.status]: Data(record, 'The quote'), ...errorResponses(...op.errors) } },
    }, (req, reply) => mutate(req, reply, op.status, (w) => op.run(w, req.params.id)));
  }

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
