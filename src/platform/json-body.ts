// JSON request bodies: Fastify's own parser (which refuses `__proto__` members and `constructor`
// members holding `prototype`), with four differences a client notices:
// - an empty body is `{}`, as no body is on routes whose body is an object (route-rules.ts): a PATCH
//   sent with a JSON Content-Type and nothing else is `No fields to update`, as without the header;
// - bytes that are not UTF-8 are 400: decoding them would store U+FFFD in their place, silently;
// - a body refused for a forbidden member name says so, rather than that it is not JSON;
// - objects and arrays nested deeper than MAX_DEPTH are 400: every later step (validation, the
//   custom fields' encoding) walks a value recursively, and a 30 KB body nested 5,000 deep
//   overflowed the stack there.
import type { FastifyInstance } from 'fastify';
import { badRequest } from './errors.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Levels of objects and arrays a body may nest: far more than any body of the API needs. */
const MAX_DEPTH = 64;

/** Whether the JSON `text` nests objects and arrays deeper than `max`; brackets in strings do not count. */
function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote, over escapes.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

declare module 'fastify' {
  interface FastifyRequest {
    /** The body's bytes as received, on routes that verify a signature over them (public/surface.ts). */
    rawBody?: Buffer;
  }
}

/** Installs the JSON parser in `app`'s context; `keepRaw` keeps each body's bytes as `request.rawBody`. */
export function installJsonBodies(app: FastifyInstance, options: { keepRaw?: boolean } = {}): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    if (options.keepRaw) request.rawBody = body;
    if (body.length === 0) return done(null, {});
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      return done(badRequest('Request body is not valid UTF-8'), undefined);
    }
    parse(request, text, (error, value) => {
      if (error && isJson(text)) return done(badRequest('Request body has a member named __proto__, or a constructor member with prototype, which is not accepted'), undefined);
      if (!error && nestsDeeperThan(text, MAX_DEPTH)) return done(badRequest(`Request body nests objects and arrays deeper than ${MAX_DEPTH} levels`), undefined);
      done(error, value);
    });
  });
}
