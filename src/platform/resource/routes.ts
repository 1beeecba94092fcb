// The CRUD routes of a resource, generated from its definition: list (keyset pages with an exact
// total, through the list cache), create, read, update (an empty body is 400) and delete. A group
// leaves out any of them with `routes.omit` and adds its own operations in its routes file.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { canonicalJson } from '../canonical-json.ts';
import { listCacheFor, Serialized } from '../list-cache.ts';
import { badRequest } from '../errors.ts';
import { paginate } from '../pagination.ts';
import { Data, DeletedSchema, errorResponses, ListOf, pascal } from '../schemas.ts';
import { mutate } from '../write.ts';
import { componentName, type CrudOp, type Resource } from './define.ts';
import { withArticle } from './words.ts';
import { assertRoutes } from './assert-routes.ts';
import { associationRoutes } from './association-routes.ts';
import { sealInput } from './sealed-fields.ts';
import { secretRoutes } from './secret-routes.ts';
import { rotatable } from './secrets.ts';
import { lifecycleRoutes } from './lifecycle-routes.ts';
import { resolveCustomFilters } from './custom-field-values.ts';
import { countRows, createAhead, createRecord, deleteRecord, listRows, present, readRecord, updateRecord } from './store.ts';
import { storedJsonOf, storedPage } from './stored-json.ts';

const PAGING = new Set(['page', 'limit', 'cursor']);

/** `listContacts`, `createContact`, …: the operationIds of the generated routes, whatever their summaries say. */
function operationIdOf(r: Resource, op: CrudOp): string {
  return op === 'list' ? `list${pascal(r.plural)}` : `${op}${componentName(r)}`;
}

function docs(r: Resource, op: CrudOp): { summary: string; description: string; operationId: string } {
  const filters = r.resolvedFilters.map((f) => `\`${f.param}\``).join(', ');
  const generated: Record<CrudOp, { summary: string; description: string }> = {
    list: { summary: `List ${r.plural}`, description: `Lists ${r.plural}, newest first, with an exact \`total\`.${filters ? ` Filters combine: ${filters}.` : ''}` },
    create: { summary: `Create ${withArticle(r.name)}`, description: `Creates ${withArticle(r.name)}.` },
    get: { summary: `Get ${withArticle(r.name)}`, description: `Reads one ${r.name}; 404 \`${r.notFound}\` if it does not exist or was deleted.` },
    update: { summary: `Update ${withArticle(r.name)}`, description: 'Changes the fields given; null clears a field. An empty body is 400 `No fields to update`.' },
    delete: { summary: `Delete ${withArticle(r.name)}`, description: `Deletes ${withArticle(r.name)}; reading it afterwards is 404.` },
  };
  return { ...generated[op], ...r.routes?.docs?.[op], operationId: r.routes?.docs?.[op]?.operationId ?? operationIdOf(r, op) };
}

/**
 * Answers a page of `r` matching `given` (the route's query, with any condition the route adds),
 * newest first with an exact total, through the list cache unless the resource reads the clock.
 */
export async function answerList(r: Resource, req: FastifyRequest, reply: FastifyReply, given: Record<string, unknown>): Promise<void> {
  const { database } = req.server.services;
  const lists = listCacheFor(req.server.services.lists, r.readsClock);
  const db = database.db;
  // A GET: its answer has no hook to wait for (see ListCache.answer), so the reply need not be returned.
  // paginate asks for the page before the total, so a walked page's statement reads the version first.
  await lists.answer(req, reply, async (version, along) => {
    const query = await resolveCustomFilters(r, db, req.scope, given);
    const filters = Object.fromEntries(Object.entries(query).filter(([k]) => !PAGING.has(k)));
    let total: Promise<number> | undefined;
    const totalKey = `${r.plural} ${canonicalJson(filters)}`;
    // A page read with its version beside it reads the total as well when none is kept (PostgreSQL).
    const totalled = along !== undefined && !lists.hasTotal(req.scope, totalKey);
    const count = () => (total ??= lists.total(req.scope, totalKey, version, () => countRows(r, db, database.dialect, req.scope, query)));
    if (r.storedJson) {
      const body = await paginate(req, query, {
        fetch: (page) => storedPage(r, db, database.dialect, req.scope, query, page, along),
        count,
        keyOf: (row) => row.id,
        map: (rows) => storedJsonOf(r, db, req.scope, rows),
      });
      // The page's frame serialized by the route, around the records' texts: all of it ASCII (the
      // texts escape the rest), so its bytes are a copy of the string's.
      const json = (reply.serialize({ ...body, data: [] }) as string).replace('"data":[]', `"data":[${body.data.join(',')}]`);
      return new Serialized(Buffer.from(json, 'latin1'));
    }
    return paginate(req, query, {
      fetch: (page) => listRows(r, db, database.dialect, req.scope, query, page, count, along, totalled),
      count,
      keyOf: (row) => row.id,
      map: (rows) => present(r, db, req.scope, rows),
    });
  });
}

