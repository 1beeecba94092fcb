// A real SMTP server in the test's process (smtp-server, on a free port of 127.0.0.1, without TLS,
// with AUTH PLAIN and LOGIN), which keeps every message it accepts, raw, by Message-ID; and a DKIM
// verifier (RFC 6376: rsa-sha256, simple or relaxed canonicalization) for what it received.
import { createHash, verify } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface Received { messageId: string; raw: string; from: string; to: string[] }

export interface SmtpPeer {
  port: number;
  received: Received[];
  /** How many times each Message-ID was accepted. */
  count(messageId: string): number;
  /** Recipients refused at RCPT TO with this reply for good (550). */
  refuse: Set<string>;
  /** Recipients whose next `n` messages are refused for a while (451) at DATA. */
  deferNext: Map<string, number>;
  close(): Promise<void>;
}

const smtpError = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });

export async function startSmtp(options: { user?: string; password?: string; port?: number } = {}): Promise<SmtpPeer> {
  const user = options.user ?? 'ada';
  const password = options.password ?? 'right-password';
  const received: Received[] = [];
  const refuse = new Set<string>();
  const deferNext = new Map<string, number>();
  const settings: SMTPServerOptions = {
    secure: false, disabledCommands: ['STARTTLS'], allowInsecureAuth: true, authMethods: ['PLAIN', 'LOGIN'], logger: false, size: 10_000_000,
    onAuth(auth, _session, done) {
      if (auth.username === user && auth.password === password) done(null, { user });
      else done(smtpError(535, '5.7.8 Authentication credentials invalid'));
    },
    onRcptTo(address, _session, done) {
      if (refuse.has(address.address.toLowerCase())) done(smtpError(550, '5.1.1 No such user here'));
      else done();
    },
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        const deferred = to.find((address) => (deferNext.get(address) ?? 0) > 0);
        if (deferred) {
          deferNext.set(deferred, deferNext.get(deferred)! - 1);
          return done(smtpError(451, '4.3.0 Try again later'));
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const messageId = /^message-id:\s*(<[^>]+>)/im.exec(raw)?.[1] ?? '';
        received.push({ messageId, raw, from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to });
        done(null, `2.0.0 Ok: queued as ${received.length}`);
      });
    },
  };
  const server = new SMTPServer(settings);
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port, received, refuse, deferNext,
    count: (messageId) => received.filter((r) => r.messageId === messageId).length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The header fields of a raw message, unfolded, in order. */
function headerFields(head: string): Array<{ name: string; raw: string }> {
  const fields: Array<{ name: string; raw: string }> = [];
  for (const line of head.split('\r\n')) {
    if (/^[ \t]/.test(line) && fields.length > 0) fields[fields.length - 1].raw += `\r\n${line}`;
    else fields.push({ name: line.slice(0, line.indexOf(':')).trim().toLowerCase(), raw: line });
  }
  return fields;
}

const relaxedHeader = (raw: string) => {
  const at = raw.indexOf(':');
  const value = raw.slice(at + 1).replace(/\r\n(?=[ \t])/g, '').replace(/[ \t]+/g, ' ').trim();
  return `${raw.slice(0, at).trim().toLowerCase()}:${value}`;
};

function canonicalBody(body: string, relaxed: boolean): string {
  let lines = body.split('\r\n');
  if (relaxed) lines = lines.map((l) => l.replace(/[ \t]+/g, ' ').replace(/ $/, ''));
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) return relaxed ? '' : '\r\n';
  return `${lines.join('\r\n')}\r\n`;
}

/** Verifies the message's DKIM signature with `publicKeyPem`; the signature's d= and s= when it holds. */
export function verifyDkim(raw: string, publicKeyPem: string): { valid: boolean; domain: string; selector: string; reason?: string } {
  const split = raw.indexOf('\r\n\r\n');
  const fields = headerFields(raw.slice(0, split));
  const body = raw.slice(split + 4);
  const signature = fields.find((f) => f.name === 'dkim-signature');
  if (!signature) return { valid: false, domain: '', selector: '', reason: 'no DKIM-Signature' };
  const tags = Object.fromEntries(signature.raw.slice(signature.raw.indexOf(':') + 1).replace(/\s+/g, '').split(';').filter(Boolean)
    .map((t) => [t.slice(0, t.indexOf('=')), t.slice(t.indexOf('=') + 1)]));
  const [headerCanon, bodyCanon = 'simple'] = (tags.c ?? 'simple/simple').split('/');
  const result = { domain: tags.d, selector: tags.s };
  const bodyHash = createHash('sha256').update(canonicalBody(body, bodyCanon === 'relaxed')).digest('base64');
  if (bodyHash !== tags.bh) return { ...result, valid: false, reason: 'body hash differs' };
  const used = new Set<number>();
  const signed: string[] = [];
  for (const name of tags.h.toLowerCase().split(':')) {
    // Each name takes the last instance not yet used (RFC 6376 5.4.2); a missing one signs nothing.
    const index = fields.map((f, i) => ({ f, i })).reverse().find(({ f, i }) => f.name === name && !used.has(i))?.i;
    if (index === undefined) continue;
    used.add(index);
    signed.push(headerCanon === 'relaxed' ? `${relaxedHeader(fields[index].raw)}\r\n` : `${fields[index].raw}\r\n`);
  }
  const own = signature.raw.replace(/(\bb=)[^;]*/, '$1');
  const data = signed.join('') + (headerCanon === 'relaxed' ? relaxedHeader(own) : own);
  const valid = verify('sha256', Buffer.from(data), publicKeyPem, Buffer.from(tags.b, 'base64'));
  return { ...result, valid, ...(valid ? {} : { reason: 'signature does not verify' }) };
}
