import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { paginate } from '../../platform/pagination.ts';
import { getRow } from '../../platform/resource/store.ts';
import { Data, DeletedSchema, errorResponses, ListOf } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import { lists } from './lists.resource.ts';
import * as s from './lists.schemas.ts';
import * as store from './lists.store.ts';

const tags = [lists.tag];
const params = lists.schemas.params;

// Suppression-list entries; the CRUD routes of lists come from lists.resource.ts.
export async function listRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = () => app.services.database.db;

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
    const list = await getRow(lists, db(), app.services.database.dialect, req.scope, (req.params as { id: string }).id);
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

  app.post('/lists/:id/members', {
    schema: {
      tags, summary: 'Add list members',
      description: 'Adds records to a list of type companies or deals (ids of that type). Records already on the list are reported, not duplicated; an unknown id is 404 and adds nothing; other list types are 400. `member_count` stays exact.',
      params, body: s.MembersCreateSchema, response: { 201: Data(s.MembersAddedSchema, 'The result'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => store.addMembers(w, (req.params as { id: string }).id, req.body.ids)));

  app.get('/lists/:id/members', {
    schema: {
      tags, summary: 'List list members', description: 'The records on a list of type companies or deals, newest first, with an exact `total`.',
      params, querystring: s.EntriesQuerySchema, response: { 200: ListOf(s.MemberSchema, 'A page of members'), ...errorResponses(404) },
    },
  }, async (req) => {
    const members = await store.memberPage(db(), app.services.database.dialect, req.scope, (req.params as { id: string }).id);
    return paginate(req, req.query, { fetch: members.fetch, count: async () => members.total, keyOf: (row) => row.id, map: members.map });
  });

  app.delete('/lists/:id/members/:record_id', {
    schema: {
      tags, summary: 'Remove a list member', description: 'Removes one record from a list of type companies or deals; the record itself stays. Not on the list: 404 `Member not found`.',
      params: s.MemberParamsSchema, response: { 200: Data(DeletedSchema('cmp', 'list member'), 'The record left the list'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => store.removeMember(w, req.params.id, req.params.record_id)));
}
