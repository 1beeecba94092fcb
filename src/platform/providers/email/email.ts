// The e-mail kind: what a driver is given (a message rendered and addressed, with its Message-ID
// fixed before the call) and what it answers. Drivers: `smtp` (smtp.ts, nodemailer) and `local`
// (local.ts), which sends nothing and decides the outcome from the address, for tests.
import { Type } from 'typebox';
import type { Config } from '../../../config.ts';
import { defineProviderKind } from '../registry.ts';
import { localEmail } from './local.ts';
import { fromSmtpUrl, smtpAdapter } from './smtp.ts';

export interface EmailMessage {
  /** `<…@…>`, made by the outbox from what is sent: the same send always has the same one. */
  messageId: string;
  from: { address: string; name?: string | null };
  to: string[];
  replyTo?: string | null;
  subject: string;
  text?: string | null;
  html?: string | null;
  /** List-Unsubscribe, In-Reply-To, References and the like. */
  headers: Record<string, string>;
  /** Signs the message (nodemailer's `dkim` option): the sending domain's key. */
  dkim?: { domainName: string; keySelector: string; privateKey: string };
}

export interface SendAnswer {
  accepted: string[];
  rejected: string[];
  /** The server's last reply (`250 2.0.0 Ok: queued as …`), or the local driver's note. */
  response: string;
  /** What became of it at once, when the driver knows (the local driver does). */
  outcome?: 'delivered' | 'bounced';
}

export interface EmailDriver {
  send(message: EmailMessage): Promise<SendAnswer>;
  /** Opens a session and says what the server answered, sending nothing (a mailbox's test). */
  verify(): Promise<string>;
}

// SMTP 5xx and refused recipients are permanent; 4xx, a refused or broken connection and a timeout
// are transient.
export { PermanentSendError } from '../refusals.ts';

export const EmailSettings = Type.Object({
  smtp: Type.Object({
    host: Type.String({ minLength: 1, maxLength: 253, description: 'The SMTP server\'s host name or address', examples: ['smtp.example.com'] }),
    port: Type.Integer({ minimum: 1, maximum: 65_535, description: 'Its port: 587 (STARTTLS) or 465 (TLS) usually', examples: [587] }),
    secure: Type.Optional(Type.Boolean({ description: 'TLS from the first byte (port 465); otherwise STARTTLS is used when the server offers it', examples: [false] })),
  }, { additionalProperties: false, description: 'Where outgoing mail goes' }),
  imap: Type.Optional(Type.Object({
    host: Type.String({ minLength: 1, maxLength: 253, description: 'The IMAP server\'s host name or address', examples: ['imap.example.com'] }),
    port: Type.Integer({ minimum: 1, maximum: 65_535, description: 'Its port: 993 (TLS) or 143', examples: [993] }),
    secure: Type.Optional(Type.Boolean({ description: 'TLS from the first byte (port 993)', examples: [true] })),
    mailbox: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The folder replies arrive in; `INBOX` when omitted', examples: ['INBOX'] })),
  }, { additionalProperties: false, description: 'Where replies are read from (polled); omit to receive no mail through this connection' })),
}, { additionalProperties: false });

export const EmailCredentials = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 320, examples: ['sales@example.com'] }),
  password: Type.String({ minLength: 1, maxLength: 2000, examples: ['app-password'] }),
}, { additionalProperties: false });

export const emailKind = defineProviderKind<EmailDriver>({
  kind: 'email',
  noun: 'e-mail',
  setting: 'EMAIL_SMTP_URL',
  // Read when used: smtp.ts imports this module, so whichever of the two loads first sees the
  // other's bindings unset while it runs.
  adapters: { get smtp() { return smtpAdapter; } },
  local: localEmail,
  fromConfig: (config: Config) => (config.emailSmtpUrl ? fromSmtpUrl(config.emailSmtpUrl) : undefined),
});
