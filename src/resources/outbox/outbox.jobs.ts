// Sending one outbox message (platform/outbox/send.ts queues it). Exactly once in effect: the
// attempt is committed (`attempted_at`) before the provider is called, and its result after. A job
// that finds an attempt begun and never finished ran in a process that stopped during the call:
// whether the provider took the message cannot be known (RFC 1047), and sending it again could reach
// a person twice, so it is recorded `failed` (interrupted) and not sent again by itself. A transient
// refusal (4xx, no connection) is known to have sent nothing: the attempt is undone and retried.
import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { Mode } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { AppError } from '../../platform/errors.ts';
import { defineJobKind, RetryLater } from '../../platform/jobs/kinds.ts';
import { recordOutcome } from '../../platform/outbox/outcomes.ts';
import { outboxMessages } from '../../platform/outbox/outbox.resource.ts';
import { OUTBOX_SEND, type SendPayload } from '../../platform/outbox/send.ts';
import { suppressionOf } from '../../platform/outbox/suppressions.ts';
import { emailKind, PermanentSendError, type EmailDriver, type EmailMessage, type SendAnswer } from '../../platform/providers/email/email.ts';
import { resolveProvider } from '../../platform/providers/registry.ts';
import type { Row } from '../../platform/resource/define.ts';
import { presentOne } from '../../platform/resource/store.ts';
import { selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { nowMillis } from '../../platform/clock.ts';
import { secretOf } from '../../platform/secret.ts';
import { runWrite, type WriteContext } from '../../platform/write.ts';
import type { Config } from '../../config.ts';
import { dkimKeyFor } from '../domains/dkim.ts';
import { holdMailbox, senderOf } from '../mailboxes/sending.ts';

export const INTERRUPTED = 'Interrupted: the process stopped while the provider was being called, so whether it took the message is unknown; it is not sent again by itself';

const readRow = async (w: WriteContext, id: string) =>
  await selectIn(w.tx, 'outbox_messages', w.scope).selectAll().where('id', '=', id).executeTakeFirstOrThrow() as Row;

/** Ends a message that will not be sent, with `message.failed`. */
async function fail(w: WriteContext, row: Row, status: 'failed' | 'suppressed', error: string): Promise<void> {
  const changes = { status, error, updated_at: w.now };
  await updateIn(w.tx, 'outbox_messages', w.scope).set(changes).where('id', '=', row.id as string).execute();
  w.emit('message.failed', await presentOne(outboxMessages, w.tx, w.scope, { ...row, ...changes }));
}

/** What beginning an attempt gives: the driver and the message, or the time its mailbox has room again. */
export type Begun = { driver: EmailDriver; message: EmailMessage } | { retryAt: number; reason: string };

/**
 * Begins the attempt: the driver and the message to give it, or nothing when it is not to be sent. A
 * message of a mailbox goes through the mailbox's connection under its name, and waits while the
 * mailbox is at its limit (mailboxes/sending.ts); every live message from a verified sending domain
 * is signed with the domain's DKIM key.
 */
export async function beginSend(w: WriteContext, id: string, secret: string, config: Config): Promise<Begun | undefined> {
  const row = await selectIn(w.tx, 'outbox_messages', w.scope).selectAll().where('id', '=', id).executeTakeFirst() as Row | undefined;
  if (!row || row.status !== 'queued') return undefined;
  if (row.attempted_at !== null) return void await fail(w, row, 'failed', INTERRUPTED);
  const to = parseJson<string[]>(row.to_addresses);
  for (const address of to) {
    const found = await suppressionOf(w.tx, w.scope, 'email', address);
    if (found) return void await fail(w, row, 'suppressed', `${address} is suppressed (${found.reason})`);
  }
  let connectionId = row.connection_id as string | null;
  let fromName: string | null = null;
  const mailboxId = row.mailbox_id as string | null;
  if (mailboxId) {
    const sender = await senderOf(w, mailboxId);
    if ('gone' in sender) return void await fail(w, row, 'failed', sender.gone);
    connectionId ??= sender.connectionId;
    fromName = sender.displayName;
  }
  let resolved;
  try {
    resolved = await resolveProvider(emailKind, { db: w.tx, scope: w.scope, secret, config }, connectionId);
  } catch (error) {
    if (error instanceof AppError) return void await fail(w, row, 'failed', error.message);
    throw error;
  }
  const named = /^(.*) <([^>]+)>$/.exec(row.from_address as string);
  const from = named ? { name: named[1], address: named[2] } : { address: row.from_address as string, name: fromName };
  const dkim = resolved.provider === 'local' ? undefined : await dkimKeyFor(w.tx, w.scope, secret, from.address);
  if (mailboxId) {
    // Last, so that the mailbox's lock is held only for the count, the attempt and the commit.
    const held = await holdMailbox(w, mailboxId);
    if ('gone' in held) return void await fail(w, row, 'failed', held.gone);
    if ('retryAt' in held) return held;
  }
  await updateIn(w.tx, 'outbox_messages', w.scope).set({
    attempted_at: w.now, attempts: Number(row.attempts) + 1, provider: resolved.provider, connection_id: resolved.connectionId ?? row.connection_id as string | null, updated_at: w.now,
  }).where('id', '=', id).execute();
  return {
    driver: resolved.driver,
    message: {
      messageId: row.message_id as string, from, to, subject: row.subject as string, text: row.text as string | null, html: row.html as string | null,
      headers: parseJson<Record<string, string>>(row.headers), ...(dkim ? { dkim } : {}),
    },
  };
}

/** Records a message the provider took, with `message.sent` (and the local driver's outcome). */
export async function recordSent(database: Database, scope: Scope, id: string, taken: SendAnswer): Promise<void> {
  await runWrite(database, scope, async (w) => {
    const row = await readRow(w, id);
    const changes = { status: 'sent', sent_at: w.now, error: null, provider_answer: JSON.stringify(taken), updated_at: w.now };
    await updateIn(w.tx, 'outbox_messages', w.scope).set(changes).where('id', '=', id).execute();
    w.emit('message.sent', await presentOne(outboxMessages, w.tx, w.scope, { ...row, ...changes }));
    if (taken.outcome) await recordOutcome(w, id, taken.outcome, { reason: taken.response, addresses: taken.rejected });
  });
}

/** Records a message the provider refused (or could not be reached for) as failed, with what it said. */
export async function recordRefused(database: Database, scope: Scope, id: string, error: Error): Promise<void> {
  await runWrite(database, scope, async (w) => {
    const row = await readRow(w, id);
    const response = error instanceof PermanentSendError ? error.response : error.message;
    await updateIn(w.tx, 'outbox_messages', w.scope).set({ provider_answer: JSON.stringify({ response }) }).where('id', '=', id).execute();
    await fail(w, row, 'failed', error.message);
  });
}

export const outboxSend = defineJobKind<SendPayload>({
  ...OUTBOX_SEND,
  async run({ id }, { database, config, job, settle }) {
    const scope = { orgId: job.orgId, mode: job.mode as Mode };
    const secret = await secretOf(database.db, config.secretKey);
    const attempt = await runWrite(database, scope, (w) => beginSend(w, id, secret, config));
    if (!attempt) return;
    if ('retryAt' in attempt) {
      if (job.attempt >= OUTBOX_SEND.maxAttempts) {
        // The claim took the job's last attempt (after transient failures): a job keyed by the
        // message waits for the slot instead, one however often this runs.
        await runWrite(database, scope, async (w) => void w.schedule(`outbox.send:${id}`, OUTBOX_SEND, { id } satisfies SendPayload, attempt.retryAt * 1000));
        return;
      }
      // A mailbox at its limit is no failure: the attempt the claim counted is given back with the
      // outcome, so waiting, however long, never makes the message dead.
      settle((db) => db.updateTable('jobs').set({ attempts: sql`attempts - 1` }).where('org_id', '=', job.orgId).where('mode', '=', job.mode as Mode).where('id', '=', job.id).where('attempts', '>', 0).execute());
      throw new RetryLater(attempt.reason, Math.max(1000, attempt.retryAt * 1000 - nowMillis()));
    }
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
      return recordRefused(database, scope, id, error);
    }
    // Taken: a failure from here on leaves the attempt begun, and the message is never sent twice.
    await recordSent(database, scope, id, answer);
  },
});
