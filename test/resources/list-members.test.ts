// Lists of type companies hold companies as members: adding (idempotently), listing, removing, the
// exact member_count, the list_id filter on companies, and what deleting either side does.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';

const app = await testApp();
afterAll(() => app.close());

const post = async (c: Client, url: string, body: unknown, status = 201) => {
  const res = await c.post(url, body);
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
};
const company = async (c: Client, name: string) => (await post(c, '/v1/companies', { name })).data.id as string;
const list = async (c: Client, type: string) => (await post(c, '/v1/lists', { name: `A ${type} list`, type })).data.id as string;
const memberCount = async (c: Client, id: string) => (await c.get(`/v1/lists/${id}`)).json().data.member_count;

describe('list members', () => {
  it('adds companies once each, lists them newest first with an exact total, and filters companies by list', async () => {
    const t = await tenant(app);
    const [a, b, c] = [await company(t.live, 'A'), await company(t.live, 'B'), await company(t.live, 'C')];
    const accounts = await list(t.live, 'companies');
    expect((await post(t.live, `/v1/lists/${accounts}/members`, { ids: [a, b, a] })).data).toEqual({ added: 2, existing: 0, member_count: 2 });
    expect((await post(t.live, `/v1/lists/${accounts}/members`, { ids: [b, c] })).data).toEqual({ added: 1, existing: 1, member_count: 3 });
    expect(await memberCount(t.live, accounts)).toBe(3);

    const page = (await t.live.get(`/v1/lists/${accounts}/members?limit=2`)).json();
    expect(page.pagination).toMatchObject({ total: 3, has_next: true });
    expect(page.data.map((x: { id: string }) => x.id)).toEqual([c, b]);
    expect(page.data[0]).toEqual((await t.live.get(`/v1/companies/${c}`)).json().data);
    const rest = (await t.live.get(`/v1/lists/${accounts}/members?limit=2&cursor=${page.next_cursor}`)).json();
    expect(rest.data.map((x: { id: string }) => x.id)).toEqual([a]);

    const filtered = (await t.live.get(`/v1/companies?list_id=${accounts}`)).json();
    expect(filtered.data.map((x: { id: string }) => x.id).sort()).toEqual([a, b, c].sort());
    expect(filtered.pagination.total).toBe(3);

    const removed = await t.live.delete(`/v1/lists/${accounts}/members/${b}`);
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toEqual({ data: { id: b, deleted: true } });
    expect((await t.live.delete(`/v1/lists/${accounts}/members/${b}`)).json()).toEqual({ type: 'not_found', detail: 'Member not found' });
    expect(await memberCount(t.live, accounts)).toBe(2);
    expect((await t.live.get(`/v1/companies/${b}`)).statusCode).toBe(200);

    const events = (await t.live.get('/v1/events?limit=200')).json().data.map((e: { type: string }) => e.type);
    expect(events.filter((x: string) => x === 'list.members_added')).toHaveLength(2);
    expect(events).toContain('list.member_removed');
  });

  it('refuses unknown ids without adding any, other list types, and other tenants\' records', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const mine = await company(t.live, 'Mine');
    const theirs = await company(other.live, 'Theirs');
    const accounts = await list(t.live, 'companies');
    const refused = await post(t.live, `/v1/lists/${accounts}/members`, { ids: [mine, theirs] }, 404);
    expect(refused.detail).toContain(theirs);
    expect(await memberCount(t.live, accounts)).toBe(0);
    expect((await post(t.live, `/v1/lists/${await list(t.live, 'contacts')}/members`, { ids: [mine] }, 400)).detail).toMatch(/do not hold members/);
    expect((await post(t.live, `/v1/lists/${await list(t.live, 'suppressions')}/members`, { ids: [mine] }, 400)).detail).toMatch(/do not hold members/);
    expect((await other.live.get(`/v1/lists/${accounts}/members`)).statusCode).toBe(404);
    expect((await t.test.get(`/v1/companies?list_id=${accounts}`)).json().pagination.total).toBe(0);
  });

  it('drops a deleted company from its lists, and needs cascade to delete a list with members', async () => {
    const t = await tenant(app);
    const [a, b] = [await company(t.live, 'A'), await company(t.live, 'B')];
    const first = await list(t.live, 'companies');
    const second = await list(t.live, 'companies');
    await post(t.live, `/v1/lists/${first}/members`, { ids: [a, b] });
    await post(t.live, `/v1/lists/${second}/members`, { ids: [a] });
    expect((await t.live.delete(`/v1/companies/${a}`)).statusCode).toBe(200);
    expect(await memberCount(t.live, first)).toBe(1);
    expect(await memberCount(t.live, second)).toBe(0);
    expect((await t.live.get(`/v1/lists/${first}/members`)).json().data.map((x: { id: string }) => x.id)).toEqual([b]);

    expect((await t.live.delete(`/v1/lists/${first}`)).statusCode).toBe(409);
    expect((await t.live.delete(`/v1/lists/${first}?cascade=true`)).statusCode).toBe(200);
    expect((await t.live.get(`/v1/companies/${b}`)).statusCode).toBe(200);
    expect((await t.live.get(`/v1/companies?list_id=${first}`)).json().pagination.total).toBe(0);
  });
});
