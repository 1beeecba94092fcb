// Raw RFC 5322 messages from outside (an IMAP mailbox, a provider's inbound webhook) turned into what
// the inbox records. Mail is hostile input: a message is measured before it is parsed (its size, the
// size of its header, how many parts it declares and how deeply multiparts nest), parsed by
// mailparser under a time limit, and its HTML sanitized (sanitize.ts). A message refused so is a
// `MailRefused` naming why; nothing here throws anything else for any input.
import { createHash } from 'node:crypto';
import { simpleParser, type AddressObject, type Attachment, type HeaderValue, type ParsedMail } from 'mailparser';
import { autoReplyOf } from './auto-reply.ts';
import { deliveryReportOf, type DeliveryReport } from './delivery-report.ts';
import { sanitizeHtml } from './sanitize.ts';

export interface MailLimits {
  /** Largest raw message, bytes. */
  maxBytes: number;
  /** Largest header section of the message, bytes. */
  maxHeaderBytes: number;
  /** Most parts a message may declare (`Content-Type` headers at any depth). */
  maxParts: number;
  /** Most multiparts a message may declare, which bounds how deeply they nest. */
  maxMultiparts: number;
  /** Longest the parser may take. */
  timeoutMs: number;
  /** Longest text and sanitized HTML kept of a message, characters. */
  maxBodyChars: number;
}

export const MAIL_LIMITS: MailLimits = {
  maxBytes: 25 * 1024 * 1024,
  maxHeaderBytes: 256 * 1024,
  maxParts: 500,
  maxMultiparts: 32,
  timeoutMs: 15_000,
  maxBodyChars: 1_000_000,
};

export class MailRefused extends Error {
  /** `too_large`: past a size limit (413); `malformed`: not a message, or one past a structural limit (422). */
  readonly reason: 'too_large' | 'malformed';
  constructor(reason: MailRefused['reason'], message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface Address {
  address: string;
  name: string | null;
}

export interface InboundMail {
  /** The Message-ID with its angle brackets; for a message without one, a digest of its bytes (so it is still recorded once). */
  messageId: string;
  inReplyTo: string | null;
  references: string[];
  from: Address | null;
  to: Address[];
  cc: Address[];
  replyTo: Address[];
  subject: string | null;
  text: string | null;
  html: string | null;
  /** Unix seconds: the Date header, when it has one that parses. */
  date: number | null;
  /** Why the message is automatic (RFC 3834 and the common conventions), null for a person's. */
  autoReply: string | null;
  /** A delivery status notification (RFC 3464): what failed for whom. */
  report: DeliveryReport | null;
  size: number;
}

/** Where the header section ends (the first empty line), or -1 when not within `limit` bytes. */
function headerEnd(raw: Buffer, limit: number): number {
  const window = raw.subarray(0, Math.min(raw.length, limit + 4));
  const crlf = window.indexOf('\r\n\r\n');
  const lf = window.indexOf('\n\n');
  const ends = [crlf, lf].filter((i) => i >= 0);
  return ends.length === 0 ? -1 : Math.min(...ends);
}

/** Refuses what is too large or too intricate to parse, before the parser sees it (linear in the size). */
export function measure(raw: Buffer, limits: MailLimits = MAIL_LIMITS): void {
  if (raw.length > limits.maxBytes) throw new MailRefused('too_large', `The message is larger than ${limits.maxBytes} bytes`);
  if (raw.length === 0) throw new MailRefused('malformed', 'The body is empty: a raw RFC 5322 message was expected');
  const end = headerEnd(raw, limits.maxHeaderBytes);
  if (end < 0 && raw.length > limits.maxHeaderBytes) throw new MailRefused('too_large', `The message's header section is larger than ${limits.maxHeaderBytes} bytes`);
  // Part headers only ever start a line: count them without decoding the body (latin1 maps bytes 1:1).
  const text = raw.toString('latin1');
  let parts = 0;
  let multiparts = 0;
  for (const match of text.matchAll(/^content-type:[ \t]*(multipart\/)?/gim)) {
    parts += 1;
    if (match[1]) multiparts += 1;
    if (parts > limits.maxParts) throw new MailRefused('malformed', `The message has more than ${limits.maxParts} parts`);
    if (multiparts > limits.maxMultiparts) throw new MailRefused('malformed', `The message nests more than ${limits.maxMultiparts} multiparts`);
  }
}

const addressesOf = (value: AddressObject | AddressObject[] | undefined): Address[] =>
  [value ?? []].flat().flatMap((o) => o.value).flatMap(function flat(a): Address[] {
    if (a.group) return a.group.flatMap(flat);
    return a.address ? [{ address: a.address.trim().toLowerCase(), name: a.name?.trim() || null }] : [];
  });

const idsOf = (value: string | string[] | undefined): string[] =>
  [value ?? []].flat().flatMap((v) => v.match(/<[^<>\s]+>/g) ?? []).slice(0, 100);

const clip = (value: string | undefined | false, max: number): string | null =>
  typeof value === 'string' && value.length > 0 ? value.slice(0, max) : null;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new MailRefused('malformed', `The message could not be parsed within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

const headerText = (value: HeaderValue | undefined): string => {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && 'value' in value && typeof value.value === 'string') return value.value;
  return String(value);
};

/** Parses a raw message within `limits`; `MailRefused` for what cannot be a message or is too much. */
export async function parseMail(raw: Buffer, limits: MailLimits = MAIL_LIMITS): Promise<InboundMail> {
  measure(raw, limits);
  let parsed: ParsedMail;
  try {
    parsed = await withTimeout(simpleParser(raw, {
      keepDeliveryStatus: true, skipImageLinks: true, skipTextLinks: true, skipTextToHtml: true, maxHtmlLengthToParse: 2 * 1024 * 1024,
    }), limits.timeoutMs);
  } catch (error) {
    if (error instanceof MailRefused) throw error;
    throw new MailRefused('malformed', `The message could not be parsed: ${(error as Error).message.slice(0, 200)}`);
  }
  const from = addressesOf(parsed.from)[0] ?? null;
  // A message has a sender: text without one (or without any header) is not mail.
  if (!from) throw new MailRefused('malformed', 'The message has no From address: a raw RFC 5322 message was expected');
  const headers = new Map([...parsed.headers].map(([name, value]) => [name.toLowerCase(), headerText(value)]));
  const attachments: Attachment[] = parsed.attachments ?? [];
  const date = parsed.date && !Number.isNaN(parsed.date.getTime()) ? Math.floor(parsed.date.getTime() / 1000) : null;
  const messageId = idsOf(parsed.messageId)[0] ?? `<${createHash('sha256').update(raw).digest('hex')}@message-without-id.invalid>`;
  return {
    messageId,
    inReplyTo: idsOf(parsed.inReplyTo)[0] ?? null,
    references: idsOf(parsed.references),
    from,
    to: addressesOf(parsed.to).slice(0, 100),
    cc: addressesOf(parsed.cc).slice(0, 100),
    replyTo: addressesOf(parsed.replyTo).slice(0, 10),
    subject: clip(parsed.subject, 998),
    text: clip(parsed.text, limits.maxBodyChars),
    html: parsed.html ? clip(sanitizeHtml(parsed.html.slice(0, 2 * limits.maxBodyChars)) ?? undefined, limits.maxBodyChars) : null,
    date: date !== null && date >= 0 && date <= 1e11 ? date : null,
    autoReply: autoReplyOf(headers, parsed.subject ?? ''),
    report: deliveryReportOf(parsed.headers.get('content-type'), attachments),
    size: raw.length,
  };
}
