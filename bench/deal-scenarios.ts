// Scenarios 15 to 17: deals of the large organization (seeded by seedDeals, evenly over the stages of
// its default pipeline). 15: the list filtered by pipeline and stage with its exact total, each
// request a page the list cache does not keep, stage after stage, measured in turn with baseline (f)
// (a bare route reading the same pages) and with GET one; beside it the cached figure of one fixed
// first page. 16: the deals summary of the pipeline, in turn with GET one. 17: creating a deal with
// three contacts in one request, measured in turn with scenario 5's creates of one contact. Each
// checks first that the service answers what the seeded data says.
import { dealFields } from './fixtures.ts';
import type { LoadSpec } from './load.ts';
import type { Server } from './processes.ts';
import type { Figure } from './scenarios.ts';
import type { Latency } from './search-scenarios.ts';
import type { SeededDeals } from './seed.ts';

export interface DealResults {
  /** `total` and `coldMs` are those of the first page of each stage, read before any was kept. */
  /**
   * `bare` is baseline (f) and `getOne` scenario 1's GET, both measured in turn with the pages: the
   * target compares the pages with that GET one, and (f) with it shows what the bare stack reaches.
   */
  s15_deal_list_by_stage: Figure & { deals: number; stages: number; totals: number[]; coldMs: Latency; cachedFirstPage: Figure; bare: Figure; getOne: Figure };
  /** `getOne` is scenario 1's GET, measured in turn with the summary: the target divides by it. */
  s16_deal_summary: Figure & { deals: number; getOne: Figure };
  /** `creates` is scenario 5's create of a contact, measured in turn with the deals: the target divides by it. */
  s17_deal_with_contacts: Figure & { creates: Figure };
}

type Spec = Omit<LoadSpec, 'url' | 'connections' | 'warmupSeconds' | 'rounds' | 'roundSeconds'>;
type Load = (server: Server, spec: Spec, expected?: number[]) => Promise<Figure>;
/** Measures the runs round by round in turn (measureInTurn). */
type InTurn = (runs: Array<{ server: Server; spec: Spec }>, expected?: number[]) => Promise<Figure[]>;

interface Amounts { currency: string; count: number; amount: number; weighted_amount: number }
interface Summary {
  stages: Array<{ stage_id: string; count: number; amounts: Amounts[] }>;
  totals: { count: number; amounts: Amounts[] };
}

/** The summary the seeded deals must give, computed from their fixtures, not from the stored totals. */
function expectedSummary(seeded: SeededDeals): Summary {
  const sums = (rows: Array<{ currency: string; amount: number; weighted: number }>): Amounts[] => {
    const by = new Map<string, { count: number; amount: number; weighted: number }>();
    for (const r of rows) {
      const a = by.get(r.currency) ?? { count: 0, amount: 0, weighted: 0 };
      by.set(r.currency, { count: a.count + 1, amount: a.amount + r.amount, weighted: a.weighted + r.weighted });
    }
    return [...by.entries()].sort(([x], [y]) => (x < y ? -1 : 1))
      .map(([currency, a]) => ({ currency, count: a.count, amount: a.amount, weighted_amount: Math.round(a.weighted / 100) }));
  };
  const perStage = seeded.stages.map(() => [] as Array<{ currency: string; amount: number; weighted: number }>);
  for (let i = 0; i < seeded.deals; i++) {
    const f = dealFields(i);
    const stage = i % seeded.stages.length;
    perStage[stage].push({ currency: f.currency, amount: f.amount, weighted: f.amount * (f.probability ?? Number(seeded.stages[stage].probability)) });
  }
  return {
    stages: seeded.stages.map((s, k) => ({ stage_id: s.id, count: perStage[k].length, amounts: sums(perStage[k]) })),
    totals: { count: seeded.deals, amounts: sums(perStage.flat()) },
  };
}

async function getJson<T>(server: Server, path: string, token: string): Promise<{ ms: number; json: T }> {
  const started = performance.now();
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  const json = await response.json() as T;
  return { ms: Math.round((performance.now() - started) * 100) / 100, json };
}

const latency = (xs: number[]): Latency => {
  const sorted = [...xs].sort((a, b) => a - b);
  return { p50: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1], samples: sorted.length };
};

