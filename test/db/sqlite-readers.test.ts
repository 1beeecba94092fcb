// SQLite reads on reader threads, over real sockets: a slow list over a million contacts does not
// hold a concurrent GET, as it does when every read runs on the event loop (SQLITE_READERS=0, the
// control that shows the measure can fail); a cheap page that walks one index runs on the
// connection, so it is answered while every thread is busy, and a page whose index does not hold
// its conditions never does, however cheap its earlier runs; and a client reads its own writes at once.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPostgres, newOrg, testApp } from '../helpers/app.ts';

const CONTACTS = 1_000_000;
const DEALS = 300_000;
const SEEDED_AMOUNT = 10_000_000_000;

describe.skipIf(isPostgres())('SQLite reader threads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rds-readers-'));
  const url = `sqlite:${join(dir, 'store.db')}`;
  const env = { DATABASE_URL: url, RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' };
  let threaded: FastifyInstance;
  let single: FastifyInstance;
  let token: string;
  let listId: string;
  let probeId: string;

  const base = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  async function get(app: FastifyInstance, path: string) {
    const started = performance.now();
    const response = await fetch(`${base(app)}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const body = await response.json() as Record<string, unknown>;
    return { status: response.status, body, ms: performance.now() - started };
  }

  /**
   * Slow lists (by default one reading every contact of the tenant: no contact carries its tag), and
   * the time of each GET of `probePath` sent one at a time (after some to warm up: a page runs on the
   * connection once its recent runs have proved cheap) for as long as every list runs. Each probe
   * answers what the first did.
   */
  async function scanWhileProbing(app: FastifyInstance, scans = ['/v1/contacts?tag=nobody&limit=50'], probePath = `/v1/contacts/${probeId}`) {
    const probed = await get(app, probePath);
    expect(probed.status).toBe(200);
    for (let i = 0; i < 20; i++) expect((await get(app, probePath)).body).toEqual(probed.body);
    let running = scans.length;
    const slow = scans.map((scan) => get(app, scan).finally(() => { running--; }));
    const probes: number[] = [];
    while (running === scans.length) {
      const probe = await get(app, probePath);
      expect(probe.body).toEqual(probed.body);
      probes.push(probe.ms);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const answers = await Promise.all(slow);
    for (const answer of answers) expect(answer.status).toBe(200);
    return { answer: answers[0], answers, probes, probed };
  }

  beforeAll(async () => {
    threaded = await testApp({ env: { ...env, SQLITE_READERS: '2' } });
    const org = await newOrg(threaded);
    token = org.test_token;
    await threaded.listen({ port: 0, host: '127.0.0.1' });
    const created = await fetch(`${base(threaded)}/v1/lists`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Everyone', type: 'contacts' }),
    });
    listId = ((await created.json()) as { data: { id: string } }).data.id;
    const probe = await fetch(`${base(threaded)}/v1/contacts`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ list_id: listId, name: 'Probe' }),
    });
    probeId = ((await probe.json()) as { data: { id: string } }).data.id;
    // A million contacts written straight into the store: setting the scene, not what is tested.
    await threaded.services.database.db.transaction().execute(async (tx) => {
      await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${CONTACTS})
        insert into contacts (org_id, mode, id, list_id, name, title, tags, created_at, updated_at)
        select ${org.org_id}, 'test', printf('con_seed%08d', i), ${listId}, 'Person ' || i, 'Engineer ' || (i % 1000), '["seeded"]', 1700000000 + i, 1700000000 + i from n`.execute(tx);
    });
    // And 300,000 deals, deal i of amount 10^10 + i, above any sandbox deal's (no index holds `amount`).
    const pipelines = await fetch(`${base(threaded)}/v1/deals/pipelines`, { headers: { authorization: `Bearer ${token}` } });
    const pipeline = ((await pipelines.json()) as { data: Array<{ id: string; stages: Array<{ id: string }> }> }).data[0];
    await threaded.services.database.db.transaction().execute(async (tx) => {
      await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${DEALS})
        insert into deals (org_id, mode, id, name, amount, currency, pipeline_id, stage_id, status, tags, created_at, updated_at)
        select ${org.org_id}, 'test', printf('dea_seed%08d', i), 'Deal ' || i, ${SEEDED_AMOUNT} + i, 'USD', ${pipeline.id}, ${pipeline.stages[0].id}, 'open', '[]', 1700000000 + i, 1700000000 + i from n`.execute(tx);
    });
    single = await testApp({ env: { ...env, SQLITE_READERS: '0' } });
    await single.listen({ port: 0, host: '127.0.0.1' });
  }, 120_000);

  afterAll(async () => {
    await threaded?.close();
    await single?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a GET within 25 ms while a list scans a million contacts', async () => {
    const { answer, probes } = await scanWhileProbing(threaded);
    expect(answer.body.pagination).toMatchObject({ total: 0 });
    expect(answer.ms).toBeGreaterThan(150);
    expect(probes.length).toBeGreaterThanOrEqual(5);
    const sorted = [...probes].sort((a, b) => a - b);
    // The 90th percentile: one probe may meet a garbage collection of the busy process.
    expect(sorted[Math.floor(sorted.length * 0.9)]).toBeLessThan(25);
  }, 60_000);

  it('keeps a page whose conditions its index does not hold on the threads, however cheap its earlier runs', async () => {
    const secondPage = async (minAmount: number) => {
      const first = await get(threaded, `/v1/deals?min_amount=${minAmount}&limit=50`);
      return `/v1/deals?min_amount=${minAmount}&limit=50&cursor=${encodeURIComponent(first.body.next_cursor as string)}`;
    };
    // A second page every deal passes: 51 rows read, cheap (pages reached by a cursor are never
    // kept, so each of these runs the statement, until its cost is under the connection's bar).
    const cheap = await secondPage(0);
    for (let i = 0; i < 20; i++) expect(((await get(threaded, cheap)).body.data as unknown[]).length).toBe(50);
    // The same statement for the second page of the 51 largest deals: it reads the last of them,
    // then walks the key through the 299,949 others, none of which passes.
    const { answer, probes } = await scanWhileProbing(threaded, [await secondPage(SEEDED_AMOUNT + DEALS - 50)]);
    expect(answer.body.data).toEqual([expect.objectContaining({ id: `dea_seed${String(DEALS - 50).padStart(8, '0')}` })]);
    expect(answer.body.pagination).toMatchObject({ total: 51 });
    expect(answer.ms).toBeGreaterThan(50);
    expect(probes.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...probes)).toBeLessThan(Math.min(25, answer.ms / 2));
  }, 60_000);

  it('reads a page that walks one index holding its conditions at once, while every thread is busy', async () => {
    const first = await get(threaded, '/v1/contacts?limit=50');
    // Pages reached by a cursor are never kept: each probe reads the store, while both reader
    // threads scan a million contacts.
    const page = `/v1/contacts?limit=50&cursor=${encodeURIComponent(first.body.next_cursor as string)}`;
    const { answers, probes, probed } = await scanWhileProbing(threaded, ['nobody-a', 'nobody-b'].map((tag) => `/v1/contacts?tag=${tag}&limit=50`), page);
    expect((probed.body.data as unknown[]).length).toBe(50);
    for (const scan of answers) expect(scan.ms).toBeGreaterThan(150);
    expect(probes.length).toBeGreaterThanOrEqual(5);
    const sorted = [...probes].sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length * 0.9)]).toBeLessThan(25);
  }, 60_000);

  it('is what reading on the event loop costs: the same GET waits for the scan', async () => {
    const { answer, probes } = await scanWhileProbing(single);
    expect(answer.body.pagination).toMatchObject({ total: 0 });
    expect(Math.max(...probes)).toBeGreaterThan(Math.min(100, answer.ms / 3));
  }, 60_000);

  it('reads its own writes at once, in lists and one by one', async () => {
    const created = await fetch(`${base(threaded)}/v1/contacts`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ list_id: listId, name: 'Fresh', title: 'Unique Reader Title', tags: ['fresh'] }),
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { data: { id: string } }).data.id;
    const [one, byTag, byTitle] = await Promise.all([
      get(threaded, `/v1/contacts/${id}`),
      get(threaded, '/v1/contacts?tag=fresh'),
      get(threaded, '/v1/contacts?title=unique%20reader'),
    ]);
    expect(one.body.data).toMatchObject({ id, title: 'Unique Reader Title' });
    expect((byTag.body.data as Array<{ id: string }>).map((c) => c.id)).toEqual([id]);
    expect((byTitle.body.data as Array<{ id: string }>).map((c) => c.id)).toEqual([id]);
    const changed = await fetch(`${base(threaded)}/v1/contacts/${id}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ tags: ['moved'] }),
    });
    expect(changed.status).toBe(200);
    expect((await get(threaded, '/v1/contacts?tag=fresh')).body.data).toEqual([]);
    expect(((await get(threaded, '/v1/contacts?tag=moved')).body.data as Array<{ id: string }>).map((c) => c.id)).toEqual([id]);
  }, 60_000);
});
