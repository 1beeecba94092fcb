// PostgreSQL's lane for point reads, over real sockets: with every connection of the pool held by
// slow transactions, a GET of one record (a contact, through a fixed statement; a deal, through the
// query builder) is answered at once, while a list, which is no point read, waits for the pool (the
// control that shows the pool really was busy, so the measure can fail). And slow reads take turns
// for DATABASE_SLOW_READS connections while point reads are being served: while they queue, a write
// and a list still find a connection; with no point reads to protect, they take the whole pool.
// Data statements run prepared, a leading comment included, but for those that match a pattern.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { statementName } from '../../src/db/pg-pool.ts';
import { BOUNDED } from '../../src/db/read-costs.ts';
import type { DB } from '../../src/db/schema.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPostgres, newOrg, testApp } from '../helpers/app.ts';

const POOL = 2;
// Long enough that a read waiting for the pool is told apart from one on its own lane on a loaded machine.
const HOLD_SECONDS = 4;

/** A transaction that holds a connection of the pool for `seconds` (transactions never wait for a slow read's turn). */
const hold = (db: Kysely<DB>, seconds: number) => db.transaction().execute((tx) => sql`select pg_sleep(${seconds})`.execute(tx));

describe('PostgreSQL prepared statements', () => {
  it('names data statements, a leading comment included, but those that match a pattern, and nothing else', () => {
    const plain = 'select id from contacts where id = $1';
    expect(statementName(plain)).toMatch(/^s\d+$/);
    expect(statementName(plain)).toBe(statementName(plain));
    expect(statementName(`${BOUNDED}${plain} and 1 = 1`)).toMatch(/^s\d+$/);
    expect(statementName(`${BOUNDED}${plain} and 1 = 1`)).not.toBe(statementName(plain));
    expect(statementName('begin')).toBeUndefined();
    // A pattern's statement is planned for its values on every run: a generic plan would take any
    // pattern to select 0.5% of the rows.
    expect(statementName("select * from contacts where org_id = $1 and title ilike $2 escape '\\' order by id desc limit $3")).toBeUndefined();
    expect(statementName('select count(*) from contacts where title LIKE $1')).toBeUndefined();
    expect(statementName('select id from contacts where likes = $1')).toMatch(/^s\d+$/);
    expect(statementName('/* a note */ vacuum analyze')).toBeUndefined();
  });
});

