// The inbound URL of an e-mail connection, with no API key: a mail provider (or the organization's
// own relay) posts each raw message the mailbox receives, signed with the link's secret (Standard
// Webhooks). A message larger than INBOUND_MAX_BYTES is 413, a body that is not a mail message (or
// one too intricate to parse: too many parts, multiparts nested too deeply) 422, a bad signature
// 401, an unknown token 404. A message the inbox already has is answered as it was recorded.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../platform/errors.ts';
import { MAIL_LIMITS, MailRefused, parseMail } from '../../platform/mail/parse.ts';
import { publicRoutes } from '../../platform/public/surface.ts';
import { standardWebhooksSignature } from '../../platform/public/signatures.ts';
import { Data, errorResponses, Nullable } from '../../platform/schemas.ts';
import { openInboundLink } from './inbound-links.ts';
import { receiveMail } from './receive.ts';
import { CONTACT_OF_ADDRESS } from './threading.ts';
import type { ReadAhead } from '../../platform/write.ts';

const RAW_TYPES = ['message/rfc822', 'application/octet-stream'];

const RawMessage = Type.Unknown({ description: 'The raw RFC 5322 message, as the mailbox received it' });

const TokenParams = Type.Object({ token: Type.String({ description: 'The token of the inbound URL', minLength: 1, maxLength: 100, examples: ['Xq3v0sQx2kH1n8bTqR6yWc4dZp7fLm9aJ0eUuVtYiOs'] }) });

const ReceivedSchema = Type.Object({
  status: Type.Union([Type.Literal('recorded'), Type.Literal('duplicate')], { description: '`recorded`, or `duplicate` when the inbox already had a message of this Message-ID (nothing was recorded again)' }),
  id: Type.String({ description: 'The inbox message', examples: ['imsg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  thread_id: Type.String({ description: 'The thread it is in', examples: ['thr_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  message_id: Type.String({ description: 'Its Message-ID', examples: ['<CAF=x1@mail.example.com>'] }),
  is_auto_reply: Type.Boolean({ description: 'An automatic message (out-of-office, autoresponder, bulk, delivery status notification)' }),
  outbox_id: Nullable(Type.String({ description: 'The sent message it answers or reports on', examples: ['msg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  bounce: Nullable(Type.String({ description: 'For a delivery status notification: `hard` or `soft`, the bounce it reported', examples: ['hard'] })),
}, { additionalProperties: false });

export async function publicInboundRoutes(fastify: FastifyInstance): Promise<void> {
  const { config, database, writes } = fastify.services;
  // The link is opened once a request: for the signature's check, then for the handler.
  const links = new WeakMap<object, ReturnType<typeof openInboundLink>>();
  const linkOf = (request: { params: unknown }) => {
    let link = links.get(request);
    if (!link) links.set(request, link = openInboundLink(database.db, fastify.services.secret, (request.params as { token: string }).token));
    return link;
  };
  const routes = publicRoutes(fastify);
  const maxBytes = config.inboundMaxBytes;
  // The raw message, as bytes: the signature is made over them, the parser reads them.
  fastify.addContentTypeParser(RAW_TYPES, { parseAs: 'buffer', bodyLimit: maxBytes }, (request, body: Buffer, done) => {
    request.rawBody = body;
    done(null, body);
  });

  routes.post('/public/inbound/:token', {
    token: 'token',
    bodyLimit: maxBytes,
    signature: {
      scheme: standardWebhooksSignature,
      secrets: async (request) => [(await linkOf(request)).signing],
    },
    schema: {
      tags: ['Inbound mail'], security: [], params: TokenParams, operationId: 'receiveInboundMail', summary: 'Post a received message',
      description: `Takes one raw RFC 5322 message (\`Content-Type: message/rfc822\` or \`application/octet-stream\`) that the connection's mailbox received, signed with the inbound URL's secret (Standard Webhooks: \`webhook-id\`, \`webhook-timestamp\` within five minutes, \`webhook-signature\`; else 401). It lands in the inbox like a polled message: threaded, automatic replies flagged, delivery status notifications marking the sent message bounced. 413 past ${maxBytes} bytes (\`INBOUND_MAX_BYTES\`), 422 for a body that is not a mail message (or has more than ${MAIL_LIMITS.maxParts} parts, or nests more than ${MAIL_LIMITS.maxMultiparts} multiparts), 404 for an unknown token. Limited per client address and per URL.`,
      body: { content: Object.fromEntries(RAW_TYPES.map((type) => [type, { schema: RawMessage }])) } as never,
      response: { 200: Data(ReceivedSchema, 'What was recorded'), ...errorResponses(401, 404, 413, 422) },
    },
  }, async (request) => {
    const link = await linkOf(request);
    const raw = Buffer.isBuffer(request.body) ? request.body : request.rawBody;
    if (!raw) throw new AppError('unsupported_media_type', `Post the raw message as ${RAW_TYPES.join(' or ')}`);
    let mail;
    try {
      mail = await parseMail(raw, { ...MAIL_LIMITS, maxBytes });
    } catch (error) {
      if (!(error instanceof MailRefused)) throw error;
      throw error.reason === 'too_large' ? new AppError('payload_too_large', error.message) : new AppError('validation', [{ loc: ['body'], msg: error.message, type: 'value_error' }]);
    }
    // Posts that arrive together are recorded in one transaction, their senders' contacts read at once.
    const from = mail.from?.address ?? null;
    const received = await writes.run(link.scope, (w) => receiveMail(w, fastify.services.secret, mail, { source: 'webhook', connectionId: link.connectionId }), null, { by: CONTACT_OF_ADDRESS as ReadAhead, key: () => from });
    fastify.services.notify(link.scope);
    return { data: received };
  });
}
