// The leases of this process's idempotency claims (see idempotency.ts). A claim is leased for
// LEASE_S; while its request runs, this process renews it every RENEW_MS, so a request that is only
// slow keeps its claim (a retry elsewhere gets 409) and one whose process died is taken over once
// the lease lapses, a few seconds later instead of minutes.
//
// The lease decides only when a claim looks abandoned. That a request never runs twice does not
// rest on it: each claim carries a token (`lease`), a takeover replaces it, and a request's write
// and stored response commit only while the row still holds its token (write.ts, `respond`). A
// request paused past its lease (a frozen process, a store that refused the renewals) thus loses
// its claim and commits nothing; its retry runs once, under the new token.
import type { Database } from '../db/database.ts';
import { statement, UNSYNCED } from '../db/prepared.ts';
import { newId, nowSeconds } from './ids.ts';
import type { Scope } from './scope.ts';

/** Seconds after its last renewal a claim counts as abandoned. */
export const LEASE_S = 5;
/** How often the claims in flight are renewed; a request may stall LEASE_S minus this unharmed. */
export const RENEW_MS = 1000;

export interface IdempotencyClaim {
  scope: Scope;
  key: string;
  /** The claim's token: the request's write commits only while the row still carries it. */
  lease: string;
  /** Set once the response has been stored, so it is not stored twice. */
  stored: boolean;
  /** When the claim was taken (ms), so a claim is renewed only once it has lived a renewal period. */
  since: number;
}

// A renewal that a power cut loses is harmless (so is the process it belonged to), so its commit is
// not synced, like the claim's own.
const RENEW = statement(`update idempotency_keys set locked_at = ? from ${UNSYNCED}
  where org_id = ? and mode = ? and key = ? and lease = ? and status is null`, { durable: false });

export const newLease = () => newId('lease');

// A claim must be visible at once, not survive a power cut: losing one loses no work (a write and
// its stored response commit together, durably, afterwards), so its own commit is not synced.
// On SQLite a claim runs on the connection at once. On PostgreSQL the claims that arrive together
// share one statement: a round trip and a transaction of the server's for each claim were most of
// a create's round trips (the writes themselves are committed in groups, write.ts).
const CLAIM = statement(`insert into idempotency_keys (org_id, mode, key, fingerprint, status, body, created_at, locked_at, lease)
  select ?, ?, ?, ?, null, null, ?, ?, ? from ${UNSYNCED} where true on conflict (org_id, mode, key) do nothing`, { durable: false });
const CLAIMS = statement<{ lease: string }>(`insert into idempotency_keys (org_id, mode, key, fingerprint, status, body, created_at, locked_at, lease)
  select c.org_id, c.mode, c.key, c.fingerprint, null, null, c.at, c.at, c.lease
  from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[]) as c(org_id, mode, key, fingerprint, at, lease), ${UNSYNCED}
  on conflict (org_id, mode, key) do nothing returning lease`, { durable: false });

/** A claim waiting for the next statement of claims (PostgreSQL). */
interface WantedClaim {
  scope: Scope;
  key: string;
  fingerprint: string;
  at: number;
  lease: string;
  resolve(inserted: boolean): void;
  reject(error: Error): void;
}

export class ClaimLeases {
  readonly #database: Database;
  readonly #held = new Set<IdempotencyClaim>();
  readonly #onError: (error: Error) => void;
  readonly #timer: NodeJS.Timeout;
  #renewing = false;
  /** Claims for the next statement of claims, and whether one runs (PostgreSQL). */
  #wanted: WantedClaim[] = [];
  #claiming = false;

  constructor(database: Database, onError: (error: Error) => void) {
    this.#database = database;
    this.#onError = onError;
    this.#timer = setInterval(() => void this.#renew(), RENEW_MS).unref();
  }

  /**
   * Claims `key` for a request with this fingerprint: the claim, held, or undefined when the key
   * already has a row (a finished, running or abandoned request: idempotency.ts decides).
   */
  async take(scope: Scope, key: string, fingerprint: string, at: number): Promise<IdempotencyClaim | undefined> {
    const lease = newLease();
    const { db, dialect } = this.#database;
    const inserted = dialect === 'sqlite'
      ? await CLAIM.run(db, dialect, [scope.orgId, scope.mode, key, fingerprint, at, at, lease]) === 1
      : await new Promise<boolean>((resolve, reject) => {
        this.#wanted.push({ scope, key, fingerprint, at, lease, resolve, reject });
        this.#claimSoon();
      });
    return inserted ? this.hold(scope, key, lease) : undefined;
  }

  // One statement of claims at a time, started after the current turn of the event loop: the
  // claims of every request read in that turn, or while the last statement ran, go together.
  #claimSoon(): void {
    if (this.#claiming || this.#wanted.length === 0) return;
    this.#claiming = true;
    setImmediate(() => void this.#claimWanted());
  }

  async #claimWanted(): Promise<void> {
    const batch = this.#wanted;
    this.#wanted = [];
    const { db, dialect } = this.#database;
    try {
      const rows = await CLAIMS.all(db, dialect, [
        batch.map((w) => w.scope.orgId), batch.map((w) => w.scope.mode), batch.map((w) => w.key),
        batch.map((w) => w.fingerprint), batch.map((w) => w.at), batch.map((w) => w.lease),
      ]);
      const inserted = new Set(rows.map((r) => r.lease));
      for (const w of batch) w.resolve(inserted.has(w.lease));
    } catch (error) {
      for (const w of batch) w.reject(error as Error);
    } finally {
      this.#claiming = false;
      this.#claimSoon();
    }
  }

  /** Keeps `claim` leased until it is released. */
  hold(scope: Scope, key: string, lease: string): IdempotencyClaim {
    const claim = { scope, key, lease, stored: false, since: Date.now() };
    this.#held.add(claim);
    return claim;
  }

  /** The claim's response is stored (or its request is over): its lease need not be renewed. */
  release(claim: IdempotencyClaim): void {
    this.#held.delete(claim);
  }

  /** Claims currently renewed. */
  get size(): number {
    return this.#held.size;
  }

  close(): void {
    clearInterval(this.#timer);
  }

  async #renew(): Promise<void> {
    // A store slow enough to hold a round past the next one needs no second round meanwhile.
    if (this.#renewing) return;
    const due = [...this.#held].filter((c) => Date.now() - c.since >= RENEW_MS);
    if (due.length === 0) return;
    this.#renewing = true;
    const { db, dialect } = this.#database;
    const now = nowSeconds();
    try {
      await Promise.all(due.map((c) => RENEW.run(db, dialect, [now, c.scope.orgId, c.scope.mode, c.key, c.lease])));
    } catch (error) {
      this.#onError(error as Error);
    } finally {
      this.#renewing = false;
    }
  }
}
