// Rules every route follows without declaring anything, applied as routes are added (so routes
// added later, by any group, follow them too):
// - a route without a query-string schema takes no query parameters: any is 422 naming it, as on
//   routes that declare theirs (`additionalProperties: false`);
// - a route that takes a body method (POST, PUT, PATCH, DELETE) but declares no body refuses one:
//   an object with any member, or anything but an object, is 422; no body, or `{}`, is accepted;
// - a route whose body is an object takes no body as `{}`: a PATCH without one is `No fields to
//   update`, a PUT whose members are all optional needs none, a create names its required fields.
import type { FastifyInstance, preValidationHookHandler, RouteOptions } from 'fastify';
import { Type } from 'typebox';
import { validationError, type FieldError } from './errors.ts';

const NO_QUERY = Type.Object({}, { additionalProperties: false });
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const isEmptyObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;

/** preValidation of the routes without a body: the body, when one was sent, must be empty. */
const refuseBody: preValidationHookHandler = (request, _reply, done) => {
  const body = request.body;
  if (body === undefined || body === null || isEmptyObject(body)) return done();
  const errors: FieldError[] = typeof body === 'object' && !Array.isArray(body)
    ? Object.keys(body).map((name) => ({ loc: ['body', name], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }))
    : [{ loc: ['body'], msg: 'This operation takes no request body', type: 'extra_forbidden' }];
  done(validationError(errors));
};

/** preValidation of the routes whose body is an object: no body is the empty object. */
const absentBodyIsEmpty: preValidationHookHandler = (request, _reply, done) => {
  if (request.body === undefined) request.body = {};
  done();
};

const hooks = <T>(existing: T | T[] | undefined): T[] => (existing === undefined ? [] : [existing].flat() as T[]);

function applyRules(route: RouteOptions): void {
  const schema = (route.schema ??= {});
  schema.querystring ??= NO_QUERY;
  const methods = [route.method].flat();
  if (!methods.some((m) => BODY_METHODS.has(m))) return;
  if (schema.body === undefined) {
    route.preValidation = [...hooks<preValidationHookHandler>(route.preValidation), refuseBody] as RouteOptions['preValidation'];
  } else if ((schema.body as { type?: unknown }).type === 'object') {
    route.preValidation = [absentBodyIsEmpty, ...hooks<preValidationHookHandler>(route.preValidation)] as RouteOptions['preValidation'];
  }
}

/** Installs the rules; must run before any route is added. */
export function installRouteRules(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => applyRules(route as RouteOptions));
}
