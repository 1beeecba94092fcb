// The inbound side of a connection: an e-mail connection's inbound URL (where a provider posts the
// raw messages the mailbox receives), a poll of its IMAP mailbox now, and where its polling stands;
// a Twilio connection's messaging webhook. These live
// under the connection (scope `connections:*`); what comes in lands in the inbox.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { nowMillis } from '../../platform/clock.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { inboundSmsPath } from '../outbox/sms-callbacks.routes.ts';
import { openConnection } from '../../platform/providers/connections.ts';
import { publicUrlOf } from '../../platform/public/public-url.ts';
import { Data, errorResponses, IdParams, Nullable } from '../../platform/schemas.ts';
import { mutate } from '../../platform/write.ts';
import { imapAccount, readCursor, schedulePoll } from './imap-poll.ts';
import { CONNECTION_NOT_FOUND, emailConnection, inboundPath, mintInboundLink } from './inbound-links.ts';

const tags = ['Inbox'];
const params = IdParams('conn', 'connection');
const time = (description: string) => Nullable(Type.Integer({ description, examples: [1767225600] }));

const InboundUrlSchema = Type.Object({
  connection_id: Type.String({ description: 'The connection', examples: ['conn_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  url: Type.String({ description: 'Where to POST each raw message (`Content-Type: message/rfc822`), signed with `secret` (Standard Webhooks). Shown once: only its hash is kept', examples: ['https://api.example.com/public/inbound/Xq3v0sQx2kH1n8bTqR6yWc4dZp7fLm9aJ0eUuVtYiOs'] }),
  secret: Type.String({ description: 'The signing secret (`whsec_…`) of the posts. Shown once', examples: ['whsec_MfKQ9r8GKY…'] }),
}, { additionalProperties: false });

const PollStateSchema = Type.Object({
  connection_id: Type.String({ description: 'The connection', examples: ['conn_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  mailbox: Type.String({ description: 'The IMAP mailbox polled', examples: ['INBOX'] }),
  uid_validity: Nullable(Type.String({ description: 'The mailbox\'s UIDVALIDITY when last read; when it changes, the mailbox is read again from its start (messages already recorded are not recorded twice)', examples: ['1795879932'] })),
  last_uid: Type.Integer({ description: 'The UID the mailbox was read up to', examples: [42] }),
  last_polled_at: time('When the last poll ended, unix seconds'),
  last_error: Nullable(Type.String({ description: 'Why the last poll failed (the server refused the login, did not answer in time, …); null after a poll that succeeded', examples: ['The IMAP server refused the username or password'] })),
  last_error_at: time('When the last poll failed, unix seconds'),
  messages_recorded: Type.Integer({ description: 'Messages the polls recorded in the inbox, in all', examples: [17] }),
}, { additionalProperties: false });

export async function connectionInboundRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.services;

  app.post('/connections/:id/inbound-url', {
    schema: {
      tags, operationId: 'createInboundUrl', summary: 'Make the inbound URL of a connection',
      description: 'Makes the URL a mail provider posts the e-mail connection\'s incoming messages to, raw (`message/rfc822`), each post signed with the secret answered here (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`). Both are shown only here; making a new one retires the previous URL. Posted messages land in the inbox like polled ones. 404 `Connection not found` for an unknown connection or one of another kind.',
      params, response: { 201: Data(InboundUrlSchema, 'The inbound URL and its signing secret, shown once'), ...errorResponses(404) },
    },
  }, (req, reply) => mutate(req, reply, 201, async (w) => {
    const minted = await mintInboundLink(w, app.services.secret, req.params.id);
    return { connection_id: req.params.id, url: publicUrlOf(inboundPath(minted.token)), secret: minted.secret };
  }));

  app.get('/connections/:id/sms-inbound-url', {
    schema: {
      tags, operationId: 'getSmsInboundUrl', summary: 'The messaging webhook of a Twilio connection',
      description: 'The URL to set as the Twilio number\'s messaging webhook ("A message comes in", HTTP POST): the texts it receives land in the inbox as `channel: sms` (see `POST /public/sms/twilio/…/inbound/…`). Twilio signs each post with the connection\'s Auth Token, so the URL holds no secret and is the same every time. 404 `Connection not found` for an unknown connection or one that is not a Twilio SMS connection.',
      params, response: { 200: Data(Type.Object({
        connection_id: Type.String({ description: 'The connection', examples: ['conn_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
        url: Type.String({ description: 'The messaging webhook, on PUBLIC_URL', examples: ['https://api.example.com/public/sms/twilio/org_01JD8X4M6R2T9Q3V5W7Y8Z0A1B/live/conn_01JD8X4M6R2T9Q3V5W7Y8Z0A1B/inbound/Xq3v0sQx2kH1n8bTqR6yWc4dZp7fLm9a'] }),
      }, { additionalProperties: false }), 'The messaging webhook'), ...errorResponses(404) },
    },
  }, async (req) => {
    const row = await selectIn(database.db, 'connections', req.scope).select(['kind', 'provider']).where('id', '=', req.params.id).executeTakeFirst();
    if (row?.kind !== 'sms' || row.provider !== 'twilio') throw notFound(CONNECTION_NOT_FOUND);
    return { data: { connection_id: req.params.id, url: publicUrlOf(inboundSmsPath(app.services.secret, req.scope, req.params.id)) } };
  });

  app.post('/connections/:id/poll', {
    schema: {
      tags, operationId: 'pollConnection', summary: 'Poll a connection\'s mailbox now',
      description: 'Polls the e-mail connection\'s IMAP mailbox now rather than at its next turn (every `IMAP_POLL_SECONDS`); `GET /v1/connections/{id}/poll` tells how it went. Test mode never reaches outside: a test-mode connection is not polled. 400 for a connection without IMAP settings.',
      params, response: { 202: Data(Type.Object({ connection_id: Type.String({ description: 'The connection' }), queued: Type.Boolean({ description: 'True: the poll is queued' }) }, { additionalProperties: false }), 'The poll is queued'), ...errorResponses(400, 404) },
    },
  }, (req, reply) => mutate(req, reply, 202, async (w) => {
    await emailConnection(w.tx, w.scope, req.params.id);
    const connection = await openConnection(w.tx, w.scope, app.services.secret, req.params.id);
    if (!connection || !imapAccount(connection.settings, connection.credentials)) throw badRequest('The connection has no IMAP settings (settings.imap) to poll');
    schedulePoll(w, req.params.id, nowMillis());
    return { connection_id: req.params.id, queued: true };
  }));

  app.get('/connections/:id/poll', {
    schema: {
      tags, operationId: 'getConnectionPoll', summary: 'Where a connection\'s polling stands',
      description: 'The cursor of the e-mail connection\'s IMAP mailbox: how far it was read, when, and why the last poll failed, if it did. 404 `Connection not found`; before the first poll, the cursor is at its start.',
      params, response: { 200: Data(PollStateSchema, 'The polling state'), ...errorResponses(404) },
    },
  }, async (req) => {
    await emailConnection(database.db, req.scope, req.params.id);
    const row = await readCursor(database.db, req.scope, req.params.id);
    return {
      data: {
        connection_id: req.params.id, mailbox: row?.mailbox ?? 'INBOX', uid_validity: row?.uid_validity ?? null, last_uid: Number(row?.last_uid ?? 0),
        last_polled_at: row?.last_polled_at == null ? null : Number(row.last_polled_at), last_error: row?.last_error ?? null,
        last_error_at: row?.last_error_at == null ? null : Number(row.last_error_at), messages_recorded: Number(row?.messages_recorded ?? 0),
      },
    };
  });
}
