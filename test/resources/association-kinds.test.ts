// A definition associates its records with the kinds it names, and only those: memos, associated with
// deals alone, have `associations.deal_ids`, the `deal_id` filter and the routes under a deal, and
// none of the contacts' or companies'. The registry has no such group, so the test builds one through
// the kernel (on the notes table) in an app of its own.
import { afterAll, describe, expect, it } from 'vitest';
import { defineResource, linkResources } from '../../src/platform/resource/define.ts';
import { boolean, text } from '../../src/platform/resource/fields.ts';
import { crudRoutes } from '../../src/platform/resource/routes.ts';
import { resources } from '../../src/resources/registry.ts';
import { client, newOrg, testApp } from '../helpers/app.ts';
import { fails, ok, records, type Json } from '../helpers/records.ts';

const memos = defineResource({
  name: 'memo', plural: 'memos', prefix: 'mem', table: 'notes', notFound: 'Memo not found',
  tag: 'Memos', tagDescription: 'Short notes on deals',
  fields: {
    content: text({ required: true, min: 1, max: 1000, description: 'The memo', example: 'Send pricing on Monday' }),
    pinned: boolean({ nullable: false, default: false, description: 'Shown first', example: false }),
  },
  associations: ['deals'],
});
linkResources([...resources, memos]);

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' }, routes: [crudRoutes(memos)] });
afterAll(() => app.close());

async function tenant() {
  const org = await newOrg(app);
  return client(app, org.live_token);
}

describe('a resource associated with deals only', () => {
  it('documents the deal kind alone: its member, its filter and the routes under a deal', async () => {
    const document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const paths = Object.keys(document.paths);
    expect(paths).toEqual(expect.arrayContaining(['/v1/memos', '/v1/deals/{id}/memos']));
    expect(paths.filter((p) => /^\/v1\/(contacts|companies)\/\{id\}\/memos$/.test(p))).toEqual([]);
    // Tasks keep every kind.
    expect(paths).toEqual(expect.arrayContaining(['/v1/contacts/{id}/tasks', '/v1/companies/{id}/tasks', '/v1/deals/{id}/tasks']));
    const filters = document.paths['/v1/memos'].get.parameters.map((p: Json) => p.name);
    expect(filters).toContain('deal_id');
    expect(filters).not.toContain('contact_id');
    expect(filters).not.toContain('company_id');
  });

  it('writes, answers, filters and lists the deal associations, and refuses the other kinds', async () => {
    const c = await tenant();
    const { contact, company, deal } = await records(c);
    const memo = await ok(c.post('/v1/memos', { content: 'Pricing', associations: { deal_ids: [deal.id] } }), 201);
    expect(memo.associations).toEqual({ deal_ids: [deal.id] });
    expect(await ok(c.get(`/v1/memos/${memo.id}`))).toEqual(memo);
    await fails(c.post('/v1/memos', { content: 'X', associations: { contact_ids: [contact.id] } }), 422);
    await fails(c.patch(`/v1/memos/${memo.id}`, { associations: { company_ids: [company.id] } }), 422);
    await fails(c.post('/v1/memos', { content: 'X', associations: { deal_ids: ['dea_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] } }), 404, 'Deal not found');

    expect((await c.get(`/v1/memos?deal_id=${deal.id}`)).json().pagination.total).toBe(1);
    await fails(c.get(`/v1/memos?contact_id=${contact.id}`), 422);

    const under = await ok(c.post(`/v1/deals/${deal.id}/memos`, { content: 'Under the deal' }), 201);
    expect(under.associations).toEqual({ deal_ids: [deal.id] });
    const page = (await c.get(`/v1/deals/${deal.id}/memos`)).json();
    expect(page.pagination.total).toBe(2);
    expect(page.data.map((m: Json) => m.id)).toEqual([under.id, memo.id]);
    await fails(c.get('/v1/deals/dea_01JD8X4M6R2T9Q3V5W7Y8Z0A1B/memos'), 404, 'Deal not found');
    for (const [method, url] of [['GET', `/v1/contacts/${contact.id}/memos`], ['POST', `/v1/companies/${company.id}/memos`]] as const) {
      const res = await c(method, url, method === 'POST' ? { content: 'X' } : undefined);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().detail).toBe('Not Found');
    }

    // A deleted deal leaves the memos, without their association to it.
    await ok(c.delete(`/v1/deals/${deal.id}`));
    expect((await ok(c.get(`/v1/memos/${memo.id}`))).associations).toEqual({ deal_ids: [] });
  });
});
