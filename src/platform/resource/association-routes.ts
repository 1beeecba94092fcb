// The routes of a resource with associations under each record it can be associated with:
// `GET /v1/<target>/{id}/<plural>` (that record's, with the filters and paging of the plain list) and
// `POST /v1/<target>/{id}/<plural>` (a new one associated with that record, beside any associations
// of its body). An unknown target record is 404 with its own message.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { Data, errorResponses, ListOf } from '../schemas.ts';
import { mutate } from '../write.ts';
import type { Associations } from './associations.ts';
import type { Resource } from './define.ts';
import { withArticle } from './words.ts';
import { answerList } from './routes.ts';
import { createRecord, getRow } from './store.ts';

export function associationRoutes(r: Resource): FastifyPluginAsync {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const config = { messages: r.routes?.messages ?? {} };
    for (const { kind, resource: target } of r.associationTargets) {
      const path = `/${target.plural}/:id/${r.plural}`;
      const params = target.schemas.params;
      app.get(path, {
        config,
        schema: {
          tags: [r.tag], summary: `List the ${r.plural} of ${withArticle(kind.name)}`,
          description: `The ${r.plural} associated with the ${kind.name}, newest first, with an exact \`total\`, and the filters and paging of \`GET /v1/${r.plural}\`. Unknown ${kind.name}: 404 \`${target.notFound}\`.`,
          params, querystring: r.schemas.query, response: { 200: ListOf(r.schemas.record, `A page of the ${kind.name}'s ${r.plural}`), ...errorResponses(404) },
        },
      }, async (req, reply) => {
        const { id } = req.params as { id: string };
        await getRow(target, app.services.database.db, app.services.database.dialect, req.scope, id);
        return answerList(r, req, reply, { ...(req.query as Record<string, unknown>), [kind.param]: id });
      });

      app.post(path, {
        config,
        schema: {
          tags: [r.tag], summary: `Create ${withArticle(r.name)} on ${withArticle(kind.name)}`,
          description: `Creates ${withArticle(r.name)} associated with the ${kind.name} (and with the records its \`associations\` name). Unknown ${kind.name}: 404 \`${target.notFound}\`.`,
          params, body: r.schemas.create, response: { 201: Data(r.schemas.record, `The created ${r.name}`), ...errorResponses(404, ...(r.routes?.errors?.create ?? [])) },
        },
      }, (req, reply) => mutate(req, reply, 201, async (w) => {
        const { id } = req.params as { id: string };
        await getRow(target, w.tx, w.dialect, w.scope, id);
        const body = req.body as Record<string, unknown> & { associations?: Partial<Associations> };
        const associations = { ...body.associations, [kind.key]: [...(body.associations?.[kind.key] ?? []), id] };
        return createRecord(r, w, { ...body, associations });
      }));
    }
  };
}
