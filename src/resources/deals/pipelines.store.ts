// Deal pipelines and their stages. Every tenant has exactly one default pipeline (a unique index on
// `is_default`, which is 1 or null), made with the organization and by the sandbox reset; a pipeline
// keeps at least one stage; stages holding deals are deleted only by moving the deals elsewhere.
import type { Kysely } from 'kysely';
import { shaped } from '../../db/prepared.ts';
import type { DB } from '../../db/schema.ts';
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { checkOrder, renumber } from '../../platform/resource/ordering.ts';
import { CLEARED } from '../../platform/resource/stored-json.ts';
import { deleteIn, sameTenant, selectIn, tenantOf, updateIn } from '../../platform/resource/tenancy.ts';
import type { EventType } from '../../platform/event-types.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { checklistStage } from '../checklists/checklists.store.ts';
import { DEFAULT_STAGES, type StageType } from './pipelines.schemas.ts';
import { moveStageDeals, retypeStageDeals } from './stage-moves.ts';

type PipelineRow = DB['deal_pipelines'];
export type StageRow = DB['deal_stages'];

interface StageInput {
  name?: string;
  probability?: number;
  stage_type?: StageType;
  color?: string | null;
  checklist_stage_id?: string | null;
}

/** 404 `Checklist stage not found` for a link to a checklist stage the tenant does not have. */
async function checkLinks(w: WriteContext, stages: StageInput[]): Promise<void> {
  for (const s of stages) if (s.checklist_stage_id) await checklistStage(w.tx, w.scope, s.checklist_stage_id);
}

const presentStage = (s: StageRow) => ({
  id: s.id, pipeline_id: s.pipeline_id, name: s.name, position: Number(s.position), probability: Number(s.probability),
  stage_type: s.stage_type as StageType, color: s.color, checklist_stage_id: s.checklist_stage_id, created_at: Number(s.created_at), updated_at: Number(s.updated_at),
});

/** The API form of pipelines, with their stages read in one query. */
export async function presentPipelines(db: Kysely<DB>, scope: Scope, rows: PipelineRow[]) {
  const stages = rows.length === 0 ? [] : await selectIn(db, 'deal_stages', scope).selectAll().where('pipeline_id', 'in', rows.map((p) => p.id)).orderBy('position').execute();
  return rows.map((p) => ({
    id: p.id, name: p.name, is_default: p.is_default !== null, stages: stages.filter((s) => s.pipeline_id === p.id).map(presentStage),
    created_at: Number(p.created_at), updated_at: Number(p.updated_at),
  }));
}

export async function getPipeline(db: Kysely<DB>, scope: Scope, id: string): Promise<PipelineRow> {
  const row = await selectIn(db, 'deal_pipelines', scope).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Pipeline not found');
  return row;
}

export async function readPipeline(db: Kysely<DB>, scope: Scope, id: string) {
  return (await presentPipelines(db, scope, [await getPipeline(db, scope, id)]))[0];
}

export const NO_DEFAULT_PIPELINE = 'The organization has no default deal pipeline';

export async function defaultPipeline(db: Kysely<DB>, scope: Scope): Promise<PipelineRow> {
  const row = await selectIn(db, 'deal_pipelines', scope).selectAll().where('is_default', '=', 1).executeTakeFirst();
  if (!row) throw conflict(NO_DEFAULT_PIPELINE);
  return row;
}

const FIRST_DEFAULT_STAGE = 'first stage of the default pipeline';

/**
 * The first stage of the default pipeline, where a new deal goes unless told otherwise: one
 * statement, read once per transaction (`WriteContext.shared`; every write here that could change
 * it says so, in `changedStages`).
 */
export function firstDefaultStage(w: WriteContext): Promise<StageRow> {
  return w.shared(FIRST_DEFAULT_STAGE, async () => {
    const { rows: [stage] } = await shaped(w.tx, w.dialect, 'deals.first default stage', [w.scope.orgId, w.scope.mode, 1, 1], () => selectIn(w.tx, 'deal_stages', w.scope).selectAll('deal_stages')
      .innerJoin('deal_pipelines', (j) => j.on(sameTenant('deal_pipelines', 'deal_stages')).onRef('deal_pipelines.id', '=', 'deal_stages.pipeline_id'))
      .where('deal_pipelines.is_default', '=', 1).orderBy('deal_stages.position').limit(1)).execute();
    if (!stage) throw conflict(NO_DEFAULT_PIPELINE);
    return stage;
  });
}

export async function stagesOf(db: Kysely<DB>, scope: Scope, pipelineId: string): Promise<StageRow[]> {
  return selectIn(db, 'deal_stages', scope).selectAll().where('pipeline_id', '=', pipelineId).orderBy('position').execute();
}

/** A stage of the pipeline, or 404 `Stage not found`. */
export async function getStage(db: Kysely<DB>, scope: Scope, pipelineId: string, stageId: string): Promise<StageRow> {
  const row = await selectIn(db, 'deal_stages', scope).selectAll().where('pipeline_id', '=', pipelineId).where('id', '=', stageId).executeTakeFirst();
  if (!row) throw notFound('Stage not found');
  return row;
}

