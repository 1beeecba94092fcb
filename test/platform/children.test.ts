// The kernel's children (platform/resource/children.ts) in a definition of the test's own, built in
// an app of its own: the people of a deal, on the deal contacts' table, keyed by a plain id (no `ref`,
// so answers carry no contact) and patchable, which no group of the registry declares yet.
import { afterAll, describe, expect, it } from 'vitest';
import { childRoutes } from '../../src/platform/resource/children-routes.ts';
import { defineChildren } from '../../src/platform/resource/children.ts';
import { text } from '../../src/platform/resource/fields.ts';
import { Str } from '../../src/platform/schemas.ts';
import { deals } from '../../src/resources/deals/deals.resource.ts';
import { client, newOrg, testApp, type Client } from '../helpers/app.ts';
import { fails, ok, type Json } from '../helpers/records.ts';

const people = defineChildren({
  parent: deals, name: 'contact', path: 'people', table: 'deal_contacts', parentColumn: 'deal_id',
  key: { column: 'contact_id', schema: Str({ description: 'Identifier of the person', maxLength: 64, examples: ['con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }) },
  fields: { role: text({ max: 100, description: 'The person\'s role', example: 'Buyer' }) },
  write: 'put', patch: true,
  notFound: 'Person is not on this deal',
  members: { event: 'contact_link', removed: 'id', removedEvent: 'contact_id' },
  description: 'A person on a deal',
  timestamps: { created: 'When the person was put on the deal', updated: 'When the role last changed' },
});

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' }, routes: [childRoutes(people)] });
afterAll(() => app.close());

const updates = async (c: Client) => (await c.get('/v1/events?type=deal.contact_updated&limit=200')).json().data as Json[];

describe('children declared patchable', () => {
  it('change the fields given of a child the parent has, record what changed, and refuse the rest', async () => {
    const org = await newOrg(app);
    const c = client(app, org.live_token);
    const deal = await ok(c.post('/v1/deals', { name: 'D' }), 201);
    const person = 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B';
    const put = await ok(c('PUT', `/v1/deals/${deal.id}/people/${person}`, { role: 'Champion' }));
    expect(put).toEqual({ deal_id: deal.id, contact_id: person, role: 'Champion', created_at: expect.any(Number), updated_at: expect.any(Number) });

    const patched = await ok(c.patch(`/v1/deals/${deal.id}/people/${person}`, { role: 'Buyer' }));
    expect(patched).toEqual({ ...put, role: 'Buyer', updated_at: expect.any(Number) });
    const [event] = await updates(c);
    expect(event.data.object).toMatchObject({ id: deal.id, contact_link: { contact_id: person, role: 'Buyer' } });
    expect(event.previous_attributes).toEqual({ role: 'Champion' });
    // The same role again writes nothing and records nothing.
    expect(await ok(c.patch(`/v1/deals/${deal.id}/people/${person}`, { role: 'Buyer' }))).toEqual(patched);
    expect(await updates(c)).toHaveLength(1);
    expect((await ok(c.patch(`/v1/deals/${deal.id}/people/${person}`, { role: null }))).role).toBeNull();

    await fails(c.patch(`/v1/deals/${deal.id}/people/${person}`, {}), 400, 'No fields to update');
    await fails(c.patch(`/v1/deals/${deal.id}/people/${person}`, { role: 'x'.repeat(101) }), 422);
    await fails(c.patch(`/v1/deals/${deal.id}/people/${person}`, { contact_id: 'con_other' }), 422);
    await fails(c.patch(`/v1/deals/${deal.id}/people/con_absent`, { role: 'Buyer' }), 404, 'Person is not on this deal');
    await fails(c.patch(`/v1/deals/dea_01JD8X4M6R2T9Q3V5W7Y8Z0A1B/people/${person}`, { role: 'Buyer' }), 404, 'Deal not found');
    await fails(client(app, org.test_token).patch(`/v1/deals/${deal.id}/people/${person}`, { role: 'Buyer' }), 404, 'Deal not found');
    expect((await c.get(`/v1/deals/${deal.id}/people`)).json().data).toEqual([{ ...patched, role: null, updated_at: expect.any(Number) }]);
  });
});
