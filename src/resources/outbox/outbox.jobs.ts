// Sending one outbox message (platform/outbox/send.ts queues it). Exactly once in effect: the
// attempt is committed (`attempted_at`) before the provider is called, and its result after. A job
// that finds an attempt begun and never finished ran in a process that stopped during the call:
// whether the provider took the message cannot be known (RFC 1047), and sending it again could reach
// a person twice, so it is recorded `failed` (interrupted) and not sent again by itself. A transient
// refusal (4xx, no connection) is known to have sent nothing: the attempt is undone and retried.
import type { Mode } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { AppError } from '../../platform/errors.ts';
import { defineJobKind } from '../../platform/jobs/kinds.ts';
import { recordOutcome } from '../../platform/outbox/outcomes.ts';
import { outboxMessages } from '../../platform/outbox/outbox.resource.ts';
import { OUTBOX_SEND, type SendPayload } from '../../platform/outbox/send.ts';
import { suppressionOf } from '../../platform/outbox/suppressions.ts';
import { emailKind, PermanentSendError, type EmailDriver, type EmailMessage } from '../../platform/providers/email/email.ts';
import { resolveProvider } from '../../platform/providers/registry.ts';
import type { Row } from '../../platform/resource/define.ts';
import { presentOne } from '../../platform/resource/store.ts';
import { selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import { secretOf } from '../../platform/secret.ts';
import { runWrite, type WriteContext } from '../../platform/write.ts';
import type { Config } from '../../config.ts';

export const INTERRUPTED = 'Interrupted: the process stopped while the provider was being called, so whether it took the message is unknown; it is not sent again by itself';

const readRow = async (w: WriteContext, id: string) =>
  await selectIn(w.tx, 'outbox_messages', w.scope).selectAll().where('id', '=', id).executeTakeFirstOrThrow() as Row;

/** Ends a message that will not be sent, with `message.failed`. */
async function fail(w: WriteContext, row: Row, status: 'failed' | 'suppressed', error: string): Promise<void> {
  const changes = { status, error, updated_at: w.now };
  await updateIn(w.tx, 'outbox_messages', w.scope).set(changes).where('id', '=', row.id as string).execute();
  w.emit('message.failed', await presentOne(outboxMessages, w.tx, w.scope, { ...row, ...changes }));
}

/** Begins the attempt: the driver and the message to give it, or nothing when it is not to be sent. */
async function begin(w: WriteContext, id: string, secret: string, config: Config): Promise<{ driver: EmailDriver; message: EmailMessage } | undefined> {
  const row = await selectIn(w.tx, 'outbox_messages', w.scope).selectAll().where('id', '=', id).executeTakeFirst() as Row | undefined;
  if (!row || row.status !== 'queued') return undefined;
  if (row.attempted_at !== null) return void await fail(w, row, 'failed', INTERRUPTED);
  const to = parseJson<string[]>(row.to_addresses);
  for (const address of to) {
    const found = await suppressionOf(w.tx, w.scope, 'email', address);
    if (found) return void await fail(w, row, 'suppressed', `${address} is suppressed (${found.reason})`);
  }
  let resolved;
  try {
    resolved = await resolveProvider(emailKind, { db: w.tx, scope: w.scope, secret, config }, row.connection_id as string | null);
  } catch (error) {
    if (error instanceof AppError) return void await fail(w, row, 'failed', error.message);
    throw error;
  }
  await updateIn(w.tx, 'outbox_messages', w.scope).set({
    attempted_at: w.now, attempts: Number(row.attempts) + 1, provider: resolved.provider, connection_id: resolved.connectionId ?? row.connection_id as string | null, updated_at: w.now,
  }).where('id', '=', id).execute();
  const from = /^(.*) <([^>]+)>$/.exec(row.from_address as string);
  return {
    driver: resolved.driver,
    message: {
      messageId: row.message_id as string, from: from ? { name: from[1], address: from[2] } : { address: row.from_address as string },
      to, subject: row.subject as string, text: row.text as string | null, html: row.html as string | null, headers: parseJson<Record<string, string>>(row.headers),
    },
  };
}

export const outboxSend = defineJobKind<SendPayload>({
  ...OUTBOX_SEND,
  async run({ id }, { database, config, job }) {
    const scope = { orgId: job.orgId, mode: job.mode as Mode };
    const secret = await secretOf(database.db, config.secretKey);
    const attempt = await runWrite(database, scope, (w) => begin(w, id, secret, config));
    if (!attempt) return;
    let answer;
    try {
      answer = await attempt.driver.send(attempt.message);
    } catch (error) {
      const message = (error as Error).message;
      if (!(error instanceof PermanentSendError)) {
        // Nothing was taken: the attempt is undone, and the job tried again later.
        await runWrite(database, scope, (w) => updateIn(w.tx, 'outbox_messages', w.scope).set({ attempted_at: null, error: message, updated_at: w.now }).where('id', '=', id).execute());
        throw error;
      }
      return runWrite(database, scope, async (w) => {
        const row = await readRow(w, id);
        await updateIn(w.tx, 'outbox_messages', w.scope).set({ provider_answer: JSON.stringify({ response: error.response }) }).where('id', '=', id).execute();
        await fail(w, row, 'failed', message);
      });
    }
    // Taken: a failure from here on leaves the attempt begun, and the message is never sent twice.
    const taken = answer;
    await runWrite(database, scope, async (w) => {
      const row = await readRow(w, id);
      const changes = { status: 'sent', sent_at: w.now, error: null, provider_answer: JSON.stringify(taken), updated_at: w.now };
      await updateIn(w.tx, 'outbox_messages', w.scope).set(changes).where('id', '=', id).execute();
      w.emit('message.sent', await presentOne(outboxMessages, w.tx, w.scope, { ...row, ...changes }));
      if (taken.outcome) await recordOutcome(w, id, taken.outcome, { reason: taken.response, addresses: taken.rejected });
    });
  },
});
