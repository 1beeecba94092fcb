// A deal entering a stage: its stage history (the open row is closed, a new one opened), its
// `deal.stage_changed` event, and what the stage's type makes of its status and closed_at. Used by
// deal writes and by the pipeline operations that move many deals at once (deleting a stage with
// move_to, changing a stage's type).
import { shaped } from '../../db/prepared.ts';
import { newId } from '../../platform/ids.ts';
import type { Row } from '../../platform/resource/define.ts';
import { present } from '../../platform/resource/store.ts';
import { CLEARED } from '../../platform/resource/stored-json.ts';
import { selectIn, tenantOf, updateIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { deals } from './deals.resource.ts';
import type { StageRow } from './pipelines.store.ts';
import { mergeStageTotals } from './totals.ts';

/** closed_at of a deal entering a stage of `type` from status `from` (null for a new deal). */
export function closedAtFor(w: WriteContext, type: string, from: string | null, closedAt: unknown): number | null {
  if (type === 'open') return null;
  return from === null || from === 'open' ? w.now : (closedAt as number | null) ?? w.now;
}

/** Records that the deals entered `stageId` now (closing their current history rows). */
export async function recordStageEntry(w: WriteContext, dealIds: string[], pipelineId: string, stageId: string, isNew: boolean): Promise<void> {
  if (dealIds.length === 0) return;
  if (!isNew) {
    await updateIn(w.tx, 'deal_stage_history', w.scope).set({ left_at: w.now, updated_at: w.now })
      .where('deal_id', 'in', dealIds).where('left_at', 'is', null).execute();
  }
  const rows = dealIds.map((deal_id) => ({
    ...tenantOf(w.scope), id: newId('dsh'), deal_id, pipeline_id: pipelineId, stage_id: stageId, entered_at: w.now, left_at: null, created_at: w.now, updated_at: w.now,
  }));
  // New deals' first rows are written with the deals themselves (whose insert is queued too), in one
  // insert with those of the deals created with them.
  if (isNew) {
    for (const row of rows) w.insertLater('deal_stage_history', row);
    return;
  }
  const build = () => w.tx.insertInto('deal_stage_history').values(rows);
  // A deal's move writes one row: built once (`shaped`); a pipeline operation's many as they come.
  await (rows.length === 1 ? shaped(w.tx, w.dialect, 'deal_stage_history 1', Object.values(rows[0]), build) : build()).execute();
}

/** How a deal entered its stage: by force (`force: true`), and the required evidence it lacked. */
export interface Entry { forced: boolean; bypassed: string[] }

/**
 * Records `deal.stage_changed` for deals (in their new form) that left `previousStageId` (null: a
 * new deal that entered by force). Moves made by pipeline operations are never forced.
 */
export function emitStageChanged(w: WriteContext, records: Array<Record<string, unknown> & { id: string }>, previousStageId: string | null, entry: Entry = { forced: false, bypassed: [] }): void {
  for (const record of records) w.emit('deal.stage_changed', { ...record, previous_stage_id: previousStageId, ...entry }, { stage_id: previousStageId });
}

/** Moves every deal of stage `from` to stage `to` of the same pipeline (a stage being deleted). */
export async function moveStageDeals(w: WriteContext, from: StageRow, to: StageRow): Promise<void> {
  const rows = (await selectIn(w.tx, 'deals', w.scope).selectAll().where('stage_id', '=', from.id).execute()) as unknown as Row[];
  if (rows.length === 0) return;
  const moved = rows.map((r) => ({ ...r, stage_id: to.id, status: to.stage_type, closed_at: closedAtFor(w, to.stage_type, String(r.status), r.closed_at), updated_at: w.now }));
  for (const m of moved) {
    await updateIn(w.tx, 'deals', w.scope).set({ stage_id: m.stage_id, status: m.status, closed_at: m.closed_at, updated_at: w.now, ...CLEARED }).where('id', '=', m.id).execute();
  }
  await mergeStageTotals(w, from.id, to.id);
  await recordStageEntry(w, moved.map((m) => m.id), to.pipeline_id, to.id, false);
  const records = await present(deals, w.tx, w.scope, moved as Row[]);
  emitStageChanged(w, records, from.id);
  records.forEach((record, i) => w.emit(deals.events.updated, record, { stage_id: from.id, status: rows[i].status, closed_at: rows[i].closed_at }));
}

/** A stage changed type: its deals take the new status, and closed_at follows. */
export async function retypeStageDeals(w: WriteContext, stage: StageRow, oldType: string): Promise<void> {
  const rows = (await selectIn(w.tx, 'deals', w.scope).selectAll().where('stage_id', '=', stage.id).execute()) as unknown as Row[];
  if (rows.length === 0) return;
  const closedAt = closedAtFor(w, stage.stage_type, oldType, null);
  // Between won and lost a deal stays closed since it closed; otherwise it closes now or reopens.
  const keep = stage.stage_type !== 'open' && oldType !== 'open';
  await updateIn(w.tx, 'deals', w.scope).set({ status: stage.stage_type, ...(keep ? {} : { closed_at: closedAt }), updated_at: w.now, ...CLEARED }).where('stage_id', '=', stage.id).execute();
  const after = rows.map((r) => ({ ...r, status: stage.stage_type, closed_at: keep ? r.closed_at : closedAt, updated_at: w.now }));
  const records = await present(deals, w.tx, w.scope, after as Row[]);
  records.forEach((record, i) => w.emit(deals.events.updated, record, { status: rows[i].status, closed_at: rows[i].closed_at === null ? null : Number(rows[i].closed_at) }));
}
