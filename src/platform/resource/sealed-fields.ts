// Sealed fields (fields.ts `sealed`): what a client writes there is sealed under the service's secret
// before the write (sealing.ts), so the row, the write's events and its stored answer never hold the
// text; reads answer only `<field>_set`. The service opens the value where it uses it (`openSealed`).
import type { FastifyRequest } from 'fastify';
import { seal, unseal } from '../sealing.ts';
import type { Resource } from './define.ts';

const listed = new WeakMap<Resource, string[]>();
const sealedOf = (r: Resource) => {
  let names = listed.get(r);
  if (!names) listed.set(r, names = Object.entries(r.fields).filter(([, f]) => f.sealed).map(([name]) => name));
  return names;
};

/** Replaces the values of `body`'s sealed fields with their sealed text (null clears one). */
export function sealInput(r: Resource, request: FastifyRequest, body: Record<string, unknown>): void {
  for (const name of sealedOf(r)) {
    const value = body[name];
    if (value !== undefined && value !== null) body[name] = seal(request.server.services.secret, JSON.stringify(value));
  }
}

/** The value a sealed column holds, as the client wrote it; undefined when none is set. */
export function openSealed<T = unknown>(secret: string, stored: unknown): T | undefined {
  return typeof stored === 'string' ? JSON.parse(unseal(secret, stored)) as T : undefined;
}
