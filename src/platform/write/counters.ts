// A tenant's maintained totals (the `counters` table), and the moves of number columns a write
// makes: both added up over the write and written once at its end.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import { shaped } from '../../db/prepared.ts';
import type { DB } from '../../db/schema.ts';
import { updateIn, type TenantTable } from '../resource/tenancy.ts';
import type { Scope } from '../scope.ts';
import type { DeferredStatement } from './deferred.ts';

/** Adds `delta` to a tenant counter (creating it at zero) and returns the new value. */
export async function bumpCounter(db: Kysely<DB>, dialect: Dialect, scope: Scope, name: string, delta: number): Promise<number> {
  const { rows: [row] } = await shaped(db, dialect, 'counters bump', [scope.orgId, scope.mode, name, delta, delta], () => db.insertInto('counters')
    .values({ org_id: scope.orgId, mode: scope.mode, name, value: delta })
    .onConflict((oc) => oc.columns(['org_id', 'mode', 'name']).doUpdateSet({ value: sql<number>`counters.value + ${delta}` }))
    .returning('value')).execute();
  return Number(row.value);
}

export async function readCounter(db: Kysely<DB>, scope: Scope, name: string): Promise<number> {
  const row = await db.selectFrom('counters').select('value')
    .where('org_id', '=', scope.orgId).where('mode', '=', scope.mode).where('name', '=', name).executeTakeFirst();
  return row ? Number(row.value) : 0;
}

/** Takes the tenant's write lock and reads its event sequence. */
export const lockTenant = (tx: Transaction<DB>, dialect: Dialect, scope: Scope) => bumpCounter(tx, dialect, scope, 'events', 0);

interface Move {
  table: TenantTable;
  id: string;
  column: string;
  delta: number;
}

/** What a write moves: tenant counters by name, and number columns of the tenant's rows. */
export class Tally {
  readonly #deltas = new Map<string, number>();
  readonly #moves = new Map<string, Move>();

  count(name: string, delta: number): void {
    this.#deltas.set(name, (this.#deltas.get(name) ?? 0) + delta);
  }

  move(table: TenantTable, id: string, column: string, delta: number): void {
    const key = `${table}\u0000${id}\u0000${column}`;
    const move = this.#moves.get(key);
    this.#moves.set(key, { table, id, column, delta: (move?.delta ?? 0) + delta });
  }

  /** A function putting the tally back as it is now (a part of a write rolled back). */
  snapshot(): () => void {
    const deltas = new Map(this.#deltas);
    const moves = new Map(this.#moves);
    return () => {
      this.#deltas.clear();
      for (const [name, delta] of deltas) this.#deltas.set(name, delta);
      this.#moves.clear();
      for (const [key, move] of moves) this.#moves.set(key, move);
    };
  }

  /** One statement per row and column moved. */
  moveStatements(tx: Transaction<DB>, dialect: Dialect, scope: Scope): DeferredStatement[] {
    const { orgId, mode } = scope;
    const statements: DeferredStatement[] = [];
    for (const { table, id, column, delta } of this.#moves.values()) {
      if (delta !== 0) {
        statements.push(shaped(tx, dialect, `move ${table} ${column}`, [delta, orgId, mode, id], () =>
          updateIn(tx, table, scope).set(column as never, sql`${sql.ref(column)} + ${delta}` as never).where(sql.ref('id'), '=', id)));
      }
    }
    return statements;
  }

  /** The statement moving the counters, if any moved. */
  counterStatement(tx: Transaction<DB>, dialect: Dialect, scope: Scope): DeferredStatement | undefined {
    const { orgId, mode } = scope;
    const moved = [...this.#deltas].filter(([, delta]) => delta !== 0);
    if (moved.length === 0) return undefined;
    const rows = moved.map(([name, delta]) => ({ org_id: orgId, mode, name, value: delta }));
    return shaped(tx, dialect, `counters ${rows.length}`, rows.flatMap(Object.values), () => tx.insertInto('counters').values(rows)
      .onConflict((oc) => oc.columns(['org_id', 'mode', 'name']).doUpdateSet({ value: sql<number>`counters.value + excluded.value` })));
  }
}
