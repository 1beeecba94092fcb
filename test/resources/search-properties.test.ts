// Property tests of search: fast-check generates filter expressions (filters, OR-ed groups, full
// text, sorts and page sizes) over a fixed set of companies, and every answer of POST
// /v1/search/companies must equal a straightforward in-memory evaluation of the same request over
// the same records: the same records, the same exact total, and walked with cursors, the same order.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';

const RUNS = Number(process.env.SEARCH_PROPERTY_RUNS ?? 60);
const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000' } });
afterAll(() => app.close());

type Rec = Record<string, unknown> & { id: string };
type Filter = { field: string; operator: string; value?: unknown };
type Sort = { field: string; direction: 'asc' | 'desc' };

const NAMES = ['Acme', 'acme North', 'Beta Labs', 'Gamma-Ray Labs', 'Delta', 'Omega 9', 'ACME south'];
const INDUSTRIES = ['Software', 'software', 'Retail', '', null];
const COUNTRIES = ['GB', 'US', 'FR', null];
const DESCRIPTIONS = ['Builds rockets', 'sells software to banks', 'Rocket fuel & labs', null];
const TAGS = ['vip', 'q4', 'churn', 'new'];

let c: Client;
let records: Rec[] = [];

beforeAll(async () => {
  c = (await tenant(app, { sandbox: false })).live;
  expect((await c.post('/v1/fields', { object: 'companies', name: 'score', data_type: 'number' })).statusCode).toBe(201);
  const rng = fc.sample(fc.array(fc.nat(1000), { minLength: 9, maxLength: 9 }), { numRuns: 36, seed: 7 });
  for (const [i, r] of rng.entries()) {
    const body = {
      name: NAMES[r[0] % NAMES.length],
      domain: r[1] % 3 === 0 ? null : `d${i}.example`,
      industry: INDUSTRIES[r[2] % INDUSTRIES.length],
      country: COUNTRIES[r[3] % COUNTRIES.length],
      description: DESCRIPTIONS[r[4] % DESCRIPTIONS.length],
      employee_count: r[5] % 5 === 0 ? null : r[5] % 7,
      annual_revenue: r[6] % 4 === 0 ? null : (r[6] % 5) * 1000,
      tags: TAGS.filter((_, k) => (r[7] >> k) & 1),
      // A custom number with ties, unset on a quarter of the records.
      ...(r[8] % 4 === 0 ? {} : { custom_fields: { score: r[8] % 6 } }),
    };
    const res = await c.post('/v1/companies', body);
    expect(res.statusCode, res.body).toBe(201);
  }
  records = (await c.get('/v1/companies?limit=200')).json().data
    .map((r: Rec & { custom_fields: { score?: number } }) => ({ ...r, [SCORE]: r.custom_fields.score ?? null }));
});

// ---- the model: what a request means, evaluated in memory ----

const words = (s: string) => s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
const SEARCHED = ['name', 'domain', 'industry', 'description'];
const SCORE = 'custom_fields.score';
const TYPES: Record<string, 'text' | 'number' | 'tags'> = { name: 'text', domain: 'text', industry: 'text', country: 'text', description: 'text', employee_count: 'number', annual_revenue: 'number', created_at: 'number', tags: 'tags', [SCORE]: 'number' };

function holds(rec: Rec, f: Filter): boolean {
  const v = rec[f.field] as never;
  const val = f.value as never;
  const vals = f.value as unknown[];
  const empty = v === null || v === '' || (Array.isArray(v) && (v as unknown[]).length === 0);
  const lower = (x: unknown) => String(x).toLowerCase();
  switch (f.operator) {
    case 'eq': return v === val;
    case 'neq': return v !== val;
    case 'any_of': return TYPES[f.field] === 'tags' ? vals.some((x) => (v as unknown[]).includes(x)) : vals.includes(v);
    case 'none_of': return !holds(rec, { ...f, operator: 'any_of' });
    case 'all_of': return vals.every((x) => (v as unknown[]).includes(x));
    case 'contains': return v !== null && lower(v).includes(lower(val));
    case 'starts_with': return v !== null && lower(v).startsWith(lower(val));
    case 'is_empty': return empty;
    case 'is_not_empty': return !empty;
    case 'exists': return (f.value ?? true) ? v !== null : v === null;
    case 'between': return v !== null && (v as number) >= (vals[0] as number) && (v as number) <= (vals[1] as number);
    case 'gt': return v !== null && v > val;
    case 'gte': return v !== null && v >= val;
    case 'lt': return v !== null && v < val;
    case 'lte': return v !== null && v <= val;
  }
  throw new Error(f.operator);
}

function matches(rec: Rec, req: { filters: Filter[]; filter_groups?: Filter[][]; q?: string }): boolean {
  if (!req.filters.every((f) => holds(rec, f))) return false;
  if (req.filter_groups && !req.filter_groups.some((g) => g.every((f) => holds(rec, f)))) return false;
  if (req.q === undefined) return true;
  const recWords = SEARCHED.flatMap((name) => (rec[name] === null ? [] : words(String(rec[name]))));
  return words(req.q).every((w) => recWords.some((rw) => rw.startsWith(w)));
}

