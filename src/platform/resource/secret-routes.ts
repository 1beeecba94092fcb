// The rotation of secret fields (secrets.ts): `POST /<plural>/{id}/rotate-<field>` makes a new
// secret, keeps the previous one usable for its overlap when the spec says so, and answers the new
// one, once, like the create.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import { resourceEvent } from '../event-types.ts';
import { Data, errorResponses } from '../schemas.ts';
import { mutate, type WriteContext } from '../write.ts';
import type { ApiRecord, Resource, Row } from './define.ts';
import { rotatable, stored } from './secrets.ts';
import { getRow, presentOne } from './store.ts';
import { storeJson } from './stored-json.ts';
import { updateIn, type TenantTable } from './tenancy.ts';

/**
 * Replaces the record's secret `name` with a new one, answered with the record. With `previous` the
 * old one stays usable for its overlap. Records `<name>.updated` (the secret is not in it, and no
 * field the record shows changed but `updated_at`: `previous_attributes` is empty).
 */
export async function rotateSecret(r: Resource, w: WriteContext, id: string, name: string): Promise<ApiRecord> {
  const spec = r.fields[name].secret!;
  const before = await getRow(r, w.tx, w.dialect, w.scope, id);
  const secret = spec.generate();
  const changes: Record<string, unknown> = { [name]: stored(spec, secret), updated_at: w.now };
  if (spec.previous) Object.assign(changes, { [spec.previous.column]: before[name], [spec.previous.untilColumn]: w.now + spec.previous.seconds });
  await updateIn(w.tx, r.table as TenantTable, w.scope).set(changes as never).where(sql.ref('id'), '=', id).execute();
  const record = await presentOne(r, w.tx, w.scope, { ...before, ...changes } as Row);
  if (r.storedJson) storeJson(r, w, record);
  w.emit(resourceEvent(r.name, 'updated'), record, {});
  return { ...record, [name]: secret };
}

/** `POST /<plural>/{id}/rotate-<field>` for each rotatable secret: 201 with the record and its new secret. */
export function secretRoutes(r: Resource): FastifyPluginAsync {
  return async (fastify: FastifyInstance) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    for (const [name, spec] of rotatable(r)) {
      app.post(`/${r.plural}/:id/rotate-${name.replaceAll('_', '-')}`, {
        schema: {
          tags: [r.tag], summary: spec.rotate!.summary, description: spec.rotate!.description, params: r.schemas.params,
          response: { 201: Data(r.schemas.created, `The ${r.name} with its new ${name}`), ...errorResponses(404) },
        },
      }, (req, reply) => mutate(req, reply, 201, (w) => rotateSecret(r, w, (req.params as { id: string }).id, name)));
    }
  };
}
