// Verifying a webhook delivery (Standard Webhooks): the HMAC-SHA256 of `id.timestamp.payload` under
// the endpoint's `whsec_` secret must match one of the `webhook-signature` entries, and the
// timestamp must be within five minutes of now (a replayed old delivery is refused).
import type { webhooks } from './openapi.d.ts';

const TOLERANCE_S = 5 * 60;

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** The payload of any webhook the service sends (one member per event type). */
export type WebhookEvent = { [K in keyof webhooks]: NonNullable<webhooks[K]['post']>['requestBody'] extends { content: { 'application/json': infer B } } | undefined ? B : never }[keyof webhooks];

type Headers = Record<string, string | string[] | undefined> | globalThis.Headers;

/**
 * Checks the delivery and answers its parsed event; throws WebhookVerificationError when it is not
 * genuine or too old. `payload` is the raw body exactly as received (not re-serialized JSON).
 */
export async function verifyWebhook(payload: string | Uint8Array, headers: Headers, secret: string, now: Date = new Date()): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header');
  const seconds = Number(timestamp);
  if (!Number.isInteger(seconds)) throw new WebhookVerificationError('Invalid webhook-timestamp');
  if (Math.abs(now.getTime() / 1000 - seconds) > TOLERANCE_S) throw new WebhookVerificationError('Timestamp outside the tolerance of 5 minutes');

  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  const key = await crypto.subtle.importKey('raw', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const signed = new TextEncoder().encode(`${id}.${seconds}.${body}`);
  for (const entry of signatures.split(' ')) {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || !signature) continue;
    // subtle.verify compares in constant time.
    if (await crypto.subtle.verify('HMAC', key, Buffer.from(signature, 'base64'), signed)) return JSON.parse(body) as WebhookEvent;
  }
  throw new WebhookVerificationError('No matching signature');
}

function header(headers: Headers, name: string): string | undefined {
  if (headers instanceof globalThis.Headers) return headers.get(name) ?? undefined;
  const value = headers[name] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}
