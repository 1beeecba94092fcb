// The per-stage totals behind GET /v1/deals/summary, maintained in each deal write's transaction (a
// tenant's writes are serialized by its write lock, so the totals are exact). A deal adds to the row
// of its stage and currency: one deal, its amount, and either amount × its own probability or, when
// it follows its stage's probability, its amount (weighted when read; see summary.ts).
import { sql } from 'kysely';
import { shaped } from '../../db/prepared.ts';
import { selectIn, tenantOf } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';

/** A deal row (its stage_id, currency, amount and own probability are read). */
export type DealShape = Record<string, unknown>;

const part = (d: DealShape) => {
  const amount = d.amount === null || d.amount === undefined ? 0 : Number(d.amount);
  const own = d.probability !== null && d.probability !== undefined;
  return { amount, weighted_own: own ? amount * Number(d.probability) : 0, amount_following: own ? 0 : amount };
};

const sameShape = (a: DealShape, b: DealShape) =>
  a.stage_id === b.stage_id && a.currency === b.currency && Number(a.amount ?? 0) === Number(b.amount ?? 0) && (a.probability ?? null) === (b.probability ?? null);

const addUp = {
  deal_count: sql<number>`deal_stage_totals.deal_count + excluded.deal_count`,
  amount: sql<number>`deal_stage_totals.amount + excluded.amount`,
  weighted_own: sql<number>`deal_stage_totals.weighted_own + excluded.weighted_own`,
  amount_following: sql<number>`deal_stage_totals.amount_following + excluded.amount_following`,
};
const key = ['org_id', 'mode', 'stage_id', 'currency'] as const;

/** A deal's share of its stage's totals, added (sign 1) or removed (sign -1). */
function shareOf(w: WriteContext, deal: DealShape, sign: 1 | -1) {
  const p = part(deal);
  return {
    ...tenantOf(w.scope), stage_id: String(deal.stage_id), currency: String(deal.currency), deal_count: sign,
    amount: sign * p.amount, weighted_own: sign * p.weighted_own, amount_following: sign * p.amount_following,
  };
}

/** The statement adding `row` (a share, or shares added up) to its stage's totals. */
const totalsMove = (w: WriteContext, row: ReturnType<typeof shareOf>) =>
  shaped(w.tx, w.dialect, 'deal_stage_totals move', Object.values(row), () => w.tx.insertInto('deal_stage_totals').values(row)
    .onConflict((oc) => oc.columns([...key]).doUpdateSet(addUp)));

/**
 * Queues a new deal's share of its stage's totals, as nothing in its write reads them, added up with
 * the shares of the deals created with it (`laterAddingUp`).
 */
export function addTotalsLater(w: WriteContext, deal: DealShape): void {
  const row = shareOf(w, deal, 1);
  w.laterAddingUp(`deal_stage_totals ${row.stage_id} ${row.currency}`, row, (values) => totalsMove(w, values as typeof row));
}

/** Adds or removes a deal's share of its stage's totals now. */
export async function moveTotals(w: WriteContext, deal: DealShape, sign: 1 | -1): Promise<void> {
  await totalsMove(w, shareOf(w, deal, sign)).execute();
}

/** Moves a deal's share from its old shape to its new one (nothing when neither changed). */
export async function changeTotals(w: WriteContext, before: DealShape, after: DealShape): Promise<void> {
  if (sameShape(before, after)) return;
  await moveTotals(w, before, -1);
  await moveTotals(w, after, 1);
}

/** Moves every total of one stage onto another (the deals of a deleted stage). */
export async function mergeStageTotals(w: WriteContext, fromStageId: string, toStageId: string): Promise<void> {
  const rows = await selectIn(w.tx, 'deal_stage_totals', w.scope).selectAll().where('stage_id', '=', fromStageId).execute();
  for (const r of rows) {
    await w.tx.insertInto('deal_stage_totals').values({ ...r, stage_id: toStageId }).onConflict((oc) => oc.columns([...key]).doUpdateSet(addUp)).execute();
  }
}
