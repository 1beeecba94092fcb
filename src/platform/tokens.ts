// API tokens: `svc_live_` or `svc_test_` and a 256-bit random secret. Only the SHA-256 of the
// secret is stored; the prefix is a label, stripped before lookup, and never decides the mode.
import { createHash, randomBytes } from 'node:crypto';
import type { Mode } from '../db/schema.ts';

const PREFIX = /^svc_(live|test)_/;

export function generateToken(mode: Mode): { token: string; hash: string } {
  const secret = randomBytes(32).toString('base64url');
  return { token: `svc_${mode}_${secret}`, hash: hashSecret(secret) };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** The stored hash for a presented token, whatever prefix (or none) it carries. */
export function hashToken(token: string): string {
  return hashSecret(token.replace(PREFIX, ''));
}

/** A JWT is three base64url parts whose first decodes to a JSON header naming an algorithm. */
export function looksLikeJwt(token: string): boolean {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[0].startsWith('eyJ')) return false;
  try {
    const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as unknown;
    return typeof header === 'object' && header !== null && 'alg' in header;
  } catch {
    return false;
  }
}