export async function pipelinePage(db: Kysely<DB>, scope: Scope, page: PageRequest) {
  let q = selectIn(db, 'deal_pipelines', scope).selectAll();
  if (page.after !== undefined) q = q.where('id', '<', String(page.after));
  return q.orderBy('id', 'desc').limit(page.take).offset(page.offset).execute();
}

export async function countPipelines(db: Kysely<DB>, scope: Scope): Promise<number> {
  const { n } = await selectIn(db, 'deal_pipelines', scope).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

const defaultProbability = (type: StageType) => (type === 'won' ? 100 : 0);

function stageRow(w: WriteContext, pipelineId: string, position: number, s: StageInput & { name: string }): StageRow {
  const type = s.stage_type ?? 'open';
  return {
    ...tenantOf(w.scope), id: newId('stg'), pipeline_id: pipelineId, name: s.name, position, probability: s.probability ?? defaultProbability(type),
    stage_type: type, color: s.color ?? null, checklist_stage_id: s.checklist_stage_id ?? null, created_at: w.now, updated_at: w.now,
  };
}

/** A write changed pipelines or stages: what the transaction's writes share of them is read again. */
const changedStages = (w: WriteContext) => w.changed(FIRST_DEFAULT_STAGE);

/** Marks the pipeline changed (its updated_at, and `changedStages`). */
async function touch(w: WriteContext, pipelineId: string) {
  changedStages(w);
  await updateIn(w.tx, 'deal_pipelines', w.scope).set({ updated_at: w.now }).where('id', '=', pipelineId).execute();
}

async function emitPipeline(w: WriteContext, type: EventType, pipelineId: string, previous?: Record<string, unknown>) {
  w.emit(type, await readPipeline(w.tx, w.scope, pipelineId), previous);
}

/** Makes `pipelineId` the only default (the unique index holds between the two statements). */
async function makeDefault(w: WriteContext, pipelineId: string) {
  await updateIn(w.tx, 'deal_pipelines', w.scope).set({ is_default: null, updated_at: w.now }).where('is_default', '=', 1).where('id', '!=', pipelineId).execute();
  await updateIn(w.tx, 'deal_pipelines', w.scope).set({ is_default: 1, updated_at: w.now }).where('id', '=', pipelineId).execute();
}

export async function createPipeline(w: WriteContext, input: { name: string; is_default?: boolean; stages?: Array<StageInput & { name: string }> }, options: { silent?: boolean } = {}) {
  await checkLinks(w, input.stages ?? []);
  changedStages(w);
  const id = newId('pip');
  const hasDefault = await selectIn(w.tx, 'deal_pipelines', w.scope).select('id').where('is_default', '=', 1).executeTakeFirst();
  const isDefault = input.is_default === true || !hasDefault;
  if (isDefault && hasDefault) await updateIn(w.tx, 'deal_pipelines', w.scope).set({ is_default: null, updated_at: w.now }).where('is_default', '=', 1).execute();
  await w.tx.insertInto('deal_pipelines').values({ ...tenantOf(w.scope), id, name: input.name, is_default: isDefault ? 1 : null, created_at: w.now, updated_at: w.now }).execute();
  const stages = (input.stages ?? DEFAULT_STAGES).map((s, i) => stageRow(w, id, i, s));
  await w.tx.insertInto('deal_stages').values(stages).execute();
  const pipeline = await readPipeline(w.tx, w.scope, id);
  if (!options.silent) w.emit('deal_pipeline.created', pipeline);
  return pipeline;
}

/**
 * The default pipeline of a new tenant, or of a reset sandbox. Made with the organization it is
 * part of the organization (like its keys) and records no event; the sandbox's records its event.
 */
export const createDefaultPipeline = (w: WriteContext, options: { silent?: boolean } = {}) =>
  createPipeline(w, { name: 'Sales pipeline', is_default: true }, options);

export async function updatePipeline(w: WriteContext, id: string, input: { name?: string; is_default?: true }) {
  const before = await readPipeline(w.tx, w.scope, id);
  if (input.name !== undefined) await updateIn(w.tx, 'deal_pipelines', w.scope).set({ name: input.name, updated_at: w.now }).where('id', '=', id).execute();
  if (input.is_default && !before.is_default) await makeDefault(w, id);
  await touch(w, id);
  const previous = Object.fromEntries(Object.keys(input).map((k) => [k, before[k as keyof typeof before]]));
  await emitPipeline(w, 'deal_pipeline.updated', id, previous);
  return readPipeline(w.tx, w.scope, id);
}

async function dealsIn(w: WriteContext, column: 'pipeline_id' | 'stage_id', id: string): Promise<number> {
  const { n } = await selectIn(w.tx, 'deals', w.scope).select((eb) => eb.fn.countAll<number>().as('n')).where(column, '=', id).executeTakeFirstOrThrow();
  return Number(n);
}

const dealCount = (n: number) => `${n} ${n === 1 ? 'deal' : 'deals'}`;

/** Stages about to be deleted: their stays in deals' histories (of deals moved elsewhere since) keep their names. */
async function keepNames(w: WriteContext, stages: Array<{ id: string; name: string }>): Promise<void> {
  for (const stage of stages) await updateIn(w.tx, 'deal_stage_history', w.scope).set({ stage_name: stage.name }).where('stage_id', '=', stage.id).execute();
}

export async function deletePipeline(w: WriteContext, id: string) {
  const pipeline = await readPipeline(w.tx, w.scope, id);
  if (pipeline.is_default) throw conflict('The default pipeline cannot be deleted; make another pipeline the default first');
  const n = await dealsIn(w, 'pipeline_id', id);
  if (n > 0) throw conflict(`Pipeline has ${dealCount(n)}; move or delete ${n === 1 ? 'it' : 'them'} first`);
  changedStages(w);
  const stageIds = pipeline.stages.map((s) => s.id);
  await deleteIn(w.tx, 'deal_stage_totals', w.scope).where('stage_id', 'in', stageIds).execute();
  await keepNames(w, pipeline.stages);
  await deleteIn(w.tx, 'deal_stages', w.scope).where('pipeline_id', '=', id).execute();
  await deleteIn(w.tx, 'deal_pipelines', w.scope).where('id', '=', id).execute();
  w.emit('deal_pipeline.deleted', pipeline);
  return { id, deleted: true as const };
}

export async function addStage(w: WriteContext, pipelineId: string, input: StageInput & { name: string }) {
  await getPipeline(w.tx, w.scope, pipelineId);
  const stages = await stagesOf(w.tx, w.scope, pipelineId);
  if (stages.length >= 50) throw conflict('A pipeline has at most 50 stages');
  await checkLinks(w, [input]);
  const row = stageRow(w, pipelineId, stages.length, input);
  await w.tx.insertInto('deal_stages').values(row).execute();
  await touch(w, pipelineId);
  await emitPipeline(w, 'deal_pipeline.updated', pipelineId);
  return presentStage(row);
}

export async function updateStage(w: WriteContext, pipelineId: string, stageId: string, input: StageInput) {
  await getPipeline(w.tx, w.scope, pipelineId);
  const before = await getStage(w.tx, w.scope, pipelineId, stageId);
  await checkLinks(w, [input]);
  const changes = { ...input, updated_at: w.now };
  await updateIn(w.tx, 'deal_stages', w.scope).set(changes).where('id', '=', stageId).execute();
  const after = { ...before, ...changes } as StageRow;
  // A stage that changes type changes the status (and closed_at) of its deals.
  if (input.stage_type && input.stage_type !== before.stage_type) await retypeStageDeals(w, after, before.stage_type as StageType);
  // Deals that follow the stage's probability answer the new one: their stored texts go.
  if (input.probability !== undefined && Number(input.probability) !== Number(before.probability)) {
    await updateIn(w.tx, 'deals', w.scope).set(CLEARED).where('stage_id', '=', stageId).where('probability', 'is', null).execute();
  }
  await touch(w, pipelineId);
  await emitPipeline(w, 'deal_pipeline.updated', pipelineId);
  return presentStage(after);
}

export async function deleteStage(w: WriteContext, pipelineId: string, stageId: string, moveTo: string | undefined) {
  await getPipeline(w.tx, w.scope, pipelineId);
  const stage = await getStage(w.tx, w.scope, pipelineId, stageId);
  const stages = await stagesOf(w.tx, w.scope, pipelineId);
  if (stages.length === 1) throw conflict('A pipeline keeps at least one stage');
  const n = await dealsIn(w, 'stage_id', stageId);
  if (moveTo !== undefined && (moveTo === stageId || !stages.some((s) => s.id === moveTo))) {
    throw badRequest('move_to must be another stage of the same pipeline', 'move_to');
  }
  if (n > 0 && moveTo === undefined) throw conflict(`Stage has ${dealCount(n)}; give move_to=<stage_id> of the same pipeline to move ${n === 1 ? 'it' : 'them'}`);
  if (n > 0) await moveStageDeals(w, stage, stages.find((s) => s.id === moveTo)!);
  await deleteIn(w.tx, 'deal_stage_totals', w.scope).where('stage_id', '=', stageId).execute();
  await keepNames(w, [stage]);
  await deleteIn(w.tx, 'deal_stages', w.scope).where('id', '=', stageId).execute();
  await renumber(w, 'deal_stages', stages.filter((s) => s.id !== stageId).map((s) => s.id));
  await touch(w, pipelineId);
  await emitPipeline(w, 'deal_pipeline.updated', pipelineId);
  return { id: stageId, deleted: true as const };
}

export async function orderStages(w: WriteContext, pipelineId: string, stageIds: string[]) {
  await getPipeline(w.tx, w.scope, pipelineId);
  const stages = await stagesOf(w.tx, w.scope, pipelineId);
  checkOrder(stages.map((s) => s.id), stageIds);
  await renumber(w, 'deal_stages', stageIds);
  await touch(w, pipelineId);
  const pipeline = await readPipeline(w.tx, w.scope, pipelineId);
  w.emit('deal_pipeline.updated', pipeline, { stages: stages.map(presentStage) });
  return pipeline;
}
