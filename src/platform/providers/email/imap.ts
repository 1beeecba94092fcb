// The IMAP adapter (imapflow): reads the messages of a mailbox that came since the last poll. Where
// a mailbox was read up to is its cursor: the UIDVALIDITY of the mailbox and the last UID handed
// over. A mailbox whose UIDVALIDITY changed (recreated, restored) has new UIDs for everything: it is
// read again from its start, and the inbox, which records each Message-ID once, drops what it has.
// Every step is bounded: the connection, the greeting and each command have their timeouts, and the
// whole poll a deadline after which the socket is closed; the server's answers are capped in size.
// Like SMTP, the server's address is put to the outbound guard before connecting.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ImapFlow } from 'imapflow';
import { addressRefusal, guardedHost, nameRefusal, type OutboundPolicy } from '../../outbound-addresses.ts';

export interface ImapSettings {
  host: string;
  port: number;
  secure?: boolean;
  /** The mailbox read; `INBOX` unless given. */
  mailbox?: string;
}

export interface ImapCredentials {
  username: string;
  password: string;
}

export interface ImapCursor {
  uidValidity: string | null;
  lastUid: number;
}

export interface PollOptions {
  policy: OutboundPolicy;
  /** Longest the connection, the greeting and any one command may take. */
  timeoutMs: number;
  /** Longest the whole poll may take; the socket is closed then. */
  deadlineMs: number;
  /** Most messages handed over by one poll (the next poll goes on from there). */
  maxMessages: number;
  /** Messages larger than this are passed over (the cursor moves past them). */
  maxBytes: number;
}

export interface PollResult {
  uidValidity: string;
  lastUid: number;
  /** The mailbox's UIDVALIDITY changed since the cursor was written: it was read from its start. */
  reset: boolean;
  handed: number;
  skipped: number;
}

/** Thrown for what a retry cannot mend (the guard refuses the host); the message is safe to show. */
export class ImapError extends Error {}

async function guardedAddress(host: string, policy: OutboundPolicy): Promise<string> {
  const name = guardedHost(host);
  const refusedName = nameRefusal(name, policy);
  if (refusedName) throw new ImapError(`The IMAP server ${host} is a ${refusedName} address, which this service does not connect to`);
  const addresses = isIP(name) ? [{ address: name }] : await lookup(name, { all: true });
  if (addresses.length === 0) throw new ImapError(`The IMAP server ${host} has no address`);
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, policy);
    if (refusal) throw new ImapError(`The IMAP server ${host} resolves to a ${refusal} address, which this service does not connect to`);
  }
  return addresses[0].address;
}

/** What failed, in words safe to record (never the credentials). */
export function describeImapError(error: unknown): string {
  const e = error as { message?: string; code?: string; responseText?: string; authenticationFailed?: boolean };
  if (e?.authenticationFailed) return 'The IMAP server refused the username or password';
  const text = [e?.code, e?.responseText ?? e?.message].filter(Boolean).join(': ');
  return (text || 'The IMAP poll failed').slice(0, 500);
}

/**
 * Reads the messages after `cursor` in the mailbox, oldest first, handing each to `onMessage` (which
 * records it) before the next is fetched; answers where the mailbox was read up to.
 */
export async function pollMailbox(settings: ImapSettings, credentials: ImapCredentials, cursor: ImapCursor, options: PollOptions,
  onMessage: (message: { uid: number; raw: Buffer; uidValidity: string }) => Promise<void>): Promise<PollResult> {
  const address = await guardedAddress(settings.host, options.policy);
  const client = new ImapFlow({
    host: address, port: settings.port, secure: settings.secure ?? false,
    ...(isIP(settings.host) ? {} : { servername: settings.host }),
    auth: { user: credentials.username, pass: credentials.password },
    logger: false, disableAutoIdle: true, disableCompression: true,
    connectionTimeout: options.timeoutMs, greetingTimeout: options.timeoutMs, socketTimeout: options.timeoutMs,
    maxLiteralSize: options.maxBytes + 64 * 1024, maxResponseSize: options.maxBytes + 128 * 1024, maxLineLength: 1024 * 1024,
  });
  // A failure after the poll settled (a late socket error) must not become an unhandled one.
  client.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      client.close();
      reject(new Error(`The IMAP poll took longer than ${options.deadlineMs} ms`));
    }, options.deadlineMs);
  });
  const work = (async (): Promise<PollResult> => {
    await client.connect();
    const lock = await client.getMailboxLock(settings.mailbox || 'INBOX', { readOnly: true });
    try {
      const box = client.mailbox;
      if (!box) throw new Error('The IMAP server opened no mailbox');
      const uidValidity = String(box.uidValidity);
      const reset = cursor.uidValidity !== null && cursor.uidValidity !== uidValidity;
      const after = reset || cursor.uidValidity === null ? 0 : cursor.lastUid;
      let lastUid = after;
      let handed = 0;
      let skipped = 0;
      if (box.exists === 0 || (box.uidNext !== undefined && Number(box.uidNext) <= after + 1)) return { uidValidity, lastUid, reset, handed, skipped };
      // Sizes first: `n:*` also answers the last message when none is past n, hence the filter.
      const listed: Array<{ uid: number; size: number }> = [];
      for await (const m of client.fetch(`${after + 1}:*`, { uid: true, size: true }, { uid: true })) {
        if (m.uid > after) listed.push({ uid: m.uid, size: m.size ?? 0 });
      }
      listed.sort((a, b) => a.uid - b.uid);
      for (const item of listed.slice(0, options.maxMessages)) {
        if (item.size > options.maxBytes) {
          skipped += 1;
        } else {
          const message = await client.fetchOne(String(item.uid), { uid: true, source: true }, { uid: true });
          if (message && message.source) {
            await onMessage({ uid: item.uid, raw: message.source, uidValidity });
            handed += 1;
          }
        }
        lastUid = item.uid;
      }
      return { uidValidity, lastUid, reset, handed, skipped };
    } finally {
      lock.release();
    }
  })();
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined);
    await Promise.race([client.logout().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1000))]);
    client.close();
  }
}
