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
import { statement } from '../db/prepared.ts';
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
const RENEW = statement(`update idempotency_keys set locked_at = ?
  where org_id = ? and mode = ? and key = ? and lease = ? and status is null`, { durable: false });

export const newLease = () => newId('lease');

export class ClaimLeases {
  readonly #database: Database;
  readonly #held = new Set<IdempotencyClaim>();
  readonly #onError: (error: Error) => void;
  readonly #timer: NodeJS.Timeout;
  #renewing = false;

  constructor(database: Database, onError: (error: Error) => void) {
    this.#database = database;
    this.#onError = onError;
    this.#timer = setInterval(() => void this.#renew(), RENEW_MS).unref();
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
