import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { badRequest } from '../../platform/errors.ts';
import { paginate } from '../../platform/pagination.ts';
import { Data, DeletedSchema, errorResponses, IdParams, ListOf } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import * as s from './lists.schemas.ts';
import * as store from './lists.store.ts';

const messages = { enum: { type: 'Invalid list type' } };
const tags = ['Lists'];
const params = IdParams('lst', 'list');

export async function listRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.services.database.db;

  app.post('/lists', {
    config: { messages },
    schema: {
      tags, summary: 'Create a list', description: 'Creates a list. `type` is one of contacts, companies, suppressions, deals, leads; any other value is 400 `Invalid list type`.',
      body: s.ListCreateSchema, response: { 201: Data(s.ListSchema, 'The created list'), ...errorResponses() },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.createList(w, req.body)));

  app.get('/lists', {
    config: { messages },
    schema: {
      tags, summary: 'List lists', description: 'Lists the lists, newest first; filter by `type`.',
      querystring: s.ListQuerySchema, response: { 200: ListOf(s.ListSchema, 'A page of lists'), ...errorResponses() },
    },
  }, (req) => paginate(req, req.query, {
    fetch: (page) => store.listLists(db(), req.scope, req.query, page),
    count: () => store.countLists(db(), req.scope, req.query),
    keyOf: (row) => row.id,
    map: (rows) => rows.map(store.toList),
  }));

  app.get('/lists/:id', {
    schema: { tags, summary: 'Get a list', description: 'Reads one list; 404 `List not found` if it does not exist.', params, response: { 200: Data(s.ListSchema, 'The list'), ...errorResponses(404) } },
  }, async (req) => ({ data: store.toList(await store.getList(db(), req.scope, req.params.id)) }));

  app.patch('/lists/:id', {
    schema: {
      tags, summary: 'Update a list', description: 'Changes the name or description; an empty body is 400 `No fields to update`.',
      params, body: s.ListUpdateSchema, response: { 200: Data(s.ListSchema, 'The updated list'), ...errorResponses(404) },
    },
  }, (req, reply) => {
    if (Object.keys(req.body).length === 0) throw badRequest('No fields to update');
    return mutate(req, reply, 200, (w) => store.updateList(w, req.params.id, req.body));
  });

  app.delete('/lists/:id', {
    schema: {
      tags, summary: 'Delete a list',
      description: 'Deletes a list. A list that still has members is refused with 409 unless `cascade=true`, which deletes its contacts or entries too. Campaigns aimed at the list lose their audience (`list_id` becomes null).',
      params, querystring: s.DeleteListQuerySchema, response: { 200: Data(DeletedSchema('lst', 'list'), 'The list was deleted'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.deleteList(w, req.params.id, req.query.cascade ?? false)));

  app.post('/lists/:id/entries', {
    schema: {
      tags, summary: 'Add suppression entries',
      description: 'Adds e-mail addresses or domains to a suppression list. Values are lower-cased; values already present are reported, not duplicated. Contacts whose e-mail or domain is suppressed read `suppressed: true`.',
      params, body: s.EntriesCreateSchema, response: { 201: Data(s.EntriesAddedSchema, 'The entries'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.addEntries(w, req.params.id, req.body.values)));

  app.get('/lists/:id/entries', {
    schema: {
      tags, summary: 'List suppression entries', description: 'Lists the entries of a suppression list, newest first.',
      params, querystring: s.EntriesQuerySchema, response: { 200: ListOf(s.EntrySchema, 'A page of entries'), ...errorResponses(404) },
    },
  }, async (req) => {
    const list = await store.getList(db(), req.scope, req.params.id);
    return paginate(req, req.query, {
      fetch: (page) => store.listEntries(db(), req.scope, list.id, page),
      count: async () => (list.type === 'suppressions' ? Number(list.member_count) : 0),
      keyOf: (row) => row.id,
      map: (rows) => rows.map(store.toEntry),
    });
  });

  app.delete('/lists/:id/entries/:entry_id', {
    schema: {
      tags, summary: 'Remove a suppression entry', description: 'Removes one entry from a suppression list.',
      params: s.EntryParamsSchema, response: { 200: Data(DeletedSchema('ent', 'entry'), 'The entry was removed'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.deleteEntry(w, req.params.id, req.params.entry_id)));
}
