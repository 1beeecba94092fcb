// GET /v1/deals/summary: per stage of a pipeline, the number of deals and, per currency, the sum of
// amounts and of weighted amounts. Read from the maintained totals (totals.ts): one row per stage and
// currency, so the answer costs the same at 100 deals or 100,000 and is exact at every commit.
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../../db/schema.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { Str } from '../../platform/schemas.ts';
import { defaultPipeline, getPipeline, stagesOf } from './pipelines.store.ts';

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
}, { description: 'Deals per stage of a pipeline' });

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

export async function dealsSummary(db: Kysely<DB>, scope: Scope, pipelineId: string | undefined) {
  const pipeline = pipelineId === undefined ? await defaultPipeline(db, scope) : await getPipeline(db, scope, pipelineId);
  const stages = await stagesOf(db, scope, pipeline.id);
  const totals = await selectIn(db, 'deal_stage_totals', scope).selectAll().where('stage_id', 'in', stages.map((s) => s.id)).execute();
  const all: Amount[] = [];
  const perStage = stages.map((s) => {
    const rows = totals.filter((t) => t.stage_id === s.id).map((t) => ({
      currency: t.currency, count: Number(t.deal_count), amount: Number(t.amount), weighted_own: Number(t.weighted_own), amount_following: Number(t.amount_following), probability: Number(s.probability),
    }));
    all.push(...rows);
    return {
      stage_id: s.id, name: s.name, position: Number(s.position), stage_type: s.stage_type, probability: Number(s.probability),
      count: rows.reduce((n, r) => n + r.count, 0), amounts: amounts(rows),
    };
  });
  return { pipeline_id: pipeline.id, stages: perStage, totals: { count: all.reduce((n, r) => n + r.count, 0), amounts: amounts(all) } };
}
