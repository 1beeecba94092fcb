// Search over real custom fields: definitions made through /v1/fields, values written with records,
// found by `custom_fields.<name>` filters and sorts of POST /v1/search/contacts.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp } from '../helpers/app.ts';

const app = await testApp();
afterAll(() => app.close());

describe('search by custom fields defined through the API', () => {
  it('filters and sorts contacts by their custom field values', async () => {
    const t = await tenant(app);
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
});
