// The fields group: `GET/POST /v1/fields`, `GET/PATCH/DELETE /v1/fields/{id}`. The objects are the
// kernel resources that opt in to custom fields.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { badRequest } from '../../platform/errors.ts';
import { paginate } from '../../platform/pagination.ts';
import type { Resource } from '../../platform/resource/define.ts';
import { Data, DeletedSchema, errorResponses, ListOf, PageQuery, Str } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import { CreateField, FieldQuery, FieldSchema, UpdateField } from './fields.schemas.ts';
import { createField, deleteField, listFields, readField, updateField, type CreateFieldInput, type UpdateFieldInput } from './fields.store.ts';

const tags = ['Fields'];
const params = Type.Object({ id: Str({ maxLength: 200, description: 'Identifier of the field: `fld_…`, or `<object>.<name>` for a built-in field', examples: ['fld_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }) });

/** `objects()` gives the resources with custom fields (read once the registry is complete). */
export const fieldRoutes = (objects: () => Resource[]): FastifyPluginAsync => async (fastify: FastifyInstance) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const db = app.services.database.db;
  const opted = objects();
  const names = opted.map((r) => r.plural);
  const byName = (name: string) => opted.find((r) => r.plural === name)!;

  app.get('/fields', {
    schema: {
      tags, summary: 'List fields',
      description: 'Lists the fields of each object (or of `object`): its built-in fields first (`is_global: true`, read-only), then the custom fields of the organization, oldest first. With `list_id`, list-specific fields of other lists are left out.',
      querystring: Type.Object({ ...PageQuery, ...FieldQuery(names) }, { additionalProperties: false }),
      response: { 200: ListOf(FieldSchema, 'A page of fields'), ...errorResponses() },
    },
  }, async (req) => {
    const query = req.query;
    const all = await listFields(db, req.scope, query.object ? [byName(query.object)] : opted, query.list_id);
    return paginate(req, query, {
      // The whole set is small (bounded per object), so a page is a slice of it; the key is the position.
      fetch: async (page) => all.slice(page.after === undefined ? page.offset : Number(page.after) + 1).slice(0, page.take).map((f) => ({ f, at: all.indexOf(f) })),
      count: async () => all.length,
      keyOf: (row) => row.at,
      map: (rows) => rows.map((row) => row.f),
    });
  });

  app.post('/fields', {
    schema: {
      tags, summary: 'Create a custom field',
      description: 'Defines a custom field of an object. Names are snake_case, unique per object, and never a built-in field\'s name (422). A name in use is 409 naming the field. enum and multi_enum need `options.values`.',
      body: CreateField(names), response: { 201: Data(FieldSchema, 'The created field'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 201, (w) => createField(w, byName(req.body.object), req.body as CreateFieldInput)));

  app.get('/fields/:id', {
    schema: { tags, summary: 'Get a field', description: 'Reads one field; 404 `Field not found` if it does not exist or was deleted.', params, response: { 200: Data(FieldSchema, 'The field'), ...errorResponses(404) } },
  }, async (req) => ({ data: await readField(db, req.scope, opted, req.params.id) }));

  app.patch('/fields/:id', {
    schema: {
      tags, summary: 'Update a custom field',
      description: 'Changes the title, description, `required` (applies to records created afterwards) or adds enum values. Built-in fields are read-only (400). An empty body is 400 `No fields to update`.',
      params, body: UpdateField, response: { 200: Data(FieldSchema, 'The updated field'), ...errorResponses(404) },
    },
  }, (req, reply) => {
    if (Object.keys(req.body).length === 0) throw badRequest('No fields to update');
    return mutate(req, reply, 200, (w) => updateField(w, opted, req.params.id, req.body as UpdateFieldInput));
  });

  app.delete('/fields/:id', {
    schema: {
      tags, summary: 'Delete a custom field',
      description: 'Deletes a custom field and removes its values from every record (their `updated_at` does not move); records `field.deleted`. Built-in fields are read-only (400).',
      params, response: { 200: Data(DeletedSchema('fld', 'field'), 'The field was deleted'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 200, (w) => deleteField(w, opted, req.params.id)));
};
