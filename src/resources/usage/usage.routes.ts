import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { paginate } from '../../platform/pagination.ts';
import { Data, errorResponses, ListOf } from '../../platform/schemas.ts';
import * as s from './usage.schemas.ts';
import * as store from './usage.store.ts';

const tags = ['Usage'];

export async function usageRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = app.services.database.db;

  app.get('/usage/transactions', {
    schema: {
      tags, summary: 'List usage transactions',
      description: 'The credit ledger of the organization in the key\'s mode, newest first: grants, debits of billable operations (one credit per contact enrolled by a campaign launch) and refunds. Filter by `type`.',
      querystring: s.TransactionQuerySchema, response: { 200: ListOf(s.TransactionSchema, 'A page of transactions'), ...errorResponses() },
    },
  }, (req) => paginate(req, req.query, {
    fetch: (page) => store.listTransactions(db, req.scope, req.query, page),
    count: () => store.countTransactions(db, req.scope, req.query),
    keyOf: (row) => row.id,
    map: (rows) => rows.map(store.toTransaction),
  }));

  app.get('/usage', {
    schema: {
      tags, operationId: 'getUsage', summary: 'Get the credit balance and this month\'s use',
      description: 'The current balance and, for the current calendar month in UTC, the credits granted, debited and refunded and the number of ledger entries.',
      response: { 200: Data(s.UsageSchema, 'Balance and use'), ...errorResponses() },
    },
  }, async (req) => ({ data: await store.readUsage(db, req.scope) }));
}
