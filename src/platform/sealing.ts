// Values the service must read back but no one else may: provider credentials, a sending domain's
// DKIM private key. Sealed with AES-256-GCM under a key derived from the service's secret (HKDF-
// SHA-256), so a copy of the database without SECRET_KEY opens none of them, and a value altered in
// the store fails to open rather than being used. Stored as `v1.<iv>.<tag>.<ciphertext>`, base64url.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const keys = new Map<string, Buffer>();

function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (!key) keys.set(secret, key = Buffer.from(hkdfSync('sha256', secret, 'revenue-data-service', 'sealed-values:v1', 32)));
  return key;
}

/** `plain`, sealed under `secret`. */
export function seal(secret: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

/** The text `sealed` holds; throws when it was sealed under another secret or altered. */
export function unseal(secret: string, sealed: string): string {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== VERSION || body === undefined) throw new Error('Not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
