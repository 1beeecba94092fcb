// The SMTP adapter (nodemailer). The server's name is resolved here and every address it has is put
// to the outbound guard (outbound-addresses.ts) before connecting, so a connection cannot reach the
// service's own network unless the operator allows it, nor be pointed there later by DNS (the
// socket goes to the address checked, TLS still verifies the name). Transports are pooled per
// connection (a few sessions each, reused across sends) and closed when unused for a while.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { createTransport } from 'nodemailer';
import type { OpenConnection } from '../connections.ts';
import type { ProviderAdapter } from '../registry.ts';
import { addressRefusal, guardedHost, nameRefusal, type OutboundPolicy } from '../../outbound-addresses.ts';
import { EmailCredentials, EmailSettings, PermanentSendError, type EmailDriver, type EmailMessage, type SendAnswer } from './email.ts';

interface SmtpSettings { host: string; port: number; secure?: boolean }
type Transport = ReturnType<typeof createTransport>;

const IDLE_MS = 60_000;
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000, dnsTimeout: 5_000 };
const pools = new Map<string, { transport: Transport; timer: NodeJS.Timeout }>();
let policy: OutboundPolicy = { allowPrivate: false, allowLinkLocal: false };

/** The outbound policy SMTP connections follow (the app's builder passes the operator's). */
export function useSmtpPolicy(given: OutboundPolicy): void {
  policy = given;
}

/** The address to connect to for `host`, refused with the guard's reason. */
async function guardedAddress(host: string): Promise<string> {
  const name = guardedHost(host);
  const refusedName = nameRefusal(name, policy);
  if (refusedName) throw new Error(`The SMTP server ${host} is a ${refusedName} address, which this service does not connect to`);
  const addresses = isIP(name) ? [{ address: name }] : await lookup(name, { all: true });
  if (addresses.length === 0) throw new Error(`The SMTP server ${host} has no address`);
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, policy);
    if (refusal) throw new Error(`The SMTP server ${host} resolves to a ${refusal} address, which this service does not connect to`);
  }
  return addresses[0].address;
}

async function transportFor(connection: OpenConnection): Promise<Transport> {
  const smtp = connection.settings.smtp as SmtpSettings;
  const { username, password } = connection.credentials as { username?: string; password?: string };
  const address = await guardedAddress(smtp.host);
  const key = JSON.stringify([connection.id, address, smtp, username, password]);
  let pooled = pools.get(key);
  if (!pooled) {
    const transport = createTransport({
      pool: true, maxConnections: 4, maxMessages: 500,
      host: address, port: smtp.port, secure: smtp.secure ?? smtp.port === 465,
      ...(username ? { auth: { user: username, pass: password ?? '' } } : {}),
      tls: { servername: isIP(smtp.host) ? undefined : smtp.host },
      ...TIMEOUTS,
    });
    // A pooled session that breaks between sends must not end the process.
    transport.on('error', () => pools.delete(key));
    pools.set(key, pooled = { transport, timer: setTimeout(() => undefined, 0) });
  }
  clearTimeout(pooled.timer);
  const entry = pooled;
  entry.timer = setTimeout(() => {
    pools.delete(key);
    entry.transport.close();
  }, IDLE_MS).unref();
  return entry.transport;
}

/** The server's reply of a failed send, and whether it refuses for good (5xx). */
function classify(error: unknown): Error {
  const e = error as { responseCode?: number; response?: string; message?: string };
  const response = e.response ?? e.message ?? String(error);
  if (typeof e.responseCode === 'number' && e.responseCode >= 500) return new PermanentSendError(`The SMTP server refused the message: ${response}`, response);
  return new Error(`The SMTP server could not take the message now: ${response}`);
}

export function smtpDriver(connection: OpenConnection): EmailDriver {
  return {
    async send(message: EmailMessage): Promise<SendAnswer> {
      const transport = await transportFor(connection);
      try {
        const info = await transport.sendMail({
          messageId: message.messageId,
          from: message.from.name ? { name: message.from.name, address: message.from.address } : message.from.address,
          to: message.to, replyTo: message.replyTo ?? undefined,
          subject: message.subject, text: message.text ?? undefined, html: message.html ?? undefined,
          headers: message.headers, dkim: message.dkim,
        });
        return { accepted: (info.accepted ?? []).map(String), rejected: (info.rejected ?? []).map(String), response: String(info.response ?? '') };
      } catch (error) {
        throw classify(error);
      }
    },
    async verify(): Promise<string> {
      const transport = await transportFor(connection);
      try {
        await transport.verify();
        return '250 The server accepted the session and the credentials';
      } catch (error) {
        throw classify(error);
      }
    },
  };
}

export const smtpAdapter: ProviderAdapter<EmailDriver> = { settings: EmailSettings, credentials: EmailCredentials, open: smtpDriver };

/** The operator's default connection from `EMAIL_SMTP_URL` (`smtp://user:pass@host:587`). */
export function fromSmtpUrl(raw: string): OpenConnection {
  const url = new URL(raw);
  const secure = url.protocol === 'smtps:';
  return {
    id: 'EMAIL_SMTP_URL', kind: 'email', provider: 'smtp',
    settings: { smtp: { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port) || (secure ? 465 : 587), secure } },
    credentials: url.username ? { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) } : {},
  };
}

/** Closes every pooled session (at shutdown). */
export function closeSmtpPools(): void {
  for (const { transport, timer } of pools.values()) {
    clearTimeout(timer);
    transport.close();
  }
  pools.clear();
}
