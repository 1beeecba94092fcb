// The action routes of a declared lifecycle (lifecycle.ts): `POST /v1/<plural>/{id}/<action>` for
// each action that has one, answering 200 with the record (an action on an existing record creates
// nothing), 409 from a state the action does not leave from, and documented from the declaration.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { Data, errorResponses } from '../schemas.ts';
import { mutate } from '../write.ts';
import type { Resource } from './define.ts';
import { capitalized, withArticle } from './words.ts';
import { eventSuffix, runAction, type ActionDefinition } from './lifecycle.ts';

const quoted = (states: readonly string[]) => states.map((s) => `\`${s}\``).join(', ');

/** The generated part of an action's description: where it moves from and to, its refusal and its event. */
export function actionDocs(r: Resource, name: string, action: ActionDefinition): string {
  const others = r.lifecycle!.states.filter((s) => !action.from.includes(s));
  const refused = others.length > 0 ? ` From ${quoted(others)}: 409 \`${capitalized(withArticle(r.name))} that is <state> cannot be …\`.` : '';
  return `${action.description} Moves ${quoted(action.from)} to \`${action.to}\` and records \`${r.name}.${eventSuffix(name, action)}\`.${refused}`;
}

export function lifecycleRoutes(r: Resource): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    for (const [name, action] of Object.entries(r.lifecycle!.actions)) {
      if (action.route === false) continue;
      app.post(`/${r.plural}/:id/${name}`, {
        schema: {
          tags: [r.tag], summary: action.summary, description: actionDocs(r, name, action), params: r.schemas.params,
          ...(action.operationId ? { operationId: action.operationId } : {}),
          ...(action.body ? { body: action.body } : {}),
          response: { 200: Data(r.schemas.record, `The ${r.name}, ${action.to}`), ...errorResponses(404, 409, ...(action.errors ?? [])) },
        },
      }, (req, reply) => mutate(req, reply, 200, (w) => runAction(r, w, (req.params as { id: string }).id, name, (req.body ?? {}) as Record<string, unknown>)));
    }
  };
}
