// A mailbox's test: one real message sent through its connection now, while the caller waits, and
// what the server answered. It is recorded in the outbox like any message (`record_type` mailbox)
// and counts against the mailbox's limits; a mailbox at its limit is 409. The send job queued with
// it runs only later, as a guard: if this process stops during the provider call, the job finds the
// attempt begun and records it interrupted (it never sends the message a second time).
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { notFound } from '../../platform/errors.ts';
import { queueEmail } from '../../platform/outbox/send.ts';
import { emailKind } from '../../platform/providers/email/email.ts';
import { notConfigured } from '../../platform/providers/registry.ts';
import type { Row } from '../../platform/resource/define.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { Data, Email, errorResponses, IdParams } from '../../platform/schemas.ts';
import { runWrite, type Writer } from '../../platform/write.ts';
import { beginSend, recordRefused, recordSent, sendContextOf } from '../outbox/outbox.jobs.ts';
import { atLimit } from './sending.ts';

/** The guard job runs this long after a test, well past every SMTP timeout. */
const GUARD_MS = 10 * 60_000;

const TestBody = Type.Object({
  to: Type.Optional(Email('Where the test message goes; the mailbox\'s own address when omitted', 'grace@example.org')),
}, { additionalProperties: false, title: 'MailboxTest' });

const TestResult = Type.Object({
  ok: Type.Boolean({ description: 'Whether the server took the message', examples: [true] }),
  response: Type.String({ description: 'What the server answered last (`250 2.0.0 Ok: queued as …`), or why the message was not sent (a refused login, an unreachable server, a refused recipient)', examples: ['250 2.0.0 Ok: queued as 4XkQ2m'] }),
  message_id: Type.String({ description: 'The message\'s `Message-ID` header', examples: ['<3f1c9a…@example.com>'] }),
  outbox_message_id: Type.String({ description: 'The message in the outbox (`GET /v1/outbox/{id}`)', examples: ['msg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
}, { title: 'MailboxTestResult' });

export async function mailboxRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/mailboxes/:id/test', {
    schema: {
      tags: ['Mailboxes'], operationId: 'testMailbox', summary: 'Send a test message',
      description: 'Sends one message from the mailbox now, through its connection, and answers what the server said: `ok: true` with its reply, or `ok: false` with why (a refused login, an unreachable server, a refused recipient) — 200 either way, since the test itself ran. Nothing is retried. With a test-mode key the local driver records it (`ok: true`, nothing leaves the service). The message is in the outbox (`record_type` `mailbox`) and counts against the mailbox\'s limits: at its limit the test is 409, naming when it has room again. A live key with no connection and no operator default is 503 `provider_not_configured`.',
      params: IdParams('mbx', 'mailbox'), body: TestBody,
      response: { 200: Data(TestResult, 'What the server answered'), ...errorResponses(404, 409, 503) },
    },
  }, async (req) => {
    const { database, config, secret } = req.server.services;
    const scope = req.scope;
    const begun = await runWrite(database, scope, async (w) => {
      const mailbox = await selectIn(w.tx, 'mailboxes', w.scope).selectAll().where('id', '=', req.params.id).executeTakeFirst() as Row | undefined;
      if (!mailbox) throw notFound('Mailbox not found');
      const to = req.body.to ?? mailbox.email as string;
      const queued = await queueEmail(w, `mailbox-test:${mailbox.id}:${randomUUID()}`, {
        from: mailbox.email as string, to: [to], subject: 'Test message', mailboxId: mailbox.id, record: { type: 'mailbox', id: mailbox.id },
        text: `This message tests the mailbox ${mailbox.email as string}: it went through its connection as every message from it will.`,
      }, { runAt: w.now * 1000 + GUARD_MS });
      const attempt = await beginSend(w, await sendContextOf(w, queued.id, secret, config));
      if (attempt && 'retryAt' in attempt) throw atLimit(attempt);
      return { queued, attempt };
    });
    const { queued, attempt } = begun;
    const written: Writer = (s, work) => runWrite(database, s, work);
    const result = (ok: boolean, response: string) => ({ data: { ok, response, message_id: queued.message_id, outbox_message_id: queued.id } });
    if (!attempt) {
      // Not sent at all: a suppressed address, or no provider (live mode, nothing configured).
      const row = await selectIn(database.db, 'outbox_messages', scope).select(['error']).where('id', '=', queued.id).executeTakeFirstOrThrow();
      if (row.error === notConfigured(emailKind).message) throw notConfigured(emailKind);
      return result(false, row.error ?? 'The message was not sent');
    }
    try {
      const answer = await attempt.driver.send(attempt.message);
      await recordSent(written, scope, attempt.row, answer);
      return result(true, answer.response);
    } catch (error) {
      // A test is not retried: whatever kept the message from the server is its answer.
      await recordRefused(written, scope, attempt.row, error as Error);
      return result(false, (error as { response?: string }).response ?? (error as Error).message);
    }
  });
}
