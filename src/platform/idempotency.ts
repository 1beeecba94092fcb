// Idempotency-Key on POST, PATCH and DELETE (IETF draft, Stripe's behaviour). The first request
// claims the key with a committed row; its response is stored in the same transaction as its
// writes (write.ts), or after it for responses that wrote nothing. A retry replays the stored
// status and body with `Idempotent-Replayed: true`; the same key for a different request is 422;
// a retry while the first still runs is 409. A claim whose process died is taken over after a lease.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import { canonicalJson } from './canonical-json.ts';
import { AppError, badRequest, conflict } from './errors.ts';
import { nowSeconds } from './ids.ts';
import type { Scope } from './scope.ts';

export const RETENTION_S = 24 * 60 * 60;
const LEASE_S = 60;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyClaim {
  key: string;
  /** Set once the response has been stored, so it is not stored twice. */
  stored: boolean;
}

function fingerprint(request: FastifyRequest): string {
  return createHash('sha256').update(`${request.method} ${request.url}\n${canonicalJson(request.body ?? null)}`).digest('hex');
}

// A claim must be visible at once, not survive a power cut: losing one loses no work (a write and
// its stored response commit together, durably, afterwards), so its own commit is not synced.
const CLAIM = statement(`insert into idempotency_keys (org_id, mode, key, fingerprint, status, body, created_at, locked_at)
  values (?, ?, ?, ?, null, null, ?, ?) on conflict (org_id, mode, key) do nothing`, { durable: false });

const where = (db: Kysely<DB>, scope: Scope, key: string) =>
  db.selectFrom('idempotency_keys').selectAll().where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('key', '=', key);

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

  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await CLAIM.run(db, request.server.services.database.dialect, [scope.orgId, scope.mode, header, print, now, now]);
    if (inserted === 1) {
      request.idempotency = { key: header, stored: false };
      return true;
    }
    const existing = await where(db, scope, header).executeTakeFirst();
    if (!existing) continue; // purged between the two statements: claim again
    if (existing.created_at < now - RETENTION_S) {
      await db.deleteFrom('idempotency_keys').where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('key', '=', header).where('created_at', '=', existing.created_at).execute();
      continue;
    }
    if (existing.fingerprint !== print) {
      throw new AppError('validation', 'Idempotency-Key was already used with a different request; use a new key for a new request');
    }
    if (existing.status !== null && existing.body !== null) {
      reply.code(existing.status).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(existing.body);
      return false;
    }
    if (existing.locked_at < now - LEASE_S) {
      // The first request's process died before finishing; nothing of it was committed.
      const taken = await db.updateTable('idempotency_keys').set({ locked_at: now })
        .where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('key', '=', header)
        .where('locked_at', '=', existing.locked_at).where('status', 'is', null).executeTakeFirst();
      if (taken.numUpdatedRows === 1n) {
        request.idempotency = { key: header, stored: false };
        return true;
      }
    }
    throw conflict('A request with this Idempotency-Key is still being processed; retry later');
  }
  throw conflict('A request with this Idempotency-Key is still being processed; retry later');
}

/**
 * After a response that wrote nothing (an error): a 4xx is stored and will be replayed; a 5xx
 * releases the key so that a retry runs again.
 */
export async function settle(db: Kysely<DB>, request: FastifyRequest, status: number, payload: unknown): Promise<void> {
  const claimed = request.idempotency;
  if (!claimed || claimed.stored) return;
  claimed.stored = true;
  const scope = request.scope;
  const row = db.updateTable('idempotency_keys').where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('key', '=', claimed.key);
  if (status >= 500 || typeof payload !== 'string') {
    await db.deleteFrom('idempotency_keys').where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('key', '=', claimed.key).where('status', 'is', null).execute();
  } else {
    await row.set({ status, body: payload }).where('status', 'is', null).execute();
  }
}

/** Deletes keys past their retention. */
export async function purgeExpired(db: Kysely<DB>): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', nowSeconds() - RETENTION_S).executeTakeFirst();
  return Number(result.numDeletedRows);
}
