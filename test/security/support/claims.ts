// A look into a fresh store from outside the service, for the tests of idempotency claims: the
// state of a key's record (which no API shows), and on PostgreSQL a hold on a tenant's writes (the
// row lock every write takes first, see src/platform/write.ts), so that a request is kept in flight
// for as long as a test needs.
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import type { FreshStore } from './stores.ts';

export interface ClaimRow {
  status: number | null;
  lease: string | null;
  locked_at: number;
}

export interface StoreProbe {
  claim(orgId: string, mode: string, key: string): Promise<ClaimRow | undefined>;
  /** PostgreSQL only: blocks the tenant's writes until the returned function is called. */
  holdWrites(orgId: string, mode: string): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const CLAIM = 'select status, lease, locked_at from idempotency_keys where org_id = $1 and mode = $2 and key = $3';

export async function storeProbe(store: FreshStore): Promise<StoreProbe> {
  if (store.file) {
    const db = new DatabaseSync(store.file, { timeout: 10_000 });
    const read = db.prepare(CLAIM.replace(/\$\d/g, '?'));
    return {
      claim: async (orgId, mode, key) => read.get(orgId, mode, key) as ClaimRow | undefined,
      holdWrites: () => Promise.reject(new Error('SQLite has no row locks: a held write lock stops every writer')),
      close: async () => db.close(),
    };
  }
  const reader = new pg.Client({ connectionString: store.url });
  await reader.connect();
  return {
    claim: async (orgId, mode, key) => {
      const row = (await reader.query(CLAIM, [orgId, mode, key])).rows[0];
      return row ? { ...row, locked_at: Number(row.locked_at) } : undefined;
    },
    async holdWrites(orgId, mode) {
      const holder = new pg.Client({ connectionString: store.url });
      await holder.connect();
      await holder.query('begin');
      const locked = await holder.query(`select value from counters where org_id = $1 and mode = $2 and name = 'events' for update`, [orgId, mode]);
      if (locked.rowCount !== 1) throw new Error('the tenant has no event counter yet: write something first');
      return async () => {
        await holder.query('rollback');
        await holder.end();
      };
    },
    close: () => reader.end(),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `read` yields a value that `ok` accepts; fails after `timeoutMs`. */
export async function waitFor<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 10_000, everyMs = 1): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}
