// Everything that must never be written to a log or shown in a response other than the one that
// creates it: API tokens (with and without their prefix), their stored hashes, webhook signing
// secrets, and marked request body values. Tests remember them as they make them and search the captured logs at the end.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { hashToken } from '../../../src/platform/tokens.ts';

const tokens = new Set<string>();
/** The lengths of the remembered tokens (with and without their prefix). */
const tokenLengths = new Set<number>();
/** Remembered tokens with characters outside base64url (none are issued so): searched one by one. */
const oddTokens = new Set<string>();
const hashes = new Set<string>();
const bodyValues = new Set<string>();

/** Remembers an API token, its secret part and its stored hash. */
export function rememberToken(token: string): void {
  if (tokens.has(token)) return;
  tokens.add(token);
  tokens.add(token.replace(/^svc_(live|test)_/, ''));
  for (const t of [token, token.replace(/^svc_(live|test)_/, '')]) {
    if (/^[\w-]+$/.test(t)) tokenLengths.add(t.length);
    else oddTokens.add(t);
  }
  hashes.add(hashToken(token));
}

/** A unique marker for a request body; any log line containing it leaked a body. */
export function bodySentinel(): string {
  const value = `sentinel${randomBytes(8).toString('hex')}`;
  bodyValues.add(value);
  return value;
}

/** Every substring of `length` characters of the runs of `alphabet` in `text`. */
function* windows(text: string, alphabet: RegExp, length: number): Generator<string> {
  for (const [run] of text.matchAll(alphabet)) for (let i = 0; i + length <= run.length; i++) yield run.slice(i, i + length);
}

// What each kind of secret is made of: a remembered secret lies within one run of its alphabet, so
// looking up every window of its length in each run finds it wherever it is, in time that follows
// the text and not the number of secrets remembered (the suite remembers thousands).
const HASH_LENGTH = 64;
const SENTINEL = /sentinel[0-9a-f]{16}/g;

/** The secrets found in `text`, by kind (empty when there are none). */
export function secretsIn(text: string): string[] {
  const found = new Set<string>();
  for (const length of tokenLengths) {
    for (const t of windows(text, new RegExp(`[\\w-]{${length},}`, 'g'), length)) if (tokens.has(t)) found.add(`token ${t.slice(0, 12)}…`);
  }
  for (const t of oddTokens) if (text.includes(t)) found.add(`token ${t.slice(0, 12)}…`);
  for (const h of windows(text, /[0-9a-f]{64,}/g, HASH_LENGTH)) if (hashes.has(h)) found.add(`token hash ${h.slice(0, 12)}…`);
  for (const [v] of text.matchAll(SENTINEL)) if (bodyValues.has(v)) found.add(`body value ${v}`);
  return [...found, ...webhookSecretsIn(text)];
}

/** Webhook signing secrets: no log line may hold one, whoever made it. */
function webhookSecretsIn(text: string): string[] {
  const found: string[] = [];
  for (const [secret] of text.matchAll(/whsec_[A-Za-z0-9+/=]{20,}/g)) found.push(`webhook secret ${secret.slice(0, 12)}…`);
  return found;
}

/** A stored token hash anywhere in `text`. */
export function tokenHashIn(text: string): string | undefined {
  for (const [candidate] of text.matchAll(/[0-9a-f]{64}/g)) if (hashes.has(candidate)) return candidate;
  return undefined;
}

/** Fails when any log line holds a token, a token hash or a marked body value. */
export function expectNoSecretsInLogs(lines: readonly string[]): void {
  const leaks: string[] = [];
  for (const line of lines) {
    const found = secretsIn(line);
    if (found.length > 0) leaks.push(`${found.join(', ')} in: ${line.slice(0, 300)}`);
  }
  expect(leaks, 'secrets written to the logs').toEqual([]);
  // The scan is only meaningful if something was remembered and something was logged.
  expect(tokens.size + bodyValues.size).toBeGreaterThan(0);
  expect(lines.length).toBeGreaterThan(0);
}
