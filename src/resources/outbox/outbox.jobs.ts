// Sending one outbox message, an e-mail or a text (platform/outbox/send.ts queues it), through the
// driver of its channel's provider kind: one job kind, the same rules for both. Exactly once in
// effect: the attempt is committed (`attempted_at`) before the provider is called, and its result after. A job
// that finds an attempt begun and never finished ran in a process that stopped during the call:
// whether the provider took the message cannot be known (RFC 1047), and sending it again could reach
// a person twice, so it is recorded `failed` (interrupted) and not sent again by itself. A transient
// refusal (4xx, no connection) is known to have sent nothing: the attempt is undone and retried.
// What a send reads about its message, mailbox, connection and domain comes read for the whole
// claim (send-context.ts); the attempt's transaction checks again what must hold at that moment.
import { sql } from 'kysely';
import type { Mode } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { AppError } from '../../platform/errors.ts';
import { defineJobKind, RetryLater } from '../../platform/jobs/kinds.ts';
import { recordOutcome } from '../../platform/outbox/outcomes.ts';
import { outboxMessages } from '../../platform/outbox/outbox.resource.ts';
import { OUTBOX_SEND, type SendPayload } from '../../platform/outbox/send.ts';
import { suppressionsOf, type Channel } from '../../platform/outbox/suppressions.ts';
import { shaped } from '../../db/prepared.ts';
import { PermanentSendError, type EmailDriver, type EmailMessage } from '../../platform/providers/email/email.ts';
import type { SmsAnswer } from '../../platform/providers/sms/sms.ts';
import type { Row } from '../../platform/resource/define.ts';
import { presentOne } from '../../platform/resource/store.ts';
import { selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { nowMillis } from '../../platform/clock.ts';
import { secretOf } from '../../platform/secret.ts';
import type { Ahead, ReadAhead, WriteContext, Writer } from '../../platform/write.ts';
import type { Config } from '../../config.ts';
import { holdMailbox } from '../mailboxes/sending.ts';
import { loadClaimedSends, loadSendContexts, type SendContext } from './send-context.ts';

/** A message as its attempt's transaction reads it: locked, with why one of its recipients may not be sent to. */
interface Current { row: Row; suppressed: string | undefined }

/**
 * The sends' writes of one tenant that commit together make a run: they read their messages at
 * once (locked on PostgreSQL: no other process's write changes them before the commit) with their
 * recipients' suppressions, and share one end (their attempts, events and deferred updates in one
 * statement on PostgreSQL). Each changes only its own message's row, which no other write of the
 * run reads.
 */
const SENDS: ReadAhead<string, Current | undefined> = {
  key: (row) => row.id as string,
  async read(tx, dialect, scope, ids) {
    let read = selectIn(tx, 'outbox_messages', scope).selectAll().where('id', 'in', [...new Set(ids)]);
    if (dialect === 'postgres') read = read.forUpdate();
    const rows = new Map((await read.execute() as Row[]).map((r) => [r.id as string, r]));
    const recipients = new Map<Channel, Set<string>>();
    for (const r of rows.values()) {
      if (r.status !== 'queued') continue;
      let addresses = recipients.get(r.channel as Channel);
      if (!addresses) recipients.set(r.channel as Channel, (addresses = new Set()));
      for (const a of parseJson<string[]>(r.to_addresses)) addresses.add(a);
    }
    const reasons = new Map<string, string>();
    for (const [channel, addresses] of recipients) {
      for (const [address, why] of await suppressionsOf(tx, scope, channel, [...addresses])) reasons.set(`${channel} ${address}`, why.reason);
    }
    return ids.map((id) => {
      const row = rows.get(id);
      if (!row) return undefined;
      const hit = parseJson<string[]>(row.to_addresses).find((a) => reasons.has(`${row.channel as string} ${a}`));
      return { row, suppressed: hit && `${hit} is suppressed (${reasons.get(`${row.channel as string} ${hit}`)})` };
    });
  },
};
const inRun = (id: string): Ahead => ({ by: SENDS as ReadAhead, key: () => id });

export const INTERRUPTED = 'Interrupted: the process stopped while the provider was being called, so whether it took the message is unknown; it is not sent again by itself';

/** Ends a message that will not be sent, with `message.failed` (its status and error before among the previous attributes). */
async function fail(w: WriteContext, row: Row, status: 'failed' | 'suppressed', error: string): Promise<void> {
  const changes = { status, error, updated_at: w.now };
  await updateIn(w.tx, 'outbox_messages', w.scope).set(changes).where('id', '=', row.id as string).execute();
  w.emit('message.failed', await presentOne(outboxMessages, w.tx, w.scope, { ...row, ...changes }), { status: row.status, error: row.error ?? null });
}

/** What beginning an attempt gives: the driver, the message and its row as attempted, or the time its mailbox has room again. */
export type Begun = { driver: EmailDriver; message: EmailMessage; row: Row } | { retryAt: number; reason: string };

/** What a provider's answer tells the outbox (stored whole as `provider_answer`). */
type Taken = { response: string; outcome?: 'delivered' | 'bounced'; rejected?: string[] };
/** An attempt begun, whatever the channel: the provider call to make, and the row as attempted. */
type Call = { row: Row; send(): Promise<Taken> };

/**
 * The message as it is now, when it is to be attempted: queued, never attempted, to no suppressed
 * recipient. Otherwise undefined, and an attempt begun and never finished (interrupted) or a
 * suppressed recipient ends it failed or suppressed.
 */
async function toAttempt(w: WriteContext, id: string | undefined): Promise<Row | undefined> {
  const current = id === undefined ? undefined : await w.readAhead(SENDS, id);
  if (!current || current.row.status !== 'queued') return undefined;
  const { row, suppressed } = current;
  if (row.attempted_at !== null) return void await fail(w, row, 'failed', INTERRUPTED);
  if (suppressed) return void await fail(w, row, 'suppressed', suppressed);
  return row;
}

/** Records the attempt (`set` beside it) with the write's end: the row as attempted. */
function recordAttempt(w: WriteContext, row: Row, set: Record<string, unknown>): Row {
  const attempt = { attempted_at: w.now, attempts: Number(row.attempts) + 1, updated_at: w.now, ...set };
  // Every send makes it: compiled once per shape (the columns set).
  w.later(shaped(w.tx, w.dialect, `outbox attempt ${Object.keys(set).join()}`, [...Object.values(attempt), w.scope.orgId, w.scope.mode, row.id], () =>
    updateIn(w.tx, 'outbox_messages', w.scope).set(attempt).where('id', '=', row.id as string)));
  return { ...row, ...attempt };
}

const gone = (id: string) => `The mailbox ${id} was deleted before the message was sent`;

/**
 * Begins the attempt: the driver and the message to give it, or nothing when it is not to be sent. A
 * message of a mailbox goes through the mailbox's connection under its name, and waits while the
 * mailbox is at its limit (mailboxes/sending.ts); every live message from a verified sending domain
 * is signed with the domain's DKIM key. `context` was read before this transaction: the attempt is
 * recorded only if the message is still queued, unattempted and to no suppressed address.
 */
export async function beginSend(w: WriteContext, context: SendContext): Promise<Begun | undefined> {
  const { mailbox, provider, dkim } = context;
  const row = await toAttempt(w, context.row?.id as string | undefined);
  if (!row) return undefined;
  const to = parseJson<string[]>(row.to_addresses);
  const mailboxId = row.mailbox_id as string | null;
  if (mailboxId && !mailbox) return void await fail(w, row, 'failed', gone(mailboxId));
  if (!provider || provider instanceof AppError) return void await fail(w, row, 'failed', provider?.message ?? 'No e-mail provider');
  if (mailboxId) {
    // Last, so that the mailbox's lock is held only for the count, the attempt and the commit.
    const held = await holdMailbox(w, mailboxId);
    if ('gone' in held) return void await fail(w, row, 'failed', held.gone);
    if ('retryAt' in held) return held;
  }
  const attempted = recordAttempt(w, row, { provider: provider.provider, connection_id: provider.connectionId ?? row.connection_id as string | null });
  const named = /^(.*) <([^>]+)>$/.exec(row.from_address as string);
  const from = named ? { name: named[1], address: named[2] } : { address: row.from_address as string, name: (mailbox?.display_name as string | null | undefined) ?? null };
  return {
    driver: provider.driver,
    row: attempted,
    message: {
      messageId: row.message_id as string, from, to, subject: row.subject as string, text: row.text as string | null, html: row.html as string | null,
      headers: parseJson<Record<string, string>>(row.headers), ...(dkim ? { dkim } : {}),
    },
  };
}

/**
 * Begins the attempt of a text: through the SMS provider, from the message's sender or else the
 * provider's own number (recorded with the attempt), to its one E.164 recipient.
 */
async function beginText(w: WriteContext, context: SendContext): Promise<Call | undefined> {
  const { sms } = context;
  const row = await toAttempt(w, context.row?.id as string | undefined);
  if (!row) return undefined;
  if (!sms || sms instanceof AppError) return void await fail(w, row, 'failed', sms?.message ?? 'No SMS provider');
  const to = parseJson<string[]>(row.to_addresses);
  const from = (row.from_address as string | null) ?? sms.driver.sender;
  const attempted = recordAttempt(w, row, { provider: sms.provider, connection_id: sms.connectionId ?? row.connection_id as string | null, from_address: from });
  const text = { reference: row.message_id as string, from, to: to[0], body: (row.text as string | null) ?? '' };
  return { row: attempted, send: (): Promise<SmsAnswer> => sms.driver.send(text) };
}

/** Begins the attempt of a message of either channel: the call to make, or when its mailbox has room again. */
async function begin(w: WriteContext, context: SendContext): Promise<Call | { retryAt: number; reason: string } | undefined> {
  if (context.row?.channel === 'sms') return beginText(w, context);
  const begun = await beginSend(w, context);
  return begun && 'driver' in begun ? { row: begun.row, send: () => begun.driver.send(begun.message) } : begun;
}

/**
 * Records a message the provider took (`row` as attempted), with `message.sent`, and what the local
 * driver says became of it. No read: the update goes with the write's end.
 */
export async function recordSent(write: Writer, scope: Scope, row: Row, taken: Taken): Promise<void> {
  await write(scope, async (w) => {
    const sent = { status: 'sent', sent_at: w.now, error: null, provider_answer: JSON.stringify(taken), updated_at: w.now };
    const delivered = taken.outcome === 'delivered' ? { status: 'delivered', delivered_at: w.now } : {};
    // A provider's callback may have recorded its outcome before this commits: the status only moves on from `queued`.
    const status = sql<string>`case when status = 'queued' then ${delivered.status ?? sent.status} else status end`;
    w.later(updateIn(w.tx, 'outbox_messages', w.scope).set({ ...sent, ...delivered, status }).where('id', '=', row.id as string));
    const record = await presentOne(outboxMessages, w.tx, w.scope, { ...row, ...sent });
    w.emit('message.sent', record);
    if (row.channel === 'sms') w.emit('sms.sent', record);
    if (taken.outcome === 'delivered') w.emit('message.delivered', await presentOne(outboxMessages, w.tx, w.scope, { ...row, ...sent, ...delivered }));
    if (taken.outcome === 'bounced') {
      await w.flush();
      await recordOutcome(w, row.id as string, 'bounced', { reason: taken.response, addresses: taken.rejected });
    }
  }, inRun(row.id as string));
}

/** Records a message the provider refused (or could not be reached for) as failed, with what it said. */
export async function recordRefused(write: Writer, scope: Scope, row: Row, error: Error): Promise<void> {
  await write(scope, async (w) => {
    const response = error instanceof PermanentSendError ? error.response : error.message;
    await updateIn(w.tx, 'outbox_messages', w.scope).set({ provider_answer: JSON.stringify({ response }) }).where('id', '=', row.id as string).execute();
    await fail(w, row, 'failed', error.message);
  });
}

/** The send context of one message, read on its own (a claim whose `load` failed, a mailbox's test). */
export async function sendContextOf(w: WriteContext, id: string, secret: string, config: Config): Promise<SendContext> {
  return (await loadSendContexts(w.tx, w.scope, [id], secret, config))[0];
}

export const outboxSend = defineJobKind<SendPayload, SendContext>({
  ...OUTBOX_SEND,
  async load(jobs, { database, config }) {
    const secret = await secretOf(database.db, config.secretKey);
    return loadClaimedSends(database.db, jobs.map(({ payload, job }) => ({ id: payload.id, orgId: job.orgId, mode: job.mode })), secret, config);
  },
  async run({ id }, { database, config, job, settle, write, loaded }) {
    const scope = { orgId: job.orgId, mode: job.mode as Mode };
    const context = loaded ?? (await loadClaimedSends(database.db, [{ id, ...scope }], await secretOf(database.db, config.secretKey), config))[0];
    const attempt = await write(scope, (w) => begin(w, context), inRun(id));
    if (!attempt) return;
    if ('retryAt' in attempt) {
      if (job.attempt >= OUTBOX_SEND.maxAttempts) {
        // The claim took the job's last attempt (after transient failures): a job keyed by the
        // message waits for the slot instead, one however often this runs.
        await write(scope, async (w) => void w.schedule(`outbox.send:${id}`, OUTBOX_SEND, { id } satisfies SendPayload, attempt.retryAt * 1000));
        return;
      }
      // A mailbox at its limit is no failure: the attempt the claim counted is given back with the
      // outcome, so waiting, however long, never makes the message dead.
      settle((db) => db.updateTable('jobs').set({ attempts: sql`attempts - 1` }).where('org_id', '=', job.orgId).where('mode', '=', job.mode as Mode).where('id', '=', job.id).where('attempts', '>', 0).execute());
      throw new RetryLater(attempt.reason, Math.max(1000, attempt.retryAt * 1000 - nowMillis()));
    }
    let answer;
    try {
      answer = await attempt.send();
    } catch (error) {
      const message = (error as Error).message;
      if (!(error instanceof PermanentSendError)) {
        // Nothing was taken: the attempt is undone, and the job tried again later.
        await write(scope, (w) => updateIn(w.tx, 'outbox_messages', w.scope).set({ attempted_at: null, error: message, updated_at: w.now }).where('id', '=', id).execute());
        throw error;
      }
      return recordRefused(write, scope, attempt.row, error);
    }
    // Taken: a failure from here on leaves the attempt begun, and the message is never sent twice.
    await recordSent(write, scope, attempt.row, answer);
  },
});
