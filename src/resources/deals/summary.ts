// GET /v1/deals/summary: per stage of a pipeline, the number of deals and, per currency, the sum of
// amounts and of weighted amounts. Read from the maintained totals (totals.ts): one row per stage and
// currency, so the answer costs the same at 100 deals or 100,000 and is exact at every commit; the
// pipeline, its stages and their totals come in one statement.
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { Dialect } from '../../db/database.ts';
import { shaped } from '../../db/prepared.ts';
import type { DB } from '../../db/schema.ts';
import { conflict, notFound } from '../../platform/errors.ts';
import { sameTenant, selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { Str } from '../../platform/schemas.ts';
import { NO_DEFAULT_PIPELINE } from './pipelines.store.ts';

const money = (description: string, example: number) => Type.Integer({ description, examples: [example] });

const AmountsSchema = Type.Array(Type.Object({
  currency: Type.String({ description: 'ISO 4217 currency code', examples: ['USD'] }),
  count: Type.Integer({ description: 'Deals in this currency', examples: [12] }),
  amount: money('Sum of their amounts, minor units', 54_000_000),
  weighted_amount: money('Sum of amount × probability / 100 (each deal\'s own probability, else its stage\'s), rounded', 13_500_000),
}), { description: 'Sums per currency (amounts of different currencies are never added together), by currency code' });

export const SummarySchema = Type.Object({
  pipeline_id: Type.String({ description: 'The pipeline summarized', examples: ['pip_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  stages: Type.Array(Type.Object({
    stage_id: Type.String({ description: 'The stage', examples: ['stg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
    name: Type.String({ description: 'Name of the stage', examples: ['Proposal'] }),
    position: Type.Integer({ description: 'Place of the stage in the pipeline', examples: [2] }),
    stage_type: Type.String({ description: '`open`, `won` or `lost`', examples: ['open'] }),
    probability: Type.Integer({ description: 'The stage\'s probability, percent', examples: [50] }),
    count: Type.Integer({ description: 'Deals in the stage', examples: [12] }),
    amounts: AmountsSchema,
  }), { description: 'Every stage of the pipeline in order, including those without deals' }),
  totals: Type.Object({ count: Type.Integer({ description: 'Deals in the pipeline', examples: [40] }), amounts: AmountsSchema }, { description: 'The whole pipeline' }),
}, { title: 'DealSummary', description: 'Deals per stage of a pipeline' });

export const SummaryQuery = Type.Object({
  pipeline_id: Type.Optional(Str({ description: 'The pipeline to summarize; the default pipeline when omitted', maxLength: 64, examples: ['pip_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
}, { additionalProperties: false });

type Amount = { currency: string; count: number; amount: number; weighted_own: number; amount_following: number; probability: number };

function amounts(rows: Amount[]) {
  const by = new Map<string, { currency: string; count: number; amount: number; weighted: number }>();
  for (const r of rows) {
    const a = by.get(r.currency) ?? { currency: r.currency, count: 0, amount: 0, weighted: 0 };
    a.count += r.count;
    a.amount += r.amount;
    // Hundredths of a minor unit until the end, so rounding happens once per sum.
    a.weighted += r.weighted_own + r.amount_following * r.probability;
    by.set(r.currency, a);
  }
  return [...by.values()].filter((a) => a.count > 0).sort((x, y) => (x.currency < y.currency ? -1 : 1))
    .map((a) => ({ currency: a.currency, count: a.count, amount: a.amount, weighted_amount: Math.round(a.weighted / 100) }));
}

/**
 * One statement: the pipeline (the given one, else the default), its stages in order and their
 * totals; a stage without deals comes once with null totals.
 */
async function summaryRows(db: Kysely<DB>, dialect: Dialect, scope: Scope, pipelineId: string | undefined) {
  const q = () => selectIn(db, 'deal_pipelines', scope)
    .leftJoin('deal_stages', (j) => j.on(sameTenant('deal_stages', 'deal_pipelines')).onRef('deal_stages.pipeline_id', '=', 'deal_pipelines.id'))
    .leftJoin('deal_stage_totals', (j) => j.on(sameTenant('deal_stage_totals', 'deal_stages')).onRef('deal_stage_totals.stage_id', '=', 'deal_stages.id'))
    .select([
      'deal_pipelines.id as pipeline_id', 'deal_stages.id as stage_id', 'deal_stages.name', 'deal_stages.position', 'deal_stages.stage_type', 'deal_stages.probability',
      'deal_stage_totals.currency', 'deal_stage_totals.deal_count', 'deal_stage_totals.amount', 'deal_stage_totals.weighted_own', 'deal_stage_totals.amount_following',
    ])
    .orderBy('deal_stages.position');
  // Built once per form (`shaped`): building this join cost more than running it on SQLite. Its rows
  // are the pipeline's stages and currencies, however many deals there are (`bounded`): on SQLite it
  // runs on the connection, where handing it to a reader thread cost more than the read.
  const { rows } = await (pipelineId === undefined
    ? shaped(db, dialect, 'deals.summary default', [scope.orgId, scope.mode, 1], () => q().where('deal_pipelines.is_default', '=', 1), { bounded: true })
    : shaped(db, dialect, 'deals.summary', [scope.orgId, scope.mode, pipelineId], () => q().where('deal_pipelines.id', '=', pipelineId), { bounded: true })).execute();
  if (rows.length === 0) throw pipelineId === undefined ? conflict(NO_DEFAULT_PIPELINE) : notFound('Pipeline not found');
  return rows;
}

export async function dealsSummary(db: Kysely<DB>, dialect: Dialect, scope: Scope, pipelineId: string | undefined) {
  const rows = await summaryRows(db, dialect, scope, pipelineId);
  const stages = new Map<string, { stage_id: string; name: string; position: number; stage_type: string; probability: number; rows: Amount[] }>();
  for (const r of rows) {
    if (r.stage_id === null) continue;
    const stage = stages.get(r.stage_id) ?? { stage_id: r.stage_id, name: r.name!, position: Number(r.position), stage_type: r.stage_type!, probability: Number(r.probability), rows: [] };
    stages.set(r.stage_id, stage);
    if (r.currency !== null) {
      stage.rows.push({
        currency: r.currency, count: Number(r.deal_count), amount: Number(r.amount), weighted_own: Number(r.weighted_own), amount_following: Number(r.amount_following), probability: stage.probability,
      });
    }
  }
  const perStage = [...stages.values()].map(({ rows: amountRows, ...stage }) => ({ ...stage, count: amountRows.reduce((n, r) => n + r.count, 0), amounts: amounts(amountRows) }));
  const all = [...stages.values()].flatMap((s) => s.rows);
  return { pipeline_id: rows[0].pipeline_id, stages: perStage, totals: { count: all.reduce((n, r) => n + r.count, 0), amounts: amounts(all) } };
}