/** `bareList` is baseline (e)'s server, whose `/deals` route is baseline (f); `createContact` is scenario 5's load. */
export async function dealScenarios(server: Server, token: string, seeded: SeededDeals, idsFile: string, load: Load, inTurn: InTurn, bareList: Server, createContact: Spec): Promise<DealResults> {
  const headers = { authorization: `Bearer ${token}` };
  const expected = expectedSummary(seeded);

  // 15. The first page of every stage, cold (its total counted), then the second page of each in
  // turn: pages reached by a cursor are never kept, so each request reads its page (keyset, on the
  // index by pipeline and stage) and takes the total counted for those filters since the last write.
  // Baseline (f) reads the same second pages: the deals below the last of each first page.
  const listPath = (stageId: string) => `/v1/deals?pipeline_id=${seeded.pipelineId}&stage_id=${stageId}&limit=50`;
  const cold: number[] = [];
  const second: string[] = [];
  const bareSecond: string[] = [];
  const totals: number[] = [];
  for (const [k, stage] of seeded.stages.entries()) {
    const first = await getJson<{ data: Array<{ id: string }>; next_cursor: string | null; pagination: { total: number } }>(server, listPath(stage.id), token);
    if (first.json.pagination.total !== expected.stages[k].count) throw new Error(`deals in stage ${stage.name}: total ${first.json.pagination.total}, expected ${expected.stages[k].count}`);
    if (!first.json.next_cursor) throw new Error(`deals in stage ${stage.name}: a single page`);
    cold.push(first.ms);
    totals.push(first.json.pagination.total);
    second.push(`${listPath(stage.id)}&cursor=${encodeURIComponent(first.json.next_cursor)}`);
    bareSecond.push(`/deals?pipeline_id=${seeded.pipelineId}&stage_id=${stage.id}&before=${first.json.data.at(-1)!.id}`);
  }
  const ids = async (on: Server, path: string) => (await getJson<{ data: Array<{ id: string }> }>(on, path, token)).json.data.map((d) => d.id).join();
  if (await ids(server, second[0]) !== await ids(bareList, bareSecond[0])) throw new Error('baseline (f) reads other deals than the second page of the service');
  const [list, bare, getOne] = await inTurn([
    { server, spec: { kind: 'rotate', path: second[0], paths: second, headers } },
    { server: bareList, spec: { kind: 'rotate', path: bareSecond[0], paths: bareSecond } },
    { server, spec: { kind: 'random-id', path: '/v1/contacts/', idsFile, headers } },
  ]);
  const cachedFirstPage = await load(server, { kind: 'fixed', path: listPath(seeded.stages[0].id), headers });

  // 16. The summary, checked against the seeded deals.
  const summaryPath = `/v1/deals/summary?pipeline_id=${seeded.pipelineId}`;
  const { json: { data: summary } } = await getJson<{ data: Summary }>(server, summaryPath, token);
  const got = JSON.stringify({ stages: summary.stages.map(({ stage_id, count, amounts }) => ({ stage_id, count, amounts })), totals: summary.totals });
  if (got !== JSON.stringify(expected)) throw new Error(`deals summary ${got}, expected ${JSON.stringify(expected)}`);
  const [s16, s16GetOne] = await inTurn([
    { server, spec: { kind: 'fixed', path: summaryPath, headers } },
    { server, spec: { kind: 'random-id', path: '/v1/contacts/', idsFile, headers } },
  ]);

  // 17. A deal and its three contacts; the create carries a fresh Idempotency-Key, as scenario 5's do.
  // In turn with scenario 5's creates, as 15 is with GET one: minutes apart, this machine's speed
  // has differed by more than the margin the target leaves.
  const [s17, creates] = await inTurn([
    { server, spec: { kind: 'deal-with-contacts', path: '/v1/deals', headers, idsFile, idempotency: true } },
    { server, spec: createContact },
  ], [201]);

  return {
    s15_deal_list_by_stage: { ...list, deals: seeded.deals, stages: seeded.stages.length, totals, coldMs: latency(cold), cachedFirstPage, bare, getOne },
    s16_deal_summary: { ...s16, deals: seeded.deals, getOne: s16GetOne },
    s17_deal_with_contacts: { ...s17, creates },
  };
}
