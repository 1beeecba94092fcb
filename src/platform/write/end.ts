// The end of a write: its queued statements, then those storing its requests' responses. On
// PostgreSQL they go to the transaction's connection as one statement (one round trip).
import { CompiledQuery, type QueryResult, type Transaction } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import type { IdempotencyClaim } from '../idempotency.ts';
import type { Scope } from '../scope.ts';
import type { DeferredStatement } from './deferred.ts';

/** PostgreSQL takes at most this many parameters in one statement. */
const PG_MAX_PARAMETERS = 65_535;

/** A request's response, stored for its Idempotency-Key with its write. */
export interface StoredResponse {
  claim: IdempotencyClaim;
  status: number;
  body: string;
}

// The stored responses of a write (several for a run): one update each, matching its claim's row
// only while the claim still carries the request's lease. Each names the whole primary key, so it
// is one index probe whatever the planner knows of the table; an update of many keys at once
// (`key = any(…)`) was planned, right after the table's statistics were taken empty, as a scan of
// all the tenant's keys (5-9 ms for a run of 25). On PostgreSQL each returns its row, counted by
// the write's one statement (see `runEnd`).
const RESPONSE_SQL: Record<Dialect, string> = {
  sqlite: 'update idempotency_keys set status = ?, body = ? where org_id = ? and mode = ? and key = ? and lease = ?',
  postgres: 'update idempotency_keys set status = $1, body = $2 where org_id = $3 and mode = $4 and key = $5 and lease = $6 returning 1',
};

export function storeResponses(tx: Transaction<DB>, dialect: Dialect, scope: Scope, responses: StoredResponse[]): DeferredStatement[] {
  return responses.map((r) => {
    const query = CompiledQuery.raw(RESPONSE_SQL[dialect], [r.status, r.body, scope.orgId, scope.mode, r.claim.key, r.claim.lease]);
    return { compile: () => query, execute: () => tx.executeQuery(query) } as DeferredStatement;
  });
}

/**
 * Runs `statements`, then `responses`; returns the rows these changed. On PostgreSQL they are
 * handed to the transaction's connection as one statement before the first `await` (`handOver` is
 * then called), which ends by counting the rows the responses' parts returned.
 */
export async function runEnd(tx: Transaction<DB>, dialect: Dialect, statements: DeferredStatement[], responses: DeferredStatement[], handOver: () => void): Promise<bigint> {
  if (dialect === 'postgres' && statements.length + responses.length > 0) {
    const compiled = [...statements, ...responses].map((q) => q.compile());
    if (responses.length > 0) compiled.push(returnedBy(statements.length, compiled.length));
    const sent = sendCombined(tx, compiled);
    if (sent) {
      handOver();
      const result = await sent;
      return responses.length > 0 ? BigInt((result.rows[0] as { changed: number }).changed) : 0n;
    }
  }
  for (const q of statements) await q.execute();
  let changed = 0n;
  for (const q of responses) changed += ((await q.execute()) as { numAffectedRows?: bigint }).numAffectedRows ?? 0n;
  return changed;
}

/**
 * PostgreSQL: `statements` handed to the transaction's connection as one statement (the last
 * answering) before any `await`; undefined past the protocol's limit of parameters (a large
 * import's batch), where they run one by one.
 */
function sendCombined(tx: Transaction<DB>, statements: CompiledQuery[]): Promise<QueryResult<unknown>> | undefined {
  const parameters = statements.flatMap((c) => c.parameters);
  if (parameters.length > PG_MAX_PARAMETERS) return undefined;
  return tx.executeQuery(statements.length === 1 ? statements[0] : CompiledQuery.raw(combined(statements), parameters));
}

const COMBINED_KEPT = 1000;
const returnedTexts = new Map<string, CompiledQuery>();

/** The rows the parts `from` to `to` (exclusive) of a combined statement returned, in all (built once per pair). */
function returnedBy(from: number, to: number): CompiledQuery {
  const key = `${from} ${to}`;
  let query = returnedTexts.get(key);
  if (!query) {
    query = CompiledQuery.raw(`select ${Array.from({ length: to - from }, (_, i) => `(select count(*) from ${partName(from + i)})`).join(' + ')} as changed`, []);
    if (returnedTexts.size < COMBINED_KEPT) returnedTexts.set(key, query);
  }
  return query;
}

const combinedTexts = new Map<string, string>();

/** The name of the n-th part of a combined statement. */
const partName = (i: number) => `"w${i}"`;

/**
 * One PostgreSQL statement running `statements` in order: the first ones as data-modifying `with`
 * parts, the last one answering. Its parameters are theirs in order, so each part's placeholders
 * move up by the parameters before it. Built once per sequence of texts (most are `shaped`, whose
 * texts are built once too): building it through the query builder cost a write about 7% of its CPU.
 */
function combined(statements: CompiledQuery[]): string {
  const key = statements.map((c) => c.sql).join('\u0000');
  let text = combinedTexts.get(key);
  if (text === undefined) {
    let before = 0;
    const parts = statements.map(({ sql, parameters }) => {
      const offset = before;
      before += parameters.length;
      return offset === 0 ? sql : sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    });
    text = `with ${parts.slice(0, -1).map((part, i) => `${partName(i)} as (${part})`).join(', ')} ${parts.at(-1)}`;
    if (combinedTexts.size < COMBINED_KEPT) combinedTexts.set(key, text);
  }
  return text;
}
