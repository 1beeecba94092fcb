// Evidence on deals (the `deal_evidence` table): one row per deal and evidence key, with a note and
// where it came from, recorded, listed and removed through the kernel's children
// (deal-evidence.children.ts). It gates stage entry: a deal enters a deal stage linked to a checklist
// stage only with every required element of that stage (else 409 listing the missing keys), unless
// the request says `force: true`, which its `deal.stage_changed` event records. GET …/checklist
// answers, for the deal's stage and the next one, which elements are met and by what.
import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import { AppError } from '../../platform/errors.ts';
import type { Row } from '../../platform/resource/define.ts';
import { getRow } from '../../platform/resource/store.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { checklistStage, type ChecklistStage } from '../checklists/checklists.store.ts';
import { libraryMap, type EvidenceKey } from '../checklists/evidence-library.ts';
import { deals } from './deals.resource.ts';
import type { StageRow } from './pipelines.store.ts';

type EvidenceRow = DB['deal_evidence'];

const presentEvidence = (e: EvidenceRow, library: Map<string, EvidenceKey>) => ({
  deal_id: e.deal_id, key: e.key, title: library.get(e.key)?.title ?? e.key, note: e.note, source: e.source,
  created_at: Number(e.created_at), updated_at: Number(e.updated_at),
});
export type Evidence = ReturnType<typeof presentEvidence>;

const evidenceOf = (db: Kysely<DB>, scope: Scope, dealId: string) =>
  selectIn(db, 'deal_evidence', scope).selectAll().where('deal_id', '=', dealId).orderBy('key').execute();

/**
 * The required elements of `stage`'s linked checklist stage that the deal (none for a new one) lacks;
 * empty for a stage without a link.
 */
export async function missingEvidence(w: WriteContext, stage: StageRow, dealId: string | undefined): Promise<string[]> {
  if (!stage.checklist_stage_id) return [];
  const { required_elements } = await checklistStage(w.tx, w.scope, stage.checklist_stage_id);
  if (required_elements.length === 0) return [];
  const have = new Set(dealId === undefined ? [] : (await evidenceOf(w.tx, w.scope, dealId)).map((e) => e.key));
  return required_elements.filter((key) => !have.has(key));
}

/** 409 with the missing keys, unless forced. */
export function refuseEntry(stage: StageRow, missing: string[]): never {
  throw new AppError('conflict', `Stage ${stage.name} (${stage.id}) needs evidence the deal lacks: ${missing.join(', ')}. Record it with POST /v1/deals/{id}/evidence, or send "force": true`, { extra: { missing } });
}

function stageChecklist(stage: StageRow, linked: ChecklistStage | null, evidence: Map<string, Evidence>, library: Map<string, EvidenceKey>) {
  const element = (key: string) => ({ key, title: library.get(key)?.title ?? key, met: evidence.has(key), evidence: evidence.get(key) ?? null });
  const required = (linked?.required_elements ?? []).map(element);
  const missing = required.filter((e) => !e.met).map((e) => e.key);
  return {
    stage_id: stage.id, stage_name: stage.name, checklist_stage_id: linked?.id ?? null, checklist_stage_name: linked?.name ?? null,
    exit_criteria: linked?.exit_criteria ?? null, channel_scripts: linked?.channel_scripts ?? {},
    ready: missing.length === 0, missing, required, recommended: (linked?.recommended_elements ?? []).map(element),
  };
}

/** The checklist of a deal: its stage and the next one of its pipeline, element by element. */
export async function dealChecklist(db: Kysely<DB>, dialect: Dialect, scope: Scope, dealId: string) {
  const deal: Row = await getRow(deals, db, dialect, scope, dealId);
  const stages = await selectIn(db, 'deal_stages', scope).selectAll().where('pipeline_id', '=', String(deal.pipeline_id)).orderBy('position').execute();
  const at = stages.findIndex((s) => s.id === deal.stage_id);
  const library = await libraryMap(db, scope);
  const evidence = (await evidenceOf(db, scope, dealId)).map((e) => presentEvidence(e, library));
  const byKey = new Map(evidence.map((e) => [e.key, e]));
  // A linked checklist stage always exists: deleting one that a deal stage links is refused.
  const checklistOf = async (stage: StageRow) => stageChecklist(stage, stage.checklist_stage_id ? await checklistStage(db, scope, stage.checklist_stage_id) : null, byKey, library);
  return {
    deal_id: deal.id, current: await checklistOf(stages[at]), next: stages[at + 1] ? await checklistOf(stages[at + 1]) : null, evidence,
  };
}
