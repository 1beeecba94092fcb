// Signatures of provider callbacks: an HMAC of what the provider signs, with the secret it shares
// with us, compared in constant time; with a tolerance on the time the provider says it signed at,
// so a captured request cannot be replayed later. A provider is a `SignatureScheme` (what it signs,
// where it puts the signature, how its secrets are written): Twilio and Standard Webhooks below.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a scheme reads of a request: everything a provider may sign. */
export interface SignedRequest {
  /** The full URL the provider called: scheme, host, path and query, as it called it. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body's bytes as received. */
  rawBody: Buffer;
  /** The parameters of an `application/x-www-form-urlencoded` body (repeated names hold arrays). */
  form?: Record<string, string | string[]>;
}

export interface SignatureScheme {
  algorithm: 'sha1' | 'sha256' | 'sha512';
  encoding: 'base64' | 'hex';
  /** The signatures the request carries: several while the provider rotates secrets; none is a refusal. */
  presented(request: SignedRequest): string[];
  /** The bytes the provider signed. */
  payload(request: SignedRequest): string | Buffer;
  /** The HMAC key of a secret as it is written (a `whsec_` secret is base64 after its prefix); the text itself by default. */
  key?(secret: string): string | Buffer;
  /** When the provider says it signed, unix seconds (then also signed); given, `toleranceSeconds` bounds it. */
  timestamp?(request: SignedRequest): number | undefined;
  toleranceSeconds?: number;
}

export type Verdict = { ok: true } | { ok: false; reason: string };

/** Equal texts, compared in time that depends on their length only (which is no secret). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function hmac(algorithm: SignatureScheme['algorithm'], key: string | Buffer, payload: string | Buffer, encoding: SignatureScheme['encoding']): string {
  return createHmac(algorithm, key).update(payload).digest(encoding);
}

/**
 * Whether the request carries a signature made with one of `secrets` (the current one and, while a
 * rotation overlaps, the previous), at a time within the scheme's tolerance of `now` (unix seconds).
 */
export function verifySignature(scheme: SignatureScheme, secrets: readonly string[], request: SignedRequest, now: number): Verdict {
  const presented = scheme.presented(request);
  if (presented.length === 0) return { ok: false, reason: 'The request carries no signature' };
  if (scheme.timestamp) {
    const at = scheme.timestamp(request);
    if (at === undefined || !Number.isFinite(at)) return { ok: false, reason: 'The request carries no signing time' };
    if (Math.abs(now - at) > (scheme.toleranceSeconds ?? 300)) return { ok: false, reason: 'The signature is too old or too new' };
  }
  const payload = scheme.payload(request);
  for (const secret of secrets) {
    const expected = hmac(scheme.algorithm, scheme.key ? scheme.key(secret) : secret, payload, scheme.encoding);
    // Every presented signature is compared, so the time taken does not say which one matched.
    let matched = false;
    for (const signature of presented) matched = safeEqual(signature, expected) || matched;
    if (matched) return { ok: true };
  }
  return { ok: false, reason: 'The signature does not match' };
}

const header = (request: SignedRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Twilio (`X-Twilio-Signature`): HMAC-SHA1, base64, of the full URL followed by every POST parameter,
 * sorted by name, as name and value with no separator; the key is the account's Auth Token. Twilio
 * signs no time: its callbacks rely on the per-address and per-token limits against replays.
 */
export const twilioSignature: SignatureScheme = {
  algorithm: 'sha1',
  encoding: 'base64',
  presented: (request) => {
    const signature = header(request, 'x-twilio-signature');
    return signature ? [signature] : [];
  },
  payload: (request) => {
    const form = request.form ?? {};
    let signed = request.url;
    for (const name of Object.keys(form).sort()) {
      for (const value of [form[name]].flat().sort()) signed += name + value;
    }
    return signed;
  },
};

/**
 * Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64> …`):
 * HMAC-SHA256 of `<id>.<timestamp>.<body>`, the key being the base64 after `whsec_`; five minutes
 * of tolerance. The same scheme signs the service's own deliveries (webhooks.jobs.ts).
 */
export const standardWebhooksSignature: SignatureScheme = {
  algorithm: 'sha256',
  encoding: 'base64',
  presented: (request) => (header(request, 'webhook-signature') ?? '').split(' ').filter((s) => s.startsWith('v1,')).map((s) => s.slice(3)),
  payload: (request) => Buffer.concat([Buffer.from(`${header(request, 'webhook-id') ?? ''}.${header(request, 'webhook-timestamp') ?? ''}.`), request.rawBody]),
  key: (secret) => Buffer.from(secret.replace(/^whsec_/, ''), 'base64'),
  timestamp: (request) => {
    const at = header(request, 'webhook-timestamp');
    return at && /^\d{1,12}$/.test(at) ? Number(at) : undefined;
  },
  toleranceSeconds: 300,
};
