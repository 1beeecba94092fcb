// `PUT /<plural>/assert` and `PUT /<plural>/assert/batch` of a resource with natural keys. A batch
// runs in one transaction (one write, so one tenant lock and one commit); each record runs under
// its own savepoint, so one that fails leaves no trace and the others still apply.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { AppError, badRequest, ERROR_TYPES } from '../errors.ts';
import { Data, errorResponses, Str, StringEnum } from '../schemas.ts';
import { toValidationError, validatorCompiler } from '../validation.ts';
import { respond, type WriteContext } from '../write.ts';
import { assertRecord, matchField, naturalKeys, type AssertAction } from './assert.ts';
import type { Resource } from './define.ts';
import { withArticle } from './words.ts';
import { createAhead } from './store.ts';

/** Most records in one batch. */
export const MAX_BATCH = 100;

const ActionSchema = Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('noop')], { description: 'What the assert did: created a record, updated the one it matched, or found nothing to change', examples: ['updated'] });

const ResultSchema = Type.Object({
  index: Type.Integer({ description: 'Position of the record in the request', examples: [0] }),
  action: Type.Optional(ActionSchema),
  id: Type.Optional(Type.String({ description: 'Identifier of the record created, updated or matched', examples: ['con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  error: Type.Optional(Type.Object({
    status: Type.Integer({ description: 'The status a single assert of this record would have answered', examples: [422] }),
    type: StringEnum(ERROR_TYPES, { description: 'The error type a single assert would have answered (docs/api.md)', examples: ['not_found'] }),
    detail: Type.Unsafe<unknown>({ description: 'The error, as a single assert would have answered it: a message, or a list of field errors', examples: ['List not found'] }),
    param: Type.Optional(Type.String({ description: 'The one field at fault, when there is one', examples: ['work_email'] })),
  }, { description: 'Why this record failed (nothing of it was written)' })),
}, { description: 'The outcome of one record' });

const count = (description: string) => Type.Integer({ minimum: 0, description, examples: [1] });

/** The assert routes of `r`, registered with its CRUD routes. */
export function assertRoutes(r: Resource): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const keys = r.assert!.keys.map((k) => `\`${k.field}\``).join(', then ');
    const matching = keys ? `by ${keys}, then \`?match=\`` : `by \`?match=\` only (${r.plural} have no natural key: without it the answer is 400 naming the parameter)`;
    const tags = [r.tag];
    const config = { messages: r.routes?.messages ?? {} };
    const querystring = Type.Object({
      // Required when there is no natural key: a missing one is the 400 of a missing query parameter.
      match: keys
        ? Type.Optional(Str({ maxLength: 63, description: `A unique custom field of ${r.plural} to match on after ${keys}`, examples: ['external_id'] }))
        : Str({ maxLength: 63, description: `The unique custom field of ${r.plural} to match on; required (${r.plural} have no natural key)`, examples: ['external_id'] }),
    }, { additionalProperties: false });
    const validate = validatorCompiler({ schema: r.schemas.create, httpPart: 'body', method: 'PUT', url: `/${r.plural}/assert/batch` }) as ((v: unknown) => boolean) & { errors?: never[] };

    app.put(`/${r.plural}/assert`, {
      config,
      schema: {
        tags, summary: `Assert ${withArticle(r.name)}`,
        description: `Creates ${withArticle(r.name)}, or updates the one that matches ${matching}. Answers 201 with \`action: created\`, or 200 with \`updated\` or \`noop\` (nothing changed: no event, \`updated_at\` unchanged).`,
        querystring, body: r.schemas.create,
        response: {
          200: Type.Object({ data: r.schemas.record, action: ActionSchema }, { description: `The ${r.name}, updated or unchanged` }),
          201: Type.Object({ data: r.schemas.record, action: ActionSchema }, { description: `The created ${r.name}` }),
          ...errorResponses(404, 409, ...(r.routes?.errors?.create ?? [])),
        },
      },
    }, (req, reply) => respond(req, reply, async (w) => {
      const match = await matchField(r, w, (req.query as { match?: string }).match);
      const { action, record } = await assertRecord(r, w, req.body as Record<string, unknown>, match);
      return { status: action === 'created' ? 201 : 200, payload: { data: record, action } };
    }));

    app.put(`/${r.plural}/assert/batch`, {
      schema: {
        tags, summary: `Assert ${r.plural} in a batch`,
        description: `Asserts up to ${MAX_BATCH} ${r.plural} (more is 400), each as \`PUT /${r.plural}/assert\` would, in one transaction: each record succeeds or fails on its own, and a failed one leaves nothing behind. Answers 200 with one result per record, in order.`,
        querystring,
        body: Type.Object({
          records: Type.Array(Type.Object({}, { additionalProperties: true, description: `${withArticle(r.name)}, as the body of a single assert` }), { minItems: 1, description: `1 to ${MAX_BATCH} records`, examples: [[{}]] }),
        }, { additionalProperties: false, description: 'The records to assert' }),
        response: {
          200: Data(Type.Object({
            total: count('Records in the request'), created: count('Records created'), updated: count('Records updated'),
            noop: count('Records already up to date'), failed: count('Records that failed'), results: Type.Array(ResultSchema),
          }), 'The outcome of each record'),
          ...errorResponses(409),
        },
      },
    }, (req, reply) => {
      const { records } = req.body as { records: Record<string, unknown>[] };
      if (records.length > MAX_BATCH) throw badRequest(`A batch holds at most ${MAX_BATCH} records; this one has ${records.length}`);
      return respond(req, reply, async (w) => {
        const match = await matchField(r, w, (req.query as { match?: string }).match);
        // Every record validated first, so that what the valid ones would read to be created (the
        // group's `readAhead`) is read for all of them in one statement.
        const invalid = records.map((input) => (validate(input) ? undefined : toValidationError(validate.errors ?? [], 'body', config.messages)));
        const by = r.hooks?.readAhead;
        if (by) await w.readAheadAll(by, records.filter((_, i) => !invalid[i]).map((input) => createAhead(r, input)!.key()));
        // A record no later record names by a natural key is read back by none: its rows may wait to
        // be written with the next records' (`attempt`'s flush: false). With `?match=`, any may be.
        const keys = records.map((input, i) => (invalid[i] ? [] : naturalKeys(r, input).map(({ field, value }) => `${field}\u0000${value}`)));
        const lastNamed = new Map<string, number>();
        keys.forEach((mine, i) => mine.forEach((k) => lastNamed.set(k, i)));
        const namedLater = keys.map((mine, i) => match !== undefined || mine.some((k) => lastNamed.get(k)! > i));
        const results: Array<Record<string, unknown>> = [];
        const totals: Record<AssertAction | 'failed', number> = { created: 0, updated: 0, noop: 0, failed: 0 };
        for (const [index, input] of records.entries()) {
          const error = invalid[index];
          const result: Awaited<ReturnType<typeof oneOf>> = error ? { error } : await oneOf(r, w, input, match, namedLater[index]);
          if ('error' in result) {
            totals.failed++;
            results.push({ index, error: { status: result.error.status, ...result.error.body() } });
          } else {
            totals[result.action]++;
            results.push({ index, action: result.action, id: result.id });
          }
        }
        return { status: 200, payload: { data: { total: records.length, ...totals, results } } };
      });
    });
  };
}

/** One record of a batch, all of it or none of it (`w.attempt`); `readBack`: a later record names it. */
async function oneOf(r: Resource, w: WriteContext, input: Record<string, unknown>, match: Awaited<ReturnType<typeof matchField>>, readBack: boolean): Promise<{ action: AssertAction; id: string } | { error: AppError }> {
  const done = await w.attempt(() => assertRecord(r, w, input, match), { flush: readBack });
  return 'error' in done ? done : { action: done.value.action, id: done.value.record.id };
}
