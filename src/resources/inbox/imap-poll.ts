// Polling one connection's IMAP mailbox into the inbox. Each message is parsed and recorded in a
// write of its own that also moves the connection's cursor past it, so a poll cut short goes on from
// the last message recorded. A failure (the server refuses, hangs, or is not there) is recorded on
// the cursor, never thrown: the next poll is scheduled whatever happened, so one dead mailbox keeps
// its own rhythm and never turns into retries. Test mode never reaches outside: its connections are
// not polled.
import { sql, type Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import { MAIL_LIMITS, MailRefused, parseMail, type InboundMail } from '../../platform/mail/parse.ts';
import { openConnection } from '../../platform/providers/connections.ts';
import { describeImapError, pollMailbox, type ImapCredentials, type ImapSettings } from '../../platform/providers/email/imap.ts';
import { selectIn, tenantOf, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { runWrite, type WriteContext } from '../../platform/write.ts';
import { receiveMail } from './receive.ts';

/** The key of a connection's next poll: one waiting poll per connection. */
export const pollKey = (connectionId: string) => `inbox.poll:${connectionId}`;
/** The poll's job kind as a write names it (inbox.jobs.ts defines its handler). */
export const IMAP_POLL = { name: 'inbox.imap_poll', maxAttempts: 3 };

/** Schedules the connection's next poll at `runAt` (milliseconds), replacing the one waiting. */
export function schedulePoll(w: WriteContext, connectionId: string, runAt: number): void {
  w.schedule(pollKey(connectionId), IMAP_POLL, { connection_id: connectionId }, runAt);
}

/** The IMAP settings and credentials of a connection, when it has them. */
export function imapAccount(settings: Record<string, unknown>, credentials: Record<string, unknown>): { settings: ImapSettings; credentials: ImapCredentials } | undefined {
  const imap = settings.imap as Partial<ImapSettings> | undefined;
  if (!imap || typeof imap.host !== 'string' || typeof imap.port !== 'number') return undefined;
  return {
    settings: { host: imap.host, port: imap.port, secure: imap.secure === true, mailbox: typeof imap.mailbox === 'string' ? imap.mailbox : 'INBOX' },
    credentials: { username: String(credentials.username ?? ''), password: String(credentials.password ?? '') },
  };
}

export async function readCursor(db: Kysely<DB>, scope: Scope, connectionId: string) {
  return selectIn(db, 'imap_cursors', scope).selectAll().where('id', '=', connectionId).executeTakeFirst();
}

/**
 * Writes the cursor's columns given, making the cursor on its first write. Its `last_uid` only moves
 * forward within one mailbox and UIDVALIDITY: two polls of one connection at once (a poll asked for
 * while the scheduled one runs) may write theirs in either order.
 */
async function writeCursor(w: WriteContext, connectionId: string, mailbox: string, values: Record<string, unknown> & { uid_validity?: unknown; last_uid?: number }): Promise<void> {
  await w.tx.insertInto('imap_cursors').values({
    ...tenantOf(w.scope), id: connectionId, mailbox, uid_validity: null, last_uid: 0, last_polled_at: null, last_error: null, last_error_at: null,
    messages_recorded: 0, created_at: w.now, updated_at: w.now,
  }).onConflict((oc) => oc.columns(['org_id', 'mode', 'id']).doNothing()).execute();
  const set: Record<string, unknown> = { ...values, updated_at: w.now };
  if (values.last_uid !== undefined) {
    const uid = values.last_uid;
    const validity = values.uid_validity ?? null;
    set.last_uid = sql`case when mailbox = ${mailbox} and coalesce(uid_validity, '') = coalesce(cast(${validity === null ? null : String(validity)} as text), '') and last_uid > ${uid} then last_uid else cast(${uid} as bigint) end`;
  }
  await updateIn(w.tx, 'imap_cursors', w.scope).set(set as never).where('id', '=', connectionId).execute();
}

export interface PollContext {
  database: Database;
  config: Config;
  secret: string;
}

/** Polls the connection once and schedules its next poll; what happened is on its cursor. */
export async function pollConnection(ctx: PollContext, scope: Scope, connectionId: string): Promise<void> {
  if (scope.mode === 'test') return;
  const { database, config, secret } = ctx;
  const connection = await openConnection(database.db, scope, secret, connectionId);
  const account = connection?.kind === 'email' ? imapAccount(connection.settings, connection.credentials) : undefined;
  // A connection deleted, or without IMAP any more, is polled no more.
  if (!connection || !account) return;
  const mailbox = account.settings.mailbox ?? 'INBOX';
  const cursor = await readCursor(database.db, scope, connectionId);
  const known = { uidValidity: cursor?.mailbox === mailbox ? cursor.uid_validity : null, lastUid: cursor?.mailbox === mailbox ? Number(cursor.last_uid) : 0 };
  let error: string | null = null;
  let uidValidity = known.uidValidity;
  try {
    const result = await pollMailbox(account.settings, account.credentials, known, {
      policy: { allowPrivate: config.outboundAllowPrivate, allowLinkLocal: config.outboundAllowLinkLocalUnsafe },
      timeoutMs: config.imapTimeoutMs, deadlineMs: Math.max(config.imapTimeoutMs * 4, 60_000), maxMessages: 200, maxBytes: config.inboundMaxBytes,
    }, async ({ uid, raw, uidValidity: validity }) => {
      let mail: InboundMail | undefined;
      try {
        mail = await parseMail(raw, { ...MAIL_LIMITS, maxBytes: config.inboundMaxBytes });
      } catch (refused) {
        if (!(refused instanceof MailRefused)) throw refused;
      }
      // A message refused (not mail, too intricate) is passed over.
      await runWrite(database, scope, async (w) => {
        const recorded = mail ? (await receiveMail(w, secret, mail, { source: 'imap', connectionId })).status === 'recorded' : false;
        await writeCursor(w, connectionId, mailbox, { mailbox, uid_validity: validity, last_uid: uid, ...(recorded ? { messages_recorded: sql`messages_recorded + 1` } : {}) });
      });
    });
    uidValidity = result.uidValidity;
    await runWrite(database, scope, (w) => writeCursor(w, connectionId, mailbox, { mailbox, uid_validity: result.uidValidity, last_uid: result.lastUid, last_polled_at: w.now, last_error: null, last_error_at: null }));
  } catch (failure) {
    error = describeImapError(failure);
  }
  await runWrite(database, scope, async (w) => {
    if (error) await writeCursor(w, connectionId, mailbox, { mailbox, uid_validity: uidValidity, last_polled_at: w.now, last_error: error, last_error_at: w.now });
    schedulePoll(w, connectionId, (w.now + config.imapPollSeconds) * 1000);
  });
}