/** Sort keys in turn (text ignoring case, empty values last), then newest (largest id) first. */
function compare(sort: Sort[]) {
  return (a: Rec, b: Rec): number => {
    for (const s of sort) {
      const key = (r: Rec) => (r[s.field] === null ? null : TYPES[s.field] === 'text' ? String(r[s.field]).toLowerCase() : (r[s.field] as number));
      const [x, y] = [key(a), key(b)];
      if (x === y) continue;
      if (x === null) return 1;
      if (y === null) return -1;
      return (x < y ? -1 : 1) * (s.direction === 'asc' ? 1 : -1);
    }
    return a.id < b.id ? 1 : -1;
  };
}

// ---- the generators ----

const textValue = (field: string) => fc.constantFrom(...new Set([...records.map((r) => r[field] as string | null).filter((v) => v !== null), 'nothing like it']));
const numberValue = (field: string) => fc.oneof(fc.constantFrom(...records.map((r) => r[field] as number | null).filter((v) => v !== null)), fc.integer({ min: -1, max: 8000 }));
const fragment = fc.constantFrom('a', 'AC', 'labs', 'ray', 'soft', 'e', 'x', '9', ' ', '-');

function filterOf(field: string): fc.Arbitrary<Filter> {
  const op = (operator: string, value?: fc.Arbitrary<unknown>) => (value ? value.map((v) => ({ field, operator, value: v })) : fc.constant({ field, operator }));
  const presence = [op('is_empty'), op('is_not_empty'), op('exists'), op('exists', fc.boolean())];
  if (TYPES[field] === 'tags') {
    const some = fc.uniqueArray(fc.constantFrom(...TAGS, 'other'), { minLength: 1, maxLength: 3 });
    return fc.oneof(op('any_of', some), op('all_of', some), op('none_of', some), ...presence);
  }
  const value: fc.Arbitrary<unknown> = TYPES[field] === 'number' ? numberValue(field) : textValue(field);
  const several = fc.array(value, { minLength: 1, maxLength: 3 });
  const common = [op('eq', value), op('neq', value), op('any_of', several), op('none_of', several), ...presence];
  if (TYPES[field] === 'text') return fc.oneof(...common, op('contains', fragment), op('starts_with', fragment));
  const range = fc.tuple(value, value).map(([a, b]) => [Math.min(a as number, b as number), Math.max(a as number, b as number)]);
  return fc.oneof(...common, op('between', range), op('gt', value), op('gte', value), op('lt', value), op('lte', value));
}

const anyFilter = fc.constantFrom(...Object.keys(TYPES)).chain(filterOf);
const request = fc.record({
  filters: fc.array(anyFilter, { maxLength: 3 }),
  filter_groups: fc.option(fc.array(fc.array(anyFilter, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 3 }), { nil: undefined }),
  q: fc.option(fc.constantFrom('acme', 'ac', 'labs', 'gamma ray', 'soft', 'rocket', 'd1', 'example', 'build rock', 'zzz', 'Omega 9'), { nil: undefined }),
}, { requiredKeys: ['filters'] });
const sorts = fc.uniqueArray(fc.record({ field: fc.constantFrom('name', 'industry', 'country', 'employee_count', 'annual_revenue', 'created_at', SCORE), direction: fc.constantFrom('asc' as const, 'desc' as const) }), { maxLength: 3, selector: (s) => s.field });

const clean = <T extends object>(o: T) => JSON.parse(JSON.stringify(o)) as T;

describe('search agrees with an in-memory evaluation', () => {
  it('the same records and total for any filters, groups and words', async () => {
    await fc.assert(fc.asyncProperty(request, async (raw) => {
      const req = clean(raw);
      const res = await c.post('/v1/search/companies', { ...req, limit: 200 });
      expect(res.statusCode, res.body).toBe(200);
      const expected = records.filter((r) => matches(r, req)).sort(compare([])).map((r) => r.id);
      expect(res.json().data.map((r: Rec) => r.id)).toEqual(expected);
      expect(res.json().pagination.total).toBe(expected.length);
    }), { numRuns: RUNS });
  }, 120_000);

  it('the same order, page after page, for any sort and page size', async () => {
    await fc.assert(fc.asyncProperty(request, sorts, fc.integer({ min: 1, max: 9 }), async (raw, sort, limit) => {
      const req = clean(raw);
      const expected = records.filter((r) => matches(r, req)).sort(compare(sort)).map((r) => r.id);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 1; ; page++) {
        const res = await c.post('/v1/search/companies', { ...req, sort, limit, ...(cursor ? { cursor } : {}) });
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json();
        expect(body.pagination).toMatchObject({ page, total: expected.length });
        seen.push(...body.data.map((r: Rec) => r.id));
        if (!body.next_cursor) break;
        cursor = body.next_cursor;
      }
      expect(seen).toEqual(expected);
    }), { numRuns: Math.ceil(RUNS / 2) });
  }, 180_000);
});
