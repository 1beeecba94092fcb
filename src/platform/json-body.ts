// JSON request bodies: Fastify's own parser (which refuses `__proto__` members and `constructor`
// members holding `prototype`), with three differences a client notices:
// - an empty body is `{}`, as no body is on routes whose body is an object (route-rules.ts): a PATCH
//   sent with a JSON Content-Type and nothing else is `No fields to update`, as without the header;
// - bytes that are not UTF-8 are 400: decoding them would store U+FFFD in their place, silently;
// - a body refused for a forbidden member name says so, rather than that it is not JSON.
import type { FastifyInstance } from 'fastify';
import { badRequest } from './errors.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

export function installJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    if (body.length === 0) return done(null, {});
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      return done(badRequest('Request body is not valid UTF-8'), undefined);
    }
    parse(request, text, (error, value) => {
      if (error && isJson(text)) return done(badRequest('Request body has a member named __proto__, or a constructor member with prototype, which is not accepted'), undefined);
      done(error, value);
    });
  });
}
