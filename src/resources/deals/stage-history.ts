// The API form of a deal's stage history rows (the stage-history route and deal timelines): each
// stay with its stage's current name (a deleted stage's last) and the seconds spent there (until now
// while it lasts).
import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { nowSeconds } from '../../platform/ids.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';

export async function presentStageHistory(db: Kysely<DB>, scope: Scope, page: Array<Selectable<DB['deal_stage_history']>>) {
  const now = nowSeconds();
  const names = new Map((page.length === 0 ? [] : await selectIn(db, 'deal_stages', scope).select(['id', 'name']).where('id', 'in', page.map((h) => h.stage_id)).execute()).map((s) => [s.id, s.name]));
  return page.map((h) => ({
    id: h.id, deal_id: h.deal_id, pipeline_id: h.pipeline_id, stage_id: h.stage_id, stage_name: names.get(h.stage_id) ?? h.stage_name ?? null,
    entered_at: Number(h.entered_at), left_at: h.left_at === null ? null : Number(h.left_at),
    seconds_in_stage: Math.max(0, (h.left_at === null ? now : Number(h.left_at)) - Number(h.entered_at)),
  }));
}
