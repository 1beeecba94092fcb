// Scenarios 13 and 14: search of the large organization's contacts through POST /v1/search/contacts.
// 13: three filters and full text (`q`), with its exact total, under load. 14: a search sorted by a
// custom field, its second page (the first one a cursor reaches) against a page deep in the same order (page
// 1,000 of 50, or the deepest the data has), timed one request at a time, in turn.
import { contactFields } from './fixtures.ts';
import type { LoadSpec } from './load.ts';
import type { Server } from './processes.ts';
import { measureInTurn, type Figure } from './scenarios.ts';

export interface SearchResults {
  s13_search_filtered: Figure & { total: number; coldMs: number };
  /** Latency of single requests (one connection), taken in turn: page 2 and the deep page. */
  s14_search_sorted: { page2: Latency; deep: Latency; deepPage: number; total: number };
}

export interface Latency {
  p50: number;
  max: number;
  samples: number;
}

type Spec = Omit<LoadSpec, 'url' | 'connections' | 'warmupSeconds' | 'rounds' | 'roundSeconds'>;

/** Filters and words that hold for contact i exactly when i is a multiple of 240 (see fixtures.ts). */
export const FILTERED = {
  q: 'ada',
  filters: [
    { field: 'country', operator: 'eq', value: 'GB' },
    { field: 'department', operator: 'eq', value: 'engineering' },
    { field: 'tags', operator: 'any_of', value: ['vip'] },
  ],
};
/** Sorted by the `score` custom field every contact of the large organization carries (see seed.ts). */
const SORTED = { sort: [{ field: 'custom_fields.score', direction: 'asc' }] };
const PAGE = 50;

async function post(server: Server, token: string, body: object): Promise<{ ms: number; json: { data: unknown[]; next_cursor: string | null; pagination: { total: number } } }> {
  const started = performance.now();
  const response = await fetch(`${server.url}/v1/search/contacts`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status !== 200) throw new Error(`search: ${response.status} ${await response.text()}`);
  const json = await response.json() as never;
  return { ms: Math.round((performance.now() - started) * 100) / 100, json };
}

const latency = (xs: number[]): Latency => {
  const sorted = [...xs].sort((a, b) => a - b);
  return { p50: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1], samples: sorted.length };
};

export async function searchScenarios(server: Server, token: string, contacts: number, specFor: (server: Server, spec: Spec) => LoadSpec, samples: number): Promise<SearchResults> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const fixed = (body: object): Spec => ({ kind: 'fixed', method: 'POST', path: '/v1/search/contacts', headers, body: JSON.stringify({ ...body, limit: PAGE }) });

  const cold = await post(server, token, { ...FILTERED, limit: PAGE });
  const expected = Math.ceil(contacts / 240);
  if (cold.json.pagination.total !== expected || contactFields(0).first_name !== 'Ada') throw new Error(`search total ${cold.json.pagination.total}, expected ${expected}`);
  const [s13] = await measureInTurn([{ server, spec: specFor(server, fixed(FILTERED)) }], [200]);

  // The cursor after row (deepPage - 1) × 50 of the sorted search, reached in pages of 200 (the
  // cursor does not depend on the page size).
  const deepPage = Math.max(2, Math.min(1000, Math.floor((contacts - 1) / PAGE)));
  let cursor: string | null = null;
  for (let walked = 0; walked < (deepPage - 1) * PAGE; walked += 200) {
    const body: object = { ...SORTED, limit: Math.min(200, (deepPage - 1) * PAGE - walked), ...(cursor ? { cursor } : {}) };
    cursor = (await post(server, token, body)).json.next_cursor;
    if (!cursor) throw new Error('sorted search ended before the deep page');
  }
  // Page 2, the first page reached by a cursor, stands for page 1: first pages are kept in the list
  // cache until the next write, cursor pages never are, so only these two compare the same work.
  // Each costs a sort of the matching rows when no index serves the sort, so they are timed one
  // request at a time, in turn, rather than under load.
  const second = (await post(server, token, { ...SORTED, limit: PAGE })).json.next_cursor;
  const times = { page2: [] as number[], deep: [] as number[] };
  for (let i = 0; i < samples; i++) {
    times.page2.push((await post(server, token, { ...SORTED, limit: PAGE, cursor: second })).ms);
    times.deep.push((await post(server, token, { ...SORTED, limit: PAGE, cursor })).ms);
  }
  return {
    s13_search_filtered: { ...s13, total: cold.json.pagination.total, coldMs: cold.ms },
    s14_search_sorted: { page2: latency(times.page2), deep: latency(times.deep), deepPage, total: contacts },
  };
}
