// The public side of quotes, with no API key: the page of a sent quote (`/q/{token}`), the same as
// JSON, and the recipient's answers. The token is the only credential: unknown tokens and those of an
// earlier revision are 404. Routes of the public surface (platform/public/): limited per client
// address (PUBLIC_RATE_LIMIT_*) and per token, no CORS (the page posts to its own origin).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../platform/errors.ts';
import { nowSeconds } from '../../platform/ids.ts';
import { publicRoutes } from '../../platform/public/surface.ts';
import type { Row } from '../../platform/resource/define.ts';
import { Data, errorResponses } from '../../platform/schemas.ts';
import type { WriteContext } from '../../platform/write.ts';
import { missingPage, PAGE_HEADERS, quotePage } from './quote-page.ts';
import { AcceptBody, DeclineBody, PublicQuoteSchema, TokenParams } from './quotes.schemas.ts';
import { findQuoteLink, publicView, sellerName } from './public-view.ts';
import { stateAt } from './quotes.store.ts';
import { acceptQuote, declineQuote, quoteByLink, viewQuote, type Link } from './transitions.ts';

const tags = ['Public quotes'];
const security: never[] = [];

export async function publicQuoteRoutes(fastify: FastifyInstance): Promise<void> {
  const routes = publicRoutes(fastify);
  const { database, writes } = fastify.services;

  /** Runs a write of the link's tenant (no key made it), tells its live listeners, answers the public form. */
  async function write(found: Awaited<ReturnType<typeof findQuoteLink>>, work: (w: WriteContext, link: Link) => Promise<Row>) {
    const row = await writes.run(found.scope, (w) => work(w, found.link));
    fastify.services.notify(found.scope);
    return publicView(row, await sellerName(database.db, found.scope), nowSeconds());
  }

  /** The quote of a token as its recipient sees it; the first view of a sent quote records it. */
  async function view(token: string) {
    const found = await findQuoteLink(database.db, token);
    const row = await quoteByLink(database.db, found.scope, found.link);
    if (stateAt(String(row.status), row.valid_until, nowSeconds()) === 'sent') return write(found, viewQuote);
    return publicView(row, await sellerName(database.db, found.scope), nowSeconds());
  }

  const answered = (description: string) => ({ 200: Data(PublicQuoteSchema, description), ...errorResponses(404, 409) });

  routes.get('/v1/public/quotes/:token', {
    token: 'token',
    schema: {
      tags, security, params: TokenParams, operationId: 'getPublicQuote', summary: 'Get a quote by its public link',
      description: 'A sent quote as its recipient sees it, with no API key: lines, amounts, terms and its state as of now. The first view of a sent quote makes it `viewed` (`quote.viewed`). An unknown token, or one of an earlier revision (edit-as-draft), is 404 `Quote not found`. Limited per client address and per link.',
      response: { 200: Data(PublicQuoteSchema, 'The quote'), ...errorResponses(404) },
    },
  }, async (req) => ({ data: await view(req.params.token) }));

  routes.post('/v1/public/quotes/:token/accept', {
    token: 'token',
    schema: {
      tags, security, params: TokenParams, body: AcceptBody, summary: 'Accept a quote',
      description: 'Accepts a sent or viewed quote in the name given (`name`, the signer\'s full name; blank is 400), recording the name, the time and the client address, and records `quote.accepted`. Nothing else follows automatically: the seller decides what happens to the deal. A quote that is accepted, declined, expired or void is 409; an unknown or earlier-revision token 404.',
      response: answered('The accepted quote'),
    },
  }, async (req) => ({ data: await write(await findQuoteLink(database.db, req.params.token), (w, link) => acceptQuote(w, link, req.body.name, req.ip)) }));

  routes.post('/v1/public/quotes/:token/decline', {
    token: 'token',
    schema: {
      tags, security, params: TokenParams, body: DeclineBody, summary: 'Decline a quote',
      description: 'Declines a sent or viewed quote with an optional `reason` for the seller, and records `quote.declined`. A quote that is accepted, declined, expired or void is 409; an unknown or earlier-revision token 404.',
      response: answered('The declined quote'),
    },
  }, async (req) => ({ data: await write(await findQuoteLink(database.db, req.params.token), (w, link) => declineQuote(w, link, req.body?.reason)) }));

  routes.get('/q/:token', {
    token: 'token',
    schema: {
      tags, security, params: TokenParams, operationId: 'getQuotePage', summary: 'The page of a quote',
      querystring: Type.Object({}, { additionalProperties: true, description: 'Ignored: links opened from mail may gain tracking parameters' }),
      description: 'The HTML page of a sent quote for its recipient: lines, totals and terms, with Accept (the signer\'s full name) and Decline (an optional reason) while it awaits an answer. Self-contained (inline style and script, no external asset) under a Content-Security-Policy that allows only those. Opening it counts as a view like the JSON form. An unknown or earlier-revision token is a 404 page.',
      response: {
        200: { description: 'The page', content: { 'text/html': { schema: Type.String({ description: 'An HTML document' }) } } },
        404: { description: 'No quote has this link', content: { 'text/html': { schema: Type.String({ description: 'An HTML document' }) } } },
        ...errorResponses(),
      },
    },
  }, async (req, reply) => {
    reply.headers(PAGE_HEADERS).type('text/html; charset=utf-8');
    try {
      return quotePage(await view(req.params.token), req.params.token);
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 404) throw error;
      return reply.code(404).send(missingPage());
    }
  });
}
