// Secret fields (fields.ts `secret`): made by the service when a record is created, stored as their
// spec says (the text itself when the service signs with it, else its SHA-256), and answered only by
// the create and by a rotation. The record's API form leaves them out (store.ts), so reads, lists,
// searches, events and stored answers never carry one; these two writes add it to their own answer.
import { hashSecret } from '../tokens.ts';
import type { Resource } from './define.ts';
import type { SecretSpec } from './fields.ts';

const listed = new WeakMap<Resource, Array<[string, SecretSpec]>>();
/** The secret fields of a resource, listed once: every create asks. */
export function secretsOf(r: Resource): Array<[string, SecretSpec]> {
  let found = listed.get(r);
  if (!found) listed.set(r, found = Object.entries(r.fields).flatMap(([name, f]) => (f.secret ? [[name, f.secret] as [string, SecretSpec]] : [])));
  return found;
}

/** The secret fields that can be rotated (their spec names the route's texts). */
export const rotatable = (r: Resource) => secretsOf(r).filter(([, spec]) => spec.rotate);

/** The stored form of a secret. */
export const stored = (spec: SecretSpec, secret: string) => (spec.store === 'hash' ? hashSecret(secret) : secret);

/** Makes the secrets of a new row: their stored form goes into `row`, their text is answered, once. */
export function newSecrets(r: Resource, row: Record<string, unknown>): Record<string, string> | undefined {
  const made = secretsOf(r);
  if (made.length === 0) return undefined;
  const shown: Record<string, string> = {};
  for (const [name, spec] of made) {
    shown[name] = spec.generate();
    row[name] = stored(spec, shown[name]);
    if (spec.previous) Object.assign(row, { [spec.previous.column]: null, [spec.previous.untilColumn]: null });
  }
  return shown;
}
