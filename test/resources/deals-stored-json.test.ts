// Deals keep their answer as JSON text (`storedJson`): every create and update writes it, every
// other change to deals clears it, a page joins the texts and presents the deals without one, and the
// job writes the cleared texts again. Checked through HTTP: after each kind of change, every deal of
// a page is byte for byte what GET /v1/deals/{id} answers, on numbered and cursor pages alike.
import { afterAll, describe, expect, it } from 'vitest';
import { JOB_KINDS } from '../../src/resources/job-kinds.ts';
import { tenant, testApp, type Client } from '../helpers/app.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' } });
afterAll(() => app.close());

const ok = async (res: Promise<{ statusCode: number; body: string; json: () => Json }>, status = 200) => {
  const r = await res;
  expect(r.statusCode, r.body).toBe(status);
  return r.json().data;
};
const job = JOB_KINDS.find((k) => k.name === 'maintenance.write_stored_json')!;
const writeTexts = () => job.run({} as never, { database: app.services.database, log: app.log } as never);

/** The stored texts of the tenant's deals (the organization's live mode), by id. */
async function stored(orgId: string): Promise<Map<string, string | null>> {
  const rows = await app.services.database.db.selectFrom('deals').select(['id', 'doc']).where('org_id', '=', orgId).where('mode', '=', 'live').execute();
  return new Map(rows.map((r) => [r.id, r.doc ?? null]));
}

/** The record texts of a list answer, as its body holds them (`{"data":[…],…}`). */
const itemsOf = (body: string) => (JSON.parse(body).data as Json[]).map((d) => JSON.stringify(d));

/**
 * Every deal of the tenant, read page by page (numbered, then by cursor, with the stage filter of
 * the first deal's stage), is what GET one answers, key for key; returns the GET one texts by id.
 */
async function pagesMatchGetOne(c: Client): Promise<Map<string, string>> {
  const one = new Map<string, string>();
  const check = async (url: string) => {
    const res = await c.get(url);
    expect(res.statusCode, res.body).toBe(200);
    for (const item of itemsOf(res.body)) {
      const id = JSON.parse(item).id as string;
      if (!one.has(id)) {
        const got = await c.get(`/v1/deals/${id}`);
        one.set(id, got.body.slice('{"data":'.length, -1));
      }
      expect(item).toBe(JSON.stringify(JSON.parse(one.get(id)!)));
    }
    return JSON.parse(res.body) as Json;
  };
  const first = await check('/v1/deals?limit=2');
  let cursor = first.next_cursor as string | null;
  while (cursor) cursor = (await check(`/v1/deals?limit=2&cursor=${encodeURIComponent(cursor)}`)).next_cursor;
  await check('/v1/deals?page=2&limit=2');
  if (first.data.length > 0) await check(`/v1/deals?stage_id=${first.data[0].stage_id}`);
  expect(one.size).toBe(first.pagination.total);
  return one;
}

/** The texts stored are what GET one answers, key for key, for every deal that has one; how many have none. */
async function storedMatch(c: Client, orgId: string): Promise<number> {
  const one = await pagesMatchGetOne(c);
  let missing = 0;
  for (const [id, doc] of await stored(orgId)) {
    if (doc === null) missing++;
    else {
      // The same text, but for characters beyond ASCII, written as their JSON escapes.
      expect(doc).toMatch(/^[\x20-\x7e]*$/);
      expect(JSON.stringify(JSON.parse(doc))).toBe(JSON.stringify(JSON.parse(one.get(id)!)));
    }
  }
  return missing;
}

