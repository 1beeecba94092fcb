// The stages of stage checklist pipelines: the kernel hooks of the methodology (its stages made with
// it, answered with it, deleted with it) and the stage operations (add, change, delete, reorder).
// Every change of a stage is a `pipeline.updated` of its methodology. A checklist stage that a deal
// stage links cannot be deleted, nor can its methodology: the deal stage is named in the 409.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { conflict, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { checkOrder, renumber } from '../../platform/resource/ordering.ts';
import { createRecord, getRow, presentOne } from '../../platform/resource/store.ts';
import { deleteIn, selectIn, tenantOf, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { checklistPipelines } from './checklists.resource.ts';
import type { StageInput } from './checklists.schemas.ts';
import { checkKeys, keysAt, type NamedKey } from './evidence-library.ts';
import { TEMPLATE_DEFINITIONS, type TemplateName } from './templates.ts';

type StageRow = DB['checklist_stages'];
const MAX_STAGES = 50;

export const presentStage = (s: StageRow) => ({
  id: s.id, pipeline_id: s.pipeline_id, name: s.name, position: Number(s.position), stage_type: s.stage_type,
  required_elements: (parseJson(s.required_elements) ?? []) as string[], recommended_elements: (parseJson(s.recommended_elements) ?? []) as string[],
  channel_scripts: (parseJson(s.channel_scripts) ?? {}) as Record<string, string>, exit_criteria: s.exit_criteria,
  created_at: Number(s.created_at), updated_at: Number(s.updated_at),
});
export type ChecklistStage = ReturnType<typeof presentStage>;

/** The evidence keys a stage input names, at their places under `loc`. */
const namedKeys = (loc: Array<string | number>, s: StageInput): NamedKey[] =>
  [...keysAt([...loc, 'required_elements'], s.required_elements), ...keysAt([...loc, 'recommended_elements'], s.recommended_elements)];

function stageRow(w: WriteContext, pipelineId: string, position: number, s: StageInput & { name: string }): StageRow {
  return {
    ...tenantOf(w.scope), id: newId('cks'), pipeline_id: pipelineId, name: s.name, position, stage_type: s.stage_type ?? 'open',
    required_elements: JSON.stringify(s.required_elements ?? []), recommended_elements: JSON.stringify(s.recommended_elements ?? []),
    channel_scripts: JSON.stringify(s.channel_scripts ?? {}), exit_criteria: s.exit_criteria ?? null, created_at: w.now, updated_at: w.now,
  };
}

export async function stagesOf(db: Kysely<DB>, scope: Scope, pipelineIds: string[]): Promise<StageRow[]> {
  if (pipelineIds.length === 0) return [];
  return selectIn(db, 'checklist_stages', scope).selectAll().where('pipeline_id', 'in', pipelineIds).orderBy('position').execute();
}

/** A checklist stage of the tenant by id alone (what a deal stage links), or 404. */
export async function checklistStage(db: Kysely<DB>, scope: Scope, id: string): Promise<ChecklistStage> {
  const row = await selectIn(db, 'checklist_stages', scope).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Checklist stage not found');
  return presentStage(row);
}

// Kernel hooks of the methodology.

export async function beforeWrite(w: WriteContext, row: Record<string, unknown>, ctx: { before?: Row; input: Record<string, unknown> }): Promise<void> {
  // Read-only for clients (the create body refuses it): only `fromTemplate` below names a template.
  if (!ctx.before && typeof ctx.input.template === 'string') row.template = ctx.input.template;
  const stages = (ctx.input.stages ?? []) as StageInput[];
  await checkKeys(w.tx, w.scope, stages.flatMap((s, i) => namedKeys(['stages', i], s)));
}

export async function afterWrite(w: WriteContext, row: Row, ctx: { before?: Row; input: Record<string, unknown> }): Promise<void> {
  const stages = (ctx.input.stages ?? []) as Array<StageInput & { name: string }>;
  if (ctx.before || stages.length === 0) return;
  await w.tx.insertInto('checklist_stages').values(stages.map((s, i) => stageRow(w, row.id, i, s))).execute();
}

export async function enrich(db: Kysely<DB>, scope: Scope, rows: Row[], records: ApiRecord[]): Promise<void> {
  const stages = await stagesOf(db, scope, rows.map((r) => r.id));
  for (const record of records) record.stages = stages.filter((s) => s.pipeline_id === record.id).map(presentStage);
}

/** 409 naming the first deal stage that links one of `stageIds`. */
async function refuseLinked(w: WriteContext, stageIds: string[], what: string): Promise<void> {
  if (stageIds.length === 0) return;
  const linked = await selectIn(w.tx, 'deal_stages', w.scope).select(['id', 'name', 'pipeline_id']).where('checklist_stage_id', 'in', stageIds).orderBy('id').executeTakeFirst();
  if (linked) throw conflict(`${what} is linked from deal stage ${linked.id} (${linked.name}) of deal pipeline ${linked.pipeline_id}; unlink it first`);
}

export async function beforeDelete(w: WriteContext, row: Row): Promise<void> {
  const stages = await stagesOf(w.tx, w.scope, [row.id]);
  await refuseLinked(w, stages.map((s) => s.id), 'The pipeline');
  // Queued to the end of the write: the `pipeline.deleted` event shows the stages as they were.
  w.later(deleteIn(w.tx, 'checklist_stages', w.scope).where('pipeline_id', '=', row.id));
}

/** A complete methodology made from a built-in template. */
export function fromTemplate(w: WriteContext, template: TemplateName, name: string | undefined): Promise<ApiRecord> {
  const t = TEMPLATE_DEFINITIONS[template];
  return createRecord(checklistPipelines, w, { name: name ?? t.name, description: t.description, stages: t.stages, template });
}

// Stage operations.

async function changed(w: WriteContext, pipelineId: string, previous?: Record<string, unknown>): Promise<ApiRecord> {
  await updateIn(w.tx, 'checklist_pipelines', w.scope).set({ updated_at: w.now }).where('id', '=', pipelineId).execute();
  const pipeline = await presentOne(checklistPipelines, w.tx, w.scope, await getRow(checklistPipelines, w.tx, w.dialect, w.scope, pipelineId));
  w.emit(checklistPipelines.events.updated, pipeline, previous);
  return pipeline;
}

async function getStage(w: WriteContext, pipelineId: string, stageId: string): Promise<StageRow> {
  await getRow(checklistPipelines, w.tx, w.dialect, w.scope, pipelineId);
  const row = await selectIn(w.tx, 'checklist_stages', w.scope).selectAll().where('pipeline_id', '=', pipelineId).where('id', '=', stageId).executeTakeFirst();
  if (!row) throw notFound('Stage not found');
  return row;
}

export async function addStage(w: WriteContext, pipelineId: string, input: StageInput & { name: string }) {
  await getRow(checklistPipelines, w.tx, w.dialect, w.scope, pipelineId);
  await checkKeys(w.tx, w.scope, namedKeys([], input));
  const stages = await stagesOf(w.tx, w.scope, [pipelineId]);
  if (stages.length >= MAX_STAGES) throw conflict(`A pipeline has at most ${MAX_STAGES} stages`);
  const row = stageRow(w, pipelineId, stages.length, input);
  await w.tx.insertInto('checklist_stages').values(row).execute();
  await changed(w, pipelineId);
  return presentStage(row);
}

export async function updateStage(w: WriteContext, pipelineId: string, stageId: string, input: StageInput) {
  const before = await getStage(w, pipelineId, stageId);
  await checkKeys(w.tx, w.scope, namedKeys([], input));
  const changes: Partial<StageRow> = { updated_at: w.now };
  if (input.name !== undefined) changes.name = input.name;
  if (input.stage_type !== undefined) changes.stage_type = input.stage_type;
  if (input.exit_criteria !== undefined) changes.exit_criteria = input.exit_criteria;
  for (const name of ['required_elements', 'recommended_elements', 'channel_scripts'] as const) {
    if (input[name] !== undefined) changes[name] = JSON.stringify(input[name]);
  }
  await updateIn(w.tx, 'checklist_stages', w.scope).set(changes).where('id', '=', stageId).execute();
  const old = presentStage(before);
  await changed(w, pipelineId, { stages: [old] });
  return presentStage({ ...before, ...changes });
}

export async function deleteStage(w: WriteContext, pipelineId: string, stageId: string) {
  const stage = await getStage(w, pipelineId, stageId);
  await refuseLinked(w, [stageId], `Stage ${stageId}`);
  await deleteIn(w.tx, 'checklist_stages', w.scope).where('id', '=', stageId).execute();
  const rest = (await stagesOf(w.tx, w.scope, [pipelineId])).map((s) => s.id);
  await renumber(w, 'checklist_stages', rest);
  await changed(w, pipelineId, { stages: [presentStage(stage)] });
  return { id: stageId, deleted: true as const };
}

export async function orderStages(w: WriteContext, pipelineId: string, stageIds: string[]) {
  await getRow(checklistPipelines, w.tx, w.dialect, w.scope, pipelineId);
  const stages = await stagesOf(w.tx, w.scope, [pipelineId]);
  checkOrder(stages.map((s) => s.id), stageIds);
  await renumber(w, 'checklist_stages', stageIds);
  return changed(w, pipelineId, { stages: stages.map(presentStage) });
}
