// The unsubscribe link of a message (`/public/unsubscribe/{token}`), with no API key: the token is
// the only credential. GET shows a confirmation page and changes nothing (mail scanners and link
// previews open every link); POST unsubscribes at once, which is what a mail provider's one-click
// unsubscribe does (RFC 8058: `List-Unsubscribe=One-Click`, form-encoded) and what the page's button
// sends. A second POST answers the same. Routes of the public surface (platform/public/): limited per
// client address and per link, no CORS (the page posts to its own origin).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { notFound } from '../../platform/errors.ts';
import { CHANNELS, RECIPIENT_REASONS, suppress, type Channel } from '../../platform/outbox/suppressions.ts';
import { findLink } from '../../platform/public/link-tokens.ts';
import { PUBLIC_BODY_LIMIT, publicRoutes } from '../../platform/public/surface.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { Data, ErrorBody, errorResponses, Str, StringEnum } from '../../platform/schemas.ts';
import type { Scope } from '../../platform/scope.ts';
import { confirmPage, donePage, missingPage, PAGE_HEADERS, type LinkView } from './unsubscribe-page.ts';

const tags = ['Unsubscribe links'];
const security: never[] = [];
const LINK_NOT_FOUND = 'Unsubscribe link not found';

const params = Type.Object({
  token: Str({ description: 'The token of an unsubscribe link (the last segment of the URL in a message)', minLength: 1, maxLength: 100, examples: ['Xq3v0sQx2kH1n8bTqR6yWc4dZp7fLm9aJ0eUuVtYiOs'] }),
});
// Links opened from mail may gain tracking parameters; they are ignored.
const querystring = Type.Object({}, { additionalProperties: true, description: 'Ignored: links in messages may gain tracking parameters' });
const body = Type.Object({
  'List-Unsubscribe': Type.Optional(Str({ description: '`One-Click`, as RFC 8058 mail providers send it (form-encoded); the POST unsubscribes whatever its body', maxLength: 100, examples: ['One-Click'] })),
}, { additionalProperties: true, description: 'RFC 8058 `List-Unsubscribe=One-Click` (`application/x-www-form-urlencoded` or `multipart/form-data`), JSON, or no body: the POST itself unsubscribes' });

const Unsubscribed = Type.Object({
  unsubscribed: Type.Literal(true, { description: 'Always true: the address is suppressed on its channel' }),
  channel: StringEnum(CHANNELS, { description: 'The channel of the link', examples: ['email'] }),
  address: Type.String({ description: 'The address the link was made for', examples: ['ada@example.com'] }),
}, { title: 'Unsubscribed', description: 'The outcome of an unsubscribe link' });

const html = (description: string) => ({ description, content: { 'text/html': { schema: Type.String({ description: 'An HTML document' }) } } });

/** Whether the caller is a browser wanting a page (a form's POST) rather than JSON (a mail provider, a program). */
const wantsPage = (request: FastifyRequest) => /\btext\/html\b/.test(request.headers.accept ?? '');

async function viewOf(db: Kysely<DB>, scope: Scope, row: { channel: string; address: string }): Promise<LinkView> {
  const org = await db.selectFrom('organizations').select('name').where('id', '=', scope.orgId).executeTakeFirst();
  return { sender: org?.name ?? '', channel: row.channel, address: row.address };
}

/** Whether the recipient already asked not to be sent to on this address (an unsubscribe or a complaint). */
async function alreadyAsked(db: Kysely<DB>, scope: Scope, row: { channel: string; address: string }): Promise<boolean> {
  const held = await selectIn(db, 'suppressions', scope).select('reason').where('channel', '=', row.channel).where('address', '=', row.address).executeTakeFirst();
  return held !== undefined && RECIPIENT_REASONS.has(held.reason);
}

/** Form bodies (RFC 8058's one-click, the page's button) parsed in this group's routes only; multipart's fields are not needed. */
function acceptForms(fastify: FastifyInstance): void {
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: PUBLIC_BODY_LIMIT }, (_request, text, done) => {
    done(null, Object.fromEntries(new URLSearchParams(text as string)));
  });
  fastify.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit: PUBLIC_BODY_LIMIT }, (_request, _body, done) => done(null, {}));
}

export async function unsubscribeRoutes(fastify: FastifyInstance): Promise<void> {
  acceptForms(fastify);
  const routes = publicRoutes(fastify);
  const { database, writes } = fastify.services;
  const db = database.db;
  const missing = (request: FastifyRequest, reply: FastifyReply) => {
    if (!wantsPage(request)) throw notFound(LINK_NOT_FOUND);
    return reply.code(404).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(missingPage());
  };

  routes.get('/public/unsubscribe/:token', {
    token: 'token',
    schema: {
      tags, security, params, querystring, operationId: 'getUnsubscribePage', summary: 'The page of an unsubscribe link',
      description: 'The page a recipient opens from a message: it names the address and the sender and asks for confirmation with a button (which POSTs to the same URL). Opening it unsubscribes nobody: mail scanners open links. An address already unsubscribed shows that it is. An unknown token is a 404 page.',
      response: { 200: html('The page'), 404: html('No link has this token'), ...errorResponses() },
    },
  }, async (req, reply) => {
    const found = await findLink(db, 'unsubscribe_links', req.params.token);
    reply.headers(PAGE_HEADERS).type('text/html; charset=utf-8');
    if (!found) return reply.code(404).send(missingPage());
    const view = await viewOf(db, found.scope, found.row);
    return (await alreadyAsked(db, found.scope, found.row)) ? donePage(view) : confirmPage(view, `./${encodeURIComponent(req.params.token)}`);
  });

  routes.post('/public/unsubscribe/:token', {
    token: 'token',
    schema: {
      tags, security, params, querystring, body, operationId: 'unsubscribe', summary: 'Unsubscribe (one click)',
      description: 'Suppresses the link\'s address on its channel at once, with no key and no login: the RFC 8058 one-click unsubscribe that mail providers POST (`List-Unsubscribe=One-Click`, form-encoded) and the confirmation page\'s button. Records `suppression.created` and `contact.unsubscribed` (an address suppressed by hand or for a hard bounce becomes unsubscribed: `suppression.updated`). Idempotent: a second POST answers 200 and records nothing. A browser (`Accept: text/html`) gets a page, any other caller JSON. An unknown token is 404.',
      response: {
        200: { description: 'The address is unsubscribed', content: { 'application/json': { schema: Data(Unsubscribed, 'The address is unsubscribed') }, 'text/html': { schema: Type.String({ description: 'An HTML document' }) } } },
        404: { description: 'No link has this token', content: { 'application/json': { schema: Type.Object(ErrorBody.properties) }, 'text/html': { schema: Type.String({ description: 'An HTML document' }) } } },
        ...errorResponses(),
      },
    },
  }, async (req, reply) => {
    const found = await findLink(db, 'unsubscribe_links', req.params.token);
    if (!found) return missing(req, reply);
    const { scope, row } = found;
    const channel = row.channel as Channel;
    // The write of the link's tenant (no key made it); its listeners are told.
    await writes.run(scope, (w) => suppress(w, { channel, address: row.address, reason: 'unsubscribed', contact_id: row.contact_id, message_id: row.message_id }));
    fastify.services.notify(scope);
    if (!wantsPage(req)) return { data: { unsubscribed: true as const, channel, address: row.address } };
    return reply.headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(donePage(await viewOf(db, scope, row)));
  });
}
