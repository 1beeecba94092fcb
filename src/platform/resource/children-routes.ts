// The routes of a resource's children (children.ts), under each parent record:
// `GET /v1/<parent>/{id}/<path>` (a page by key, with an exact total), the write (`PUT …/<path>/{key}`
// or `POST …/<path>`, per the definition's `write`), `PATCH …/<path>/{key}` where declared and
// `DELETE …/<path>/{key}`. Each answers the
// parent's 404 for an unknown parent, in the tenant of the credential; writes go through the write
// queue, so they are idempotent with `Idempotency-Key` and record their events like any write.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { badRequest } from '../errors.ts';
import { newId } from '../ids.ts';
import { paginate } from '../pagination.ts';
import { Data, errorResponses, ListOf, PageQuery } from '../schemas.ts';
import { mutate, respond } from '../write.ts';
import { withArticle } from './words.ts';
import { childrenPage, keyParam, removeChild, writeChild, type Children } from './children.ts';
import { getRow } from './store.ts';

const ChildPageQuery = Type.Object(PageQuery, { additionalProperties: false });

/** The generated texts of each route, overridden by the definition's `docs`. */
function docs(c: Children, op: 'list' | 'write' | 'patch' | 'delete') {
  const parent = c.parent;
  const keyed = c.key.ref ? `; unknown ${c.key.ref.resource.name}: 404 \`${c.key.ref.resource.notFound}\`` : '';
  const generated = {
    list: { summary: `List the ${c.path} of ${withArticle(parent.name)}`, description: `The ${c.path} of the ${parent.name}, ${c.orderBy ? `by \`${c.orderBy}\`` : 'by key (last first)'}, with an exact \`total\`. Unknown ${parent.name}: 404 \`${parent.notFound}\`.` },
    write: c.write === 'put'
      ? { summary: `Put ${withArticle(c.name)} on ${withArticle(parent.name)}`, description: `Puts the ${c.name} on the ${parent.name}, or changes the fields given (a put that changes nothing writes nothing). Records \`${parent.name}.${c.name}_added\` or \`${parent.name}.${c.name}_updated\`. Unknown ${parent.name}: 404 \`${parent.notFound}\`${keyed}.` }
      : { summary: `Record ${withArticle(c.name)} on ${withArticle(parent.name)}`, description: `Records ${withArticle(c.name)} on the ${parent.name} (201, \`${parent.name}.${c.name}_added\`), or records a known one again with the fields given (200, \`${parent.name}.${c.name}_updated\`). Unknown ${parent.name}: 404 \`${parent.notFound}\`${keyed}.` },
    patch: { summary: `Update ${withArticle(c.name)} of ${withArticle(parent.name)}`, description: `Changes the fields given of the ${c.name} (a patch that changes nothing writes nothing); records \`${parent.name}.${c.name}_updated\`. An empty body is 400 \`No fields to update\`. Unknown ${parent.name}: 404 \`${parent.notFound}\`; not there: 404 \`${c.notFound}\`.` },
    delete: { summary: `Remove ${withArticle(c.name)} from ${withArticle(parent.name)}`, description: `Takes the ${c.name} off the ${parent.name} (\`${parent.name}.${c.name}_removed\`). Not there: 404 \`${c.notFound}\`.` },
  };
  return { ...generated[op], ...c.docs?.[op] };
}

export function childRoutes(c: Children): FastifyPluginAsync {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const { database } = app.services;
    const tags = [c.parent.tag];
    const base = `/${c.parent.plural}/:id/${c.path}`;
    const one = `${base}/:${keyParam(c)}`;
    const keyOf = (params: unknown) => (params as Record<string, string>)[keyParam(c)];

    app.get(base, {
      schema: { tags, ...docs(c, 'list'), params: c.parent.schemas.params, querystring: ChildPageQuery, response: { 200: ListOf(c.schemas.record, `A page of the ${c.parent.name}'s ${c.path}`), ...errorResponses(404) } },
    }, async (req) => {
      const parent = await getRow(c.parent, database.db, database.dialect, req.scope, req.params.id);
      return paginate(req, req.query, childrenPage(c, database.db, req.scope, parent.id));
    });

    if (c.write === 'put') {
      app.put(one, {
        schema: { tags, ...docs(c, 'write'), params: c.schemas.params, body: c.schemas.body, response: { 200: Data(c.schemas.record, `The ${c.name} on the ${c.parent.name}`), ...errorResponses(404) } },
      }, (req, reply) => mutate(req, reply, 200, async (w) => (await writeChild(c, w, (req.params as { id: string }).id, keyOf(req.params), (req.body ?? {}) as Record<string, unknown>)).child));
    } else {
      app.post(base, {
        schema: {
          tags, ...docs(c, 'write'), params: c.parent.schemas.params, body: c.schemas.body,
          response: { 200: Data(c.schemas.record, `The ${c.name}, recorded again`), 201: Data(c.schemas.record, `The ${c.name}, recorded`), ...errorResponses(404) },
        },
      }, (req, reply) => respond(req, reply, async (w) => {
        const body = req.body as Record<string, unknown>;
        const key = c.key.generated ? newId(c.key.generated) : String(body[c.key.column]);
        const { child, created } = await writeChild(c, w, req.params.id, key, body);
        return { status: created ? 201 : 200, payload: { data: child } };
      }));
    }

    if (c.patch) {
      app.patch(one, {
        schema: { tags, ...docs(c, 'patch'), params: c.schemas.params, body: c.schemas.patch, response: { 200: Data(c.schemas.record, `The updated ${c.name}`), ...errorResponses(404) } },
      }, (req, reply) => {
        const body = req.body as Record<string, unknown>;
        if (Object.keys(body).length === 0) throw badRequest('No fields to update');
        return mutate(req, reply, 200, async (w) => (await writeChild(c, w, (req.params as { id: string }).id, keyOf(req.params), body, 'patch')).child);
      });
    }

    app.delete(one, {
      schema: { tags, ...docs(c, 'delete'), params: c.schemas.params, response: { 200: Data(c.schemas.removed, `The ${c.name} was removed from the ${c.parent.name}`), ...errorResponses(404) } },
    }, (req, reply) => mutate(req, reply, 200, (w) => removeChild(c, w, (req.params as { id: string }).id, keyOf(req.params))));
  };
}
