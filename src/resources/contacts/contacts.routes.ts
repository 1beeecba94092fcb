import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { canonicalJson } from '../../platform/canonical-json.ts';
import { badRequest } from '../../platform/errors.ts';
import { paginate } from '../../platform/pagination.ts';
import { Data, DeletedSchema, errorResponses, IdParams, ListOf } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import * as s from './contacts.schemas.ts';
import * as store from './contacts.store.ts';

const tags = ['Contacts'];
const params = IdParams('con', 'contact');
const messages = { required: { list_id: 'list_id is required when creating contacts' } };

export async function contactRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, lists } = app.services;
  const db = database.db;

  app.get('/contacts', {
    schema: {
      tags, summary: 'Search and list contacts',
      description: 'Lists contacts, newest first, with an exact `total`. Filters combine: `title` (contains, case-insensitive), `list_id`, `company`, `work_email`, `tag`, `created_after`, `created_before`.',
      querystring: s.ContactQuerySchema, response: { 200: ListOf(s.ContactSchema, 'A page of contacts'), ...errorResponses() },
    },
  }, (req, reply) => lists.answer(req, reply, (version) => {
    const { page: _page, limit: _limit, cursor: _cursor, ...filters } = req.query;
    let total: Promise<number> | undefined;
    const count = () => (total ??= lists.total(req.scope, `contacts ${canonicalJson(filters)}`, version, () => store.countContacts(db, database.dialect, req.scope, req.query)));
    return paginate(req, req.query, {
      fetch: (page) => store.listContacts(db, database.dialect, req.scope, req.query, page, count),
      count,
      keyOf: (row) => row.id,
      map: (rows) => store.toContacts(db, req.scope, rows),
    });
  }));

  app.post('/contacts', {
    config: { messages },
    schema: {
      tags, summary: 'Create a contact',
      description: 'Creates a contact on a list of type contacts or leads. Without `list_id`: 400 `list_id is required when creating contacts`; an unknown list: 404 `List not found`; a malformed e-mail: 422.',
      body: s.ContactCreateSchema, response: { 201: Data(s.ContactSchema, 'The created contact'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.createContact(w, req.body)));

  app.get('/contacts/:id', {
    schema: { tags, summary: 'Get a contact', description: 'Reads one contact; 404 `Contact not found` if it does not exist or was deleted.', params, response: { 200: Data(s.ContactSchema, 'The contact'), ...errorResponses(404) } },
  }, async (req) => ({ data: await store.readContact(db, database.dialect, req.scope, req.params.id) }));

  app.patch('/contacts/:id', {
    schema: {
      tags, summary: 'Update a contact', description: 'Changes the fields given; a new `list_id` moves the contact. An empty body is 400 `No fields to update`.',
      params, body: s.ContactUpdateSchema, response: { 200: Data(s.ContactSchema, 'The updated contact'), ...errorResponses(404) },
    },
  }, (req, reply) => {
    if (Object.keys(req.body).length === 0) throw badRequest('No fields to update');
    return mutate(req, reply, 200, (w) => store.updateContact(w, req.params.id, req.body));
  });

  app.delete('/contacts/:id', {
    schema: { tags, summary: 'Delete a contact', description: 'Deletes a contact; reading it afterwards is 404.', params, response: { 200: Data(DeletedSchema('con', 'contact'), 'The contact was deleted'), ...errorResponses(404) } },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.deleteContact(w, req.params.id)));
}
