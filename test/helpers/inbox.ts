// Inbound mail for the inbox tests: raw RFC 5322 messages, e-mail connections, their inbound URLs,
// and posts signed as a provider signs them (Standard Webhooks over the raw bytes).
import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Client } from './app.ts';
import { ok, type Json } from './records.ts';

export interface RawMail {
  from?: string;
  to?: string;
  subject?: string;
  messageId?: string | null;
  inReplyTo?: string;
  references?: string[];
  headers?: Record<string, string>;
  text?: string;
  html?: string;
}

export const uniqueId = (host = 'mail.example.org') => `<${randomBytes(8).toString('hex')}@${host}>`;

/** A message as a mail server hands it over (CRLF lines). */
export function rawMail(m: RawMail = {}): string {
  const lines = [
    `From: ${m.from ?? 'Bob Example <bob@example.org>'}`,
    `To: ${m.to ?? 'sales@acme.example'}`,
    `Subject: ${m.subject ?? 'Pilot next week'}`,
    'Date: Tue, 01 Dec 2026 10:00:00 +0000',
    ...(m.messageId === null ? [] : [`Message-ID: ${m.messageId ?? uniqueId()}`]),
    ...(m.inReplyTo ? [`In-Reply-To: ${m.inReplyTo}`] : []),
    ...(m.references ? [`References: ${m.references.join(' ')}`] : []),
    ...Object.entries(m.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    'MIME-Version: 1.0',
  ];
  if (m.html) {
    return [...lines, 'Content-Type: multipart/alternative; boundary="alt"', '', '--alt', 'Content-Type: text/plain; charset=utf-8', '', m.text ?? 'Hello',
      '--alt', 'Content-Type: text/html; charset=utf-8', '', m.html, '--alt--', ''].join('\r\n');
  }
  return [...lines, 'Content-Type: text/plain; charset=utf-8', '', m.text ?? 'Hello, Tuesday works for us.', ''].join('\r\n');
}

/**
 * An e-mail connection of the client's tenant, through the API: an SMTP server (to nowhere) and the
 * IMAP mailbox given; without one, the local driver (an inbound URL needs no server).
 */
export async function emailConnection(c: Client, imap?: Record<string, unknown>, credentials = { username: 'inbox', password: 'secret' }): Promise<string> {
  const body = imap
    ? { kind: 'email', provider: 'smtp', name: 'Sales mailbox', settings: { smtp: { host: '127.0.0.1', port: 2525 }, imap }, credentials }
    : { kind: 'email', provider: 'local', name: 'Sales mailbox' };
  return (await ok(c.post('/v1/connections', body), 201)).id;
}

export async function inboundUrl(c: Client, connectionId: string): Promise<{ url: string; path: string; secret: string }> {
  const made = await ok(c.post(`/v1/connections/${connectionId}/inbound-url`), 201);
  return { url: made.url, path: new URL(made.url).pathname, secret: made.secret };
}

/** The Standard Webhooks headers of `body` signed with `secret` at `at` (unix seconds). */
export function signed(secret: string, body: Buffer, at = Math.floor(Date.now() / 1000)): Record<string, string> {
  const id = `msg_${randomBytes(8).toString('hex')}`;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(Buffer.concat([Buffer.from(`${id}.${at}.`), body])).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(at), 'webhook-signature': `v1,${signature}` };
}

/** Posts a raw message to an inbound URL path, signed unless `headers` says otherwise. */
export function post(app: FastifyInstance, link: { path: string; secret: string }, raw: string | Buffer, headers?: Record<string, string>) {
  const body = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
  return app.inject({
    method: 'POST', url: link.path, payload: body,
    headers: { 'content-type': 'message/rfc822', ...(headers ?? signed(link.secret, body)) },
  });
}

/** Posts and answers what was recorded (200). */
export const receive = async (app: FastifyInstance, link: { path: string; secret: string }, raw: string): Promise<Json> => ok(post(app, link, raw));
