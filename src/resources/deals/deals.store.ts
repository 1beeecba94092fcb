// What deals do beyond the kernel's CRUD: the pipeline and stage (defaults, and a stage of another
// pipeline refused), the status and closed_at that follow the stage, the stage history and
// `deal.stage_changed`, the maintained per-stage totals, and the probability a deal follows.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { normalizeCurrency } from '../../platform/currency.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { presentOne } from '../../platform/resource/store.ts';
import { deleteIn, selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { addDealContacts, type NewLink } from './deal-contacts.ts';
import { missingEvidence, refuseEntry } from './deal-evidence.ts';
import { deals } from './deals.resource.ts';
import { firstDefaultStage, getPipeline, stagesOf, type StageRow } from './pipelines.store.ts';
import { closedAtFor, emitStageChanged, recordStageEntry } from './stage-moves.ts';
import { addTotalsLater, changeTotals, moveTotals } from './totals.ts';

/** The condition "the deal has this contact", for the `contact_id` filter. */
export const hasContact = (table: string, contactId: string) =>
  sql<boolean>`exists (select 1 from deal_contacts dc where dc.org_id = ${sql.ref(`${table}.org_id`)} and dc.mode = ${sql.ref(`${table}.mode`)} and dc.deal_id = ${sql.ref(`${table}.id`)} and dc.contact_id = ${contactId})`;

async function stageById(w: WriteContext, id: string): Promise<StageRow> {
  const stage = await selectIn(w.tx, 'deal_stages', w.scope).selectAll().where('id', '=', id).executeTakeFirst();
  if (!stage) throw notFound('Stage not found');
  return stage;
}

async function firstStage(w: WriteContext, pipelineId: string): Promise<StageRow> {
  return (await stagesOf(w.tx, w.scope, pipelineId))[0];
}

/**
 * The probability of a deal's stage, put beside the row's columns by the write that read the stage
 * anyway (a symbol, so no insert or update takes it for a column): presenting the deal then reads no
 * stage. Object spreads keep it, so the row after an update has it too.
 */
const STAGE_PROBABILITY = Symbol('stage probability');

/**
 * The stage a deal goes to: the stage given (in the pipeline given or kept, else 400), else the
 * first stage of the pipeline given, else (new deal) the first stage of the default pipeline.
 */
async function targetStage(w: WriteContext, input: Record<string, unknown>, before?: Row): Promise<StageRow> {
  const pipelineId = input.pipeline_id as string | undefined;
  if (pipelineId !== undefined) await getPipeline(w.tx, w.scope, pipelineId);
  if (input.stage_id !== undefined) {
    const stage = await stageById(w, input.stage_id as string);
    const expected = pipelineId ?? (before?.pipeline_id as string | undefined);
    if (expected !== undefined && stage.pipeline_id !== expected) throw badRequest(`Stage ${stage.id} is not a stage of pipeline ${expected}`);
    return stage;
  }
  if (before && (pipelineId === undefined || pipelineId === before.pipeline_id)) return stageById(w, before.stage_id as string);
  return pipelineId === undefined ? firstDefaultStage(w) : firstStage(w, pipelineId);
}

export async function beforeWrite(w: WriteContext, row: Record<string, unknown>, ctx: { before?: Row; input: Record<string, unknown> }): Promise<void> {
  const { before, input } = ctx;
  normalizeCurrency(row);
  if (before && input.pipeline_id === undefined && input.stage_id === undefined) return;
  const stage = await targetStage(w, input, before);
  row.pipeline_id = stage.pipeline_id;
  row.stage_id = stage.id;
  (row as Record<symbol, unknown>)[STAGE_PROBABILITY] = Number(stage.probability);
  if (!before || before.stage_id !== stage.id) {
    const missing = await missingEvidence(w, stage, before?.id);
    if (missing.length > 0 && input.force !== true) refuseEntry(stage, missing);
    row.status = stage.stage_type;
    row.closed_at = closedAtFor(w, stage.stage_type, before ? String(before.status) : null, before?.closed_at);
  }
}

/** What a forced entry bypassed: the required evidence the deal lacked (none unless forced). */
async function bypassed(w: WriteContext, row: Row, input: Record<string, unknown>, isNew: boolean): Promise<string[]> {
  if (input.force !== true) return [];
  const stage = await stageById(w, String(row.stage_id));
  return missingEvidence(w, stage, isNew ? undefined : row.id);
}

export async function afterWrite(w: WriteContext, row: Row, ctx: { before?: Row; input: Record<string, unknown> }): Promise<void> {
  const { before, input } = ctx;
  if (!before) {
    addTotalsLater(w, row);
    await recordStageEntry(w, [row.id], String(row.pipeline_id), String(row.stage_id), true);
    // A deal created by force into a stage it lacks evidence for: the bypass is on record.
    const skipped = await bypassed(w, row, input, true);
    if (skipped.length > 0) emitStageChanged(w, [await presentOne(deals, w.tx, w.scope, row)], null, { forced: true, bypassed: skipped });
    if (input.contacts) await addDealContacts(w, row, input.contacts as NewLink[]);
    return;
  }
  await changeTotals(w, before, row);
  if (row.stage_id === before.stage_id) return;
  await recordStageEntry(w, [row.id], String(row.pipeline_id), String(row.stage_id), false);
  const entry = { forced: input.force === true, bypassed: await bypassed(w, row, input, false) };
  emitStageChanged(w, [await presentOne(deals, w.tx, w.scope, row)], String(before.stage_id), entry);
}

export async function beforeDelete(w: WriteContext, row: Row): Promise<void> {
  await moveTotals(w, row, -1);
  await deleteIn(w.tx, 'deal_stage_history', w.scope).where('deal_id', '=', row.id).execute();
  await deleteIn(w.tx, 'deal_contacts', w.scope).where('deal_id', '=', row.id).execute();
  await deleteIn(w.tx, 'deal_evidence', w.scope).where('deal_id', '=', row.id).execute();
}

/** The probability of the deal's stage, read with the deal (the resource's `alongside`). */
export const stageProbability = (table: string) =>
  sql<number>`(select s.probability from deal_stages s where s.org_id = ${sql.ref(`${table}.org_id`)} and s.mode = ${sql.ref(`${table}.mode`)} and s.id = ${sql.ref(`${table}.stage_id`)})`;

/** Adds the probability a deal follows (its stage's, unless it set one) and its weighted amount. */
export async function enrich(db: Kysely<DB>, scope: Scope, rows: Row[], records: ApiRecord[]): Promise<void> {
  // What a write put beside the row comes first: it is the stage the row has now.
  const known = (row: Row) => ((row as Record<symbol, unknown>)[STAGE_PROBABILITY] ?? (row.stage_probability === undefined ? undefined : Number(row.stage_probability))) as number | undefined;
  const ids = [...new Set(rows.filter((r) => known(r) === undefined).map((r) => String(r.stage_id)))];
  const stages = ids.length === 0 ? [] : await selectIn(db, 'deal_stages', scope).select(['id', 'probability']).where('id', 'in', ids).execute();
  const byId = new Map(stages.map((s) => [s.id, Number(s.probability)]));
  rows.forEach((row, i) => {
    const stageProbability = known(row) ?? byId.get(String(row.stage_id)) ?? 0;
    const probability = row.probability === null || row.probability === undefined ? stageProbability : Number(row.probability);
    records[i].probability = probability;
    records[i].weighted_amount = row.amount === null || row.amount === undefined ? null : Math.round((Number(row.amount) * probability) / 100);
  });
}