describe('stored deal texts', () => {
  it('are written by creates and updates, exactly as GET one answers', async () => {
    const t = await tenant(app, { sandbox: false });
    await ok(t.live.post('/v1/fields', { object: 'deals', name: 'region', data_type: 'text' }), 201);
    await ok(t.live.post('/v1/fields', { object: 'deals', name: 'crm_id', data_type: 'text', unique: true }), 201);
    const company = await ok(t.live.post('/v1/companies', { name: 'Acme' }), 201);
    const list = await ok(t.live.post('/v1/lists', { name: 'People', type: 'contacts' }), 201);
    const contact = await ok(t.live.post('/v1/contacts', { work_email: 'ada@example.com', list_id: list.id }), 201);
    const a = await ok(t.live.post('/v1/deals', { name: 'Ünïcode – “quoted” \\ deal', amount: 120_000, currency: 'eur', company_id: company.id, tags: ['x'], custom_fields: { region: 'emea' }, contacts: [{ contact_id: contact.id }] }), 201);
    await ok(t.live.post('/v1/deals', { name: 'Own probability', amount: 5_000, probability: 35 }), 201);
    await ok(t.live.post('/v1/deals', { name: 'Third' }), 201);
    expect(await storedMatch(t.live, t.org_id)).toBe(0);
    const stages = (await ok(t.live.get('/v1/deals/pipelines')))[0].stages as Json[];
    await ok(t.live.patch(`/v1/deals/${a.id}`, { name: 'Renamed', stage_id: stages.at(-2)!.id, custom_fields: { region: null } }));
    await ok(t.live.patch(`/v1/deals/${a.id}`, { stage_id: stages[1].id, probability: 80 }));
    // Assert goes through the same write path, creating and updating.
    const asserted = await ok(t.live('PUT', '/v1/deals/assert?match=crm_id', { name: 'Asserted', custom_fields: { crm_id: 'D1' } }), 201);
    await ok(t.live('PUT', '/v1/deals/assert?match=crm_id', { name: 'Asserted again', amount: 7, custom_fields: { crm_id: 'D1' } }));
    expect((await stored(t.org_id)).get(asserted.id)).toContain('"name":"Asserted again"');
    expect(await storedMatch(t.live, t.org_id)).toBe(0);
    expect((await stored(t.org_id)).get(a.id)).toContain('"name":"Renamed"');
  });

  it('are cleared by changes made outside a deal\'s own write, and pages still answer them right', async () => {
    const t = await tenant(app, { sandbox: false });
    const org = t.org_id;
    const field = await ok(t.live.post('/v1/fields', { object: 'deals', name: 'region', data_type: 'text' }), 201);
    const company = await ok(t.live.post('/v1/companies', { name: 'Gone soon' }), 201);
    const p = await ok(t.live.post('/v1/deals/pipelines', { name: 'Moves', stages: [{ name: 'A', probability: 10 }, { name: 'B', probability: 40 }, { name: 'C', probability: 60 }] }), 201);
    const [a, b, c] = p.stages.map((s: Json) => s.id as string);
    const following = await ok(t.live.post('/v1/deals', { name: 'Follows A', stage_id: a, amount: 1000, company_id: company.id, custom_fields: { region: 'emea' } }), 201);
    const own = await ok(t.live.post('/v1/deals', { name: 'Own in A', stage_id: a, amount: 1000, probability: 5 }), 201);
    const inB = await ok(t.live.post('/v1/deals', { name: 'In B', stage_id: b, amount: 2000 }), 201);
    expect(await storedMatch(t.live, org)).toBe(0);

    // A stage's probability: the deals that follow it answer the new one.
    await ok(t.live.patch(`/v1/deals/pipelines/${p.id}/stages/${a}`, { probability: 25 }));
    const one = await pagesMatchGetOne(t.live);
    expect(JSON.parse(one.get(following.id)!)).toMatchObject({ probability: 25, weighted_amount: 250 });
    expect(JSON.parse(one.get(own.id)!)).toMatchObject({ probability: 5 });
    expect((await stored(org)).get(own.id)).not.toBeNull();

    // A stage's type: its deals take the status.
    await ok(t.live.patch(`/v1/deals/pipelines/${p.id}/stages/${b}`, { stage_type: 'won' }));
    expect(JSON.parse((await pagesMatchGetOne(t.live)).get(inB.id)!)).toMatchObject({ status: 'won' });

    // A deleted stage's deals move.
    await ok(t.live.delete(`/v1/deals/pipelines/${p.id}/stages/${a}?move_to=${c}`));
    const moved = await pagesMatchGetOne(t.live);
    expect(JSON.parse(moved.get(following.id)!)).toMatchObject({ stage_id: c, probability: 60 });
    expect(JSON.parse(moved.get(own.id)!)).toMatchObject({ stage_id: c, probability: 5 });

    // A deleted company and a deleted custom field leave the deals.
    await ok(t.live.delete(`/v1/companies/${company.id}`));
    await ok(t.live.delete(`/v1/fields/${field.id}`));
    const left = JSON.parse((await pagesMatchGetOne(t.live)).get(following.id)!);
    expect(left).toMatchObject({ company_id: null, custom_fields: {} });

    // The job writes the cleared texts again, each as GET one answers it.
    await writeTexts();
    expect(await storedMatch(t.live, org)).toBe(0);
    expect([...(await stored(org)).values()].every((doc) => doc !== null)).toBe(true);
  });

  it('written again by the job are those of the tenant\'s records only', async () => {
    const t = await tenant(app, { sandbox: false });
    const other = await tenant(app, { sandbox: false });
    await ok(t.live.post('/v1/deals', { name: 'Mine' }), 201);
    await ok(other.live.post('/v1/deals', { name: 'Theirs' }), 201);
    const stage = (await ok(t.live.get('/v1/deals/pipelines')))[0].stages[0].id;
    await ok(t.live.patch(`/v1/deals/pipelines/${(await ok(t.live.get('/v1/deals/pipelines')))[0].id}/stages/${stage}`, { probability: 15 }));
    const before = await stored(other.org_id);
    await writeTexts();
    expect(await stored(other.org_id)).toEqual(before);
    expect(await storedMatch(t.live, t.org_id)).toBe(0);
    const [deal] = itemsOf((await t.live.get('/v1/deals')).body).map((x) => JSON.parse(x));
    expect(deal).toMatchObject({ name: 'Mine', probability: 15 });
  });
});
