// Search over real custom fields: definitions made through /v1/fields, values written with records,
// found by `custom_fields.<name>` filters and sorts of POST /v1/search/contacts.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp } from '../helpers/app.ts';

const app = await testApp();
afterAll(() => app.close());

describe('search by custom fields defined through the API', () => {
  it('filters and sorts contacts by their custom field values', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = (await t.live.post('/v1/lists', { name: 'People', type: 'contacts' })).json().data.id;
    expect((await t.live.post('/v1/fields', { object: 'contacts', name: 'seats', data_type: 'number' })).statusCode).toBe(201);
    expect((await t.live.post('/v1/fields', { object: 'contacts', name: 'plan', data_type: 'enum', options: { values: ['free', 'pro'] } })).statusCode).toBe(201);
    const made: Record<string, string> = {};
    for (const [name, seats, plan] of [['a', 5, 'pro'], ['b', 50, 'pro'], ['c', 20, 'free'], ['d', 100, 'pro']] as const) {
      const res = await t.live.post('/v1/contacts', { list_id: list, name, custom_fields: { seats, plan } });
      expect(res.statusCode, res.body).toBe(201);
      made[name] = res.json().data.id;
    }
    const search = (body: object) => t.live.post('/v1/search/contacts', body);
    const res = await search({ filters: [{ field: 'custom_fields.plan', operator: 'eq', value: 'pro' }, { field: 'custom_fields.seats', operator: 'gte', value: 10 }], sort: [{ field: 'custom_fields.seats', direction: 'desc' }] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.map((c: { id: string }) => c.id)).toEqual([made.d, made.b]);
    expect(res.json().pagination.total).toBe(2);
    const unknown = await search({ filters: [{ field: 'custom_fields.nope', operator: 'eq', value: 1 }] });
    expect(unknown.statusCode).toBe(400);
  });

  it('walks a sort by one custom number field in the order of its values, past many value rows, then the records without one', async () => {
    const t = await tenant(app, { sandbox: false });
    expect((await t.live.post('/v1/fields', { object: 'companies', name: 'rank', data_type: 'number' })).statusCode).toBe(201);
    // 500 companies: ranks with many ties, none on every tenth, and one in twenty-five in FR.
    const made: Array<{ id: string; rank: number | null; fr: boolean }> = [];
    for (let batch = 0; batch < 5; batch++) {
      const records = Array.from({ length: 100 }, (_, j) => {
        const i = batch * 100 + j;
        return { name: `Ranked ${i}`, domain: `ranked${i}.example`, country: i % 25 === 0 ? 'FR' : 'GB', ...(i % 10 === 0 ? {} : { custom_fields: { rank: i % 37 } }) };
      });
      const res = await t.live('PUT', '/v1/companies/assert/batch', { records });
      expect(res.statusCode, res.body).toBe(200);
      for (const r of res.json().data.results) made.push({ id: r.id, rank: records[r.index].custom_fields?.rank ?? null, fr: records[r.index].country === 'FR' });
    }
    const order = (direction: 'asc' | 'desc') => (a: (typeof made)[number], b: (typeof made)[number]) =>
      a.rank === b.rank ? (a.id < b.id ? 1 : -1) : a.rank === null ? 1 : b.rank === null ? -1 : (a.rank - b.rank) * (direction === 'asc' ? 1 : -1);
    const walk = async (body: object, limit: number) => {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await t.live.post('/v1/search/companies', { ...body, limit, ...(cursor ? { cursor } : {}) });
        expect(res.statusCode, res.body).toBe(200);
        ids.push(...res.json().data.map((c: { id: string }) => c.id));
        cursor = res.json().next_cursor;
      } while (cursor);
      return ids;
    };
    for (const direction of ['asc', 'desc'] as const) {
      const sort = [{ field: 'custom_fields.rank', direction }];
      expect(await walk({ sort }, 70)).toEqual([...made].sort(order(direction)).map((c) => c.id));
      // A filter that keeps one candidate in twenty-five: several reads of value rows per page.
      const fr = { sort, filters: [{ field: 'country', operator: 'eq', value: 'FR' }] };
      expect(await walk(fr, 7)).toEqual(made.filter((c) => c.fr).sort(order(direction)).map((c) => c.id));
    }
  });
});
