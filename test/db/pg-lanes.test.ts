// PostgreSQL's lane for point reads, over real sockets: with every connection of the pool held by
// slow statements, a GET of one record (a contact, through a fixed statement; a deal, through the
// query builder) is answered at once, while a list, which is no point read, waits for the pool (the
// control that shows the pool really was busy, so the measure can fail).
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPostgres, newOrg, testApp } from '../helpers/app.ts';

const POOL = 2;
const HOLD_SECONDS = 2;

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
    const holds = Array.from({ length: POOL }, () => sql`select pg_sleep(${HOLD_SECONDS})`.execute(db));
    // Both holds have their connections once a list must wait for one.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const listed = call('GET', '/v1/contacts?limit=10');
    const contact = await call('GET', `/v1/contacts/${contactId}`);
    const deal = await call('GET', `/v1/deals/${dealId}`);
    expect(contact.status).toBe(200);
    expect(contact.body.data.id).toBe(contactId);
    expect(deal.status).toBe(200);
    expect(deal.body.data.id).toBe(dealId);
    expect(contact.ms).toBeLessThan(500);
    expect(deal.ms).toBeLessThan(500);
    const list = await listed;
    expect(list.status).toBe(200);
    expect(list.ms).toBeGreaterThan(1000);
    await Promise.all(holds);
  });

  it('keeps a transaction on the pool: a write waits for a connection, and then commits', async () => {
    const { db } = app.services.database;
    const holds = Array.from({ length: POOL }, () => sql`select pg_sleep(1)`.execute(db));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const updated = await call('PATCH', `/v1/contacts/${contactId}`, { title: 'Waited' });
    expect(updated.status).toBe(200);
    expect(updated.ms).toBeGreaterThan(500);
    await Promise.all(holds);
    expect((await call('GET', `/v1/contacts/${contactId}`)).body.data).toMatchObject({ title: 'Waited' });
  });
});
