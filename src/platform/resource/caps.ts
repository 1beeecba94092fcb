// Caps on a tenant's records (a definition's `cap`): at most `max` per organization and mode, of all
// its records or of those whose `field` holds `value` (the active ones). Checked inside the write,
// which holds the tenant's lock, so two concurrent creates cannot both take the last place.
import { sql } from 'kysely';
import { conflict } from '../errors.ts';
import type { WriteContext } from '../write.ts';
import { same } from './changes.ts';
import type { Resource, Row } from './define.ts';
import { recordsIn } from './soft-delete.ts';

/**
 * Refuses (409, the cap's message) a write that would make the record count when it did not (a
 * create, or an update to `value`) while the tenant already has `max` that count. `row` holds the
 * stored values written (all of a create's; an update's changes), `before` the row an update changes.
 */
export async function checkCap(r: Resource, w: WriteContext, row: Record<string, unknown>, before?: Row): Promise<void> {
  const cap = r.cap;
  if (!cap) return;
  const f = cap.field === undefined ? undefined : r.fields[cap.field];
  const counts = (values: Record<string, unknown>) => !f || same(f.fromRow(values[cap.field!]), cap.value);
  if (before ? counts(before) || !counts({ ...before, ...row }) : !counts(row)) return;
  let q = recordsIn(r, w.tx, w.scope);
  if (f) q = q.where(sql.ref(cap.field!), '=', f.toRow(cap.value) as never);
  const { n } = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  if (Number(n) >= cap.max) throw conflict(cap.message);
}
