// Idempotency-Key on POST, PATCH and DELETE (IETF draft, Stripe's behaviour). The first request
// claims the key with a committed row; its response is stored in the same transaction as its
// writes (write.ts), or after it for responses that wrote nothing. A retry replays the stored
// status and body with `Idempotent-Replayed: true`; the same key for a different request is 422;
// a retry while the first still runs is 409. A claim whose process died is taken over once its
// lease lapses: the owning process renews it while the request runs (idempotency-lease.ts).
import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { canonicalJson } from './canonical-json.ts';
import { AppError, badRequest } from './errors.ts';
import { LEASE_S, newLease } from './idempotency-lease.ts';
import { nowSeconds } from './ids.ts';
import { deleteIn, selectIn, updateIn } from './resource/tenancy.ts';
import type { Scope } from './scope.ts';

export type { IdempotencyClaim } from './idempotency-lease.ts';

export const RETENTION_S = 24 * 60 * 60;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
export const STILL_RUNNING = 'A request with this Idempotency-Key is still being processed; retry later';
/** 409 `idempotency_conflict`: the first request with the key has not finished; a retry may succeed. */
export const stillRunning = () => new AppError('idempotency_in_flight', STILL_RUNNING);

function fingerprint(request: FastifyRequest): string {
  return hash('sha256', `${request.method} ${request.url}\n${canonicalJson(request.body ?? null)}`);
}

const where = (db: Kysely<DB>, scope: Scope, key: string) => selectIn(db, 'idempotency_keys', scope).selectAll().where('key', '=', key);

/**
 * Claims the request's key, or answers it: replays a finished response, refuses a mismatch (422)
 * or a request still running (409). Returns true when the handler may run.
 */
export async function claim(db: Kysely<DB>, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return true;
  if (typeof header !== 'string' || !KEY_PATTERN.test(header)) throw badRequest('Idempotency-Key must be 1 to 255 printable ASCII characters');
  const scope = request.scope;
  const print = fingerprint(request);
  const now = nowSeconds();
  const { leases } = request.server.services;

  for (let attempt = 0; attempt < 3; attempt++) {
    const claimed = await leases.take(scope, header, print, now);
    if (claimed) {
      request.idempotency = claimed;
      return true;
    }
    const existing = await where(db, scope, header).executeTakeFirst();
    if (!existing) continue; // purged between the two statements: claim again
    if (existing.created_at < now - RETENTION_S) {
      await deleteIn(db, 'idempotency_keys', scope).where('key', '=', header).where('created_at', '=', existing.created_at).execute();
      continue;
    }
    if (existing.fingerprint !== print) {
      throw new AppError('idempotency_key_reused', 'Idempotency-Key was already used with a different request; use a new key for a new request');
    }
    if (existing.status !== null && existing.body !== null) {
      reply.code(existing.status).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(existing.body);
      return false;
    }
    if (Number(existing.locked_at) < now - LEASE_S) {
      // Nobody renewed the claim for a lease: its process died (or stalled) before finishing, and
      // nothing of it was committed. Its new token keeps the first request from committing later.
      const lease = newLease();
      const taken = await updateIn(db, 'idempotency_keys', scope).set({ locked_at: now, lease }).where('key', '=', header)
        .where('locked_at', '=', existing.locked_at).where('lease', existing.lease === null ? 'is' : '=', existing.lease)
        .where('status', 'is', null).executeTakeFirst();
      if (taken.numUpdatedRows === 1n) {
        request.idempotency = leases.hold(scope, header, lease);
        return true;
      }
    }
    throw stillRunning();
  }
  throw stillRunning();
}

/**
 * After a response that wrote nothing (an error): a 4xx is stored and will be replayed; a 5xx
 * releases the key so that a retry runs again.
 */
export async function settle(db: Kysely<DB>, request: FastifyRequest, status: number, payload: unknown): Promise<void> {
  const claimed = request.idempotency;
  if (!claimed || claimed.stored) return;
  claimed.stored = true;
  request.server.services.leases.release(claimed);
  // Only while the claim is still this request's: one taken over belongs to the request that took it.
  if (status >= 500 || typeof payload !== 'string') {
    await deleteIn(db, 'idempotency_keys', claimed.scope).where('key', '=', claimed.key).where('lease', '=', claimed.lease).where('status', 'is', null).execute();
  } else {
    await updateIn(db, 'idempotency_keys', claimed.scope).set({ status, body: payload })
      .where('key', '=', claimed.key).where('lease', '=', claimed.lease).where('status', 'is', null).execute();
  }
}

/** Deletes keys past their retention. */
export async function purgeExpired(db: Kysely<DB>): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', nowSeconds() - RETENTION_S).executeTakeFirst();
  return Number(result.numDeletedRows);
}