/** The generated CRUD routes of `r`, registered under the data API's prefix. */
export function crudRoutes(r: Resource): FastifyPluginAsync {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const { database } = app.services;
    const db = database.db;
    const omit = new Set(r.routes?.omit ?? []);
    const tags = [r.tag];
    const errors = (op: CrudOp, ...common: number[]) => errorResponses(...common, ...(r.routes?.errors?.[op] ?? []));
    const config = { messages: r.routes?.messages ?? {} };
    const params = r.schemas.params;
    const base = `/${r.plural}`;

    if (!omit.has('list')) {
      app.get(base, {
        config,
        schema: { tags, ...docs(r, 'list'), querystring: r.schemas.query, response: { 200: ListOf(r.schemas.record, `A page of ${r.plural}`), ...errors('list') } },
      }, (req, reply) => answerList(r, req, reply, req.query as Record<string, unknown>));
    }

    if (!omit.has('create')) {
      app.post(base, {
        config,
        schema: { tags, ...docs(r, 'create'), body: r.schemas.create, response: { 201: Data(r.schemas.created, `The created ${r.name}`), ...errors('create') } },
      }, (req, reply) => {
        const body = req.body as Record<string, unknown>;
        // Sealed after the checks, which read what the client wrote.
        const create = () => (sealInput(r, req, body), mutate(req, reply, 201, (w) => createRecord(r, w, body), createAhead(r, body)));
        return r.hooks?.checkInput ? r.hooks.checkInput(req, body).then(create) : create();
      });
    }

    if (r.assert) await app.register(assertRoutes(r));
    if (r.associations) await app.register(associationRoutes(r));
    if (rotatable(r).length > 0) await app.register(secretRoutes(r));

    if (!omit.has('get')) {
      app.get(`${base}/:id`, {
        schema: { tags, ...docs(r, 'get'), params, response: { 200: Data(r.schemas.record, `The ${r.name}`), ...errors('get', 404) } },
      }, async (req) => ({ data: await readRecord(r, db, database.dialect, req.scope, (req.params as { id: string }).id) }));
    }

    if (!omit.has('update')) {
      app.patch(`${base}/:id`, {
        config,
        schema: { tags, ...docs(r, 'update'), params, body: r.schemas.update, response: { 200: Data(r.schemas.record, `The updated ${r.name}`), ...errors('update', 404) } },
      }, (req, reply) => {
        const body = req.body as Record<string, unknown>;
        // An instruction alone (`inputs`, e.g. `force`) changes nothing; associations are changes.
        if (!Object.keys(body).some((name) => r.fields[name] || (name === 'associations' && r.associations))) throw badRequest('No fields to update');
        const update = () => (sealInput(r, req, body), mutate(req, reply, 200, (w) => updateRecord(r, w, (req.params as { id: string }).id, body)));
        return r.hooks?.checkInput ? r.hooks.checkInput(req, body).then(update) : update();
      });
    }

    if (!omit.has('delete')) {
      app.delete(`${base}/:id`, {
        schema: {
          tags, ...docs(r, 'delete'), params,
          ...(r.routes?.deleteQuery ? { querystring: Type.Object(r.routes.deleteQuery, { additionalProperties: false }) } : {}),
          response: { 200: Data(DeletedSchema(r.prefix, r.name), `The ${r.name} was deleted`), ...errors('delete', 404) },
        },
      }, (req, reply) => mutate(req, reply, 200, (w) => deleteRecord(r, w, (req.params as { id: string }).id, (req.query ?? {}) as Record<string, unknown>)));
    }

    if (r.lifecycle) await app.register(lifecycleRoutes(r));
  };
}