describe.skipIf(!isPostgres())('PostgreSQL point-read lane', () => {
  let app: FastifyInstance;
  let token: string;
  let contactId: string;
  let dealId: string;

  async function call(method: string, path: string, body?: unknown) {
    const started = performance.now();
    const { port } = app.server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: await response.json() as { data: { id: string } }, ms: performance.now() - started };
  }

  beforeAll(async () => {
    app = await testApp({ env: { DATABASE_POOL_SIZE: String(POOL) } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    token = (await newOrg(app)).test_token;
    const list = await call('POST', '/v1/lists', { name: 'Everyone', type: 'contacts' });
    contactId = (await call('POST', '/v1/contacts', { list_id: list.body.data.id, name: 'Probe' })).body.data.id;
    dealId = (await call('POST', '/v1/deals', { name: 'Probe deal', amount: 100, currency: 'USD' })).body.data.id;
    // The lane is for reads known to be cheap: a few runs teach the pool what these cost.
    for (let i = 0; i < 5; i++) {
      expect((await call('GET', `/v1/contacts/${contactId}`)).status).toBe(200);
      expect((await call('GET', `/v1/deals/${dealId}`)).status).toBe(200);
    }
  });

  afterAll(async () => {
    await app?.close();
  });

  it('answers a GET of one record while slow statements hold every connection of the pool', async () => {
    const { db } = app.services.database;
    const holds = Array.from({ length: POOL }, () => hold(db, HOLD_SECONDS));
    // Both holds have their connections once a list must wait for one.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const listed = call('GET', '/v1/contacts?limit=10');
    const contact = await call('GET', `/v1/contacts/${contactId}`);
    const deal = await call('GET', `/v1/deals/${dealId}`);
    expect(contact.status).toBe(200);
    expect(contact.body.data.id).toBe(contactId);
    expect(deal.status).toBe(200);
    expect(deal.body.data.id).toBe(dealId);
    // Waiting for the pool, each would take the rest of the hold (3.8 s).
    expect(contact.ms).toBeLessThan(1500);
    expect(deal.ms).toBeLessThan(1500);
    const list = await listed;
    expect(list.status).toBe(200);
    expect(list.ms).toBeGreaterThan(3000);
    await Promise.all(holds);
  });

  it('keeps a transaction on the pool: a write waits for a connection, and then commits', async () => {
    const { db } = app.services.database;
    const holds = Array.from({ length: POOL }, () => hold(db, 1));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const updated = await call('PATCH', `/v1/contacts/${contactId}`, { title: 'Waited' });
    expect(updated.status).toBe(200);
    expect(updated.ms).toBeGreaterThan(500);
    await Promise.all(holds);
    expect((await call('GET', `/v1/contacts/${contactId}`)).body.data).toMatchObject({ title: 'Waited' });
  });

  it('lets slow reads take turns for one connection (DATABASE_SLOW_READS=1), leaving the other to a write and a list', async () => {
    const slowApp = await testApp({ env: { DATABASE_POOL_SIZE: String(POOL), DATABASE_SLOW_READS: '1' } });
    try {
      const { db } = slowApp.services.database;
      const org = await newOrg(slowApp);
      const headers = { authorization: `Bearer ${org.test_token}` };
      const createList = (name: string) => slowApp.inject({ method: 'POST', url: '/v1/lists', headers, payload: { name, type: 'contacts' } });
      // A service that has run its statements knows what they cost: these are quick. A list asked
      // the first time reads its page, version and total in one statement; asked again after a
      // write (to be kept), in three: both ways have run.
      const listed = () => slowApp.inject({ method: 'GET', url: '/v1/lists?type=contacts', headers });
      expect((await listed()).statusCode).toBe(200);
      expect((await createList('Before')).statusCode).toBe(201);
      expect((await listed()).statusCode).toBe(200);
      // Point reads being served (GETs of one list, 20 a second) hold slow reads to their turns.
      const { id } = (await createList('Read')).json().data;
      let reading = true;
      const reads = (async () => {
        while (reading) {
          expect((await slowApp.inject({ method: 'GET', url: `/v1/lists/${id}`, headers })).statusCode).toBe(200);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 400));
      const started = performance.now();
      // Each a read that counts and has never run (so slow until known otherwise); three at once run one after the other.
      const sleeps = [1, 2, 3].map((i) => sql`select count(*) as n, ${i}::int as turn from pg_sleep(0.8)`.execute(db).then(() => performance.now() - started));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await createList('Meanwhile')).statusCode).toBe(201);
      const list = await listed();
      expect(list.statusCode).toBe(200);
      expect(list.json().data.map((l: { name: string }) => l.name)).toContain('Meanwhile');
      const meanwhile = performance.now() - started;
      const finished = (await Promise.all(sleeps)).sort((a, b) => a - b);
      reading = false;
      await reads;
      // One at a time: the last ends after three sleeps; the write and the list did not wait for them
      // (sleeps long enough that a loaded machine's delays do not blur the order).
      expect(finished[2]).toBeGreaterThan(2350);
      expect(finished[0]).toBeLessThan(1700);
      expect(meanwhile).toBeLessThan(finished[2] - 600);
    } finally {
      await slowApp.close();
    }
  });

  it('lets slow reads take the whole pool while no point reads are being served', async () => {
    const slowApp = await testApp({ env: { DATABASE_POOL_SIZE: String(POOL), DATABASE_SLOW_READS: '1' } });
    try {
      const { db } = slowApp.services.database;
      // The point reads of the start (and of the test's setup) lie more than a second back.
      await new Promise((resolve) => setTimeout(resolve, 1200));
      // How many of the three run at once, seen by the server itself (not by their durations, which a
      // busy machine stretches): both connections of the pool, where turns would allow one.
      const watcher = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await watcher.connect();
      try {
        let done = false;
        const sleeps = Promise.all([1, 2, 3].map((i) => sql`select count(*) as n, ${i}::int as alone from pg_sleep(0.8)`.execute(db))).finally(() => { done = true; });
        let most = 0;
        while (!done) {
          const { rows } = await watcher.query<{ n: string }>("select count(*) as n from pg_stat_activity where state = 'active' and query like '%as alone from pg_sleep%' and pid <> pg_backend_pid()");
          most = Math.max(most, Number(rows[0].n));
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await sleeps;
        expect(most).toBe(POOL);
      } finally {
        await watcher.end();
      }
    } finally {
      await slowApp.close();
    }
  });
});
