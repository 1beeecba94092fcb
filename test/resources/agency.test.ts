// Agencies through HTTP: agency keys, client organizations, and acting for a client with X-Org-Id
// (reads and writes, refusals, idempotency keys and cursors across clients, the actor on events and
// ledger rows, agency usage). Grants, revocation and rate limits: agency-grants.test.ts.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agency, as, ids, linkedClient, MISMATCH, NOT_LINKED, refused } from '../helpers/agency.ts';
import { tenant, testApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => app.close());

describe('agency organizations and keys', () => {
  it('makes agency keys only for agency organizations and lists is_agency truthfully', async () => {
    const a = await agency(app);
    expect(a.is_agency).toBe(true);
    expect(a.liveKey).toMatchObject({ is_agency: true, mode: 'live', scopes: ['*'] });
    const listed = (await a.live.get('/auth/v1/api-keys')).json().data.keys;
    expect(listed.filter((k: { is_agency: boolean }) => k.is_agency).map((k: { api_key_id: string }) => k.api_key_id).sort())
      .toEqual([a.liveKey.api_key_id, a.testKey.api_key_id].sort());
    const plain = await tenant(app);
    await refused(await plain.live.post('/auth/v1/api-keys', { name: 'x', is_agency: true }), 403, 'Only an agency organization can create agency keys');
    expect((await plain.live.get('/auth/v1/api-keys')).json().data.keys.every((k: { is_agency: boolean }) => !k.is_agency)).toBe(true);
    await refused(await plain.live.get('/v1/agency/clients'), 403, 'This organization is not an agency: only agency organizations have clients');
    await refused(await plain.live.post('/v1/agency/clients', { name: 'x' }), 403, 'This organization is not an agency: only agency organizations have clients');
  });

  it('creates client organizations with their own credits and sandbox data, and lists, reads and unlinks them', async () => {
    const a = await agency(app);
    const res = await a.agencyTest.post('/v1/agency/clients', { name: 'Northwind' });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json().data;
    expect(Object.keys(created).sort()).toEqual(['created_at', 'linked_at', 'name', 'org_id']);
    expect(created).toMatchObject({ name: 'Northwind', org_id: expect.stringMatching(/^org_/) });
    // Its test mode holds the sandbox data set and the starting credits.
    expect((await as(a.agencyTest, created.org_id).get('/v1/contacts?limit=1')).json().pagination.total).toBeGreaterThan(0);
    expect((await as(a.agencyTest, created.org_id).get('/v1/usage')).json().data.balance).toBe(1000);
    // The agency's own test data is a separate data set.
    expect((await a.agencyTest.get('/v1/usage')).json().data.balance).toBe(1000);

    const second = (await a.test.post('/v1/agency/clients', { name: 'Contoso' })).json().data;
    const page = (await a.test.get('/v1/agency/clients?limit=1')).json();
    expect(page.pagination.total).toBe(2);
    expect(page.data.map((c: { org_id: string }) => c.org_id)).toEqual([second.org_id]);
    const next = (await a.test.get(`/v1/agency/clients?limit=1&cursor=${page.next_cursor}`)).json();
    expect(next.data).toEqual([created]);
    expect((await a.test.get(`/v1/agency/clients/${created.org_id}`)).json().data).toEqual(created);
    // Links are per mode: the live keys have no clients yet.
    expect((await a.live.get('/v1/agency/clients')).json().pagination.total).toBe(0);
    await refused(await a.live.get(`/v1/agency/clients/${created.org_id}`), 404, 'Client not found');
    await refused(await as(a.agencyLive, created.org_id).get('/v1/contacts'), 403, NOT_LINKED);

    const unlinked = await a.test.delete(`/v1/agency/clients/${created.org_id}`);
    expect(unlinked.statusCode).toBe(200);
    expect(unlinked.json()).toEqual({ data: { org_id: created.org_id, unlinked: true } });
    await refused(await as(a.agencyTest, created.org_id).get('/v1/contacts'), 403, NOT_LINKED);
    await refused(await a.test.get(`/v1/agency/clients/${created.org_id}`), 404, 'Client not found');
    await refused(await a.test.delete(`/v1/agency/clients/${created.org_id}`), 404, 'Client not found');
    const types = (await a.test.get('/v1/events?limit=10')).json().data.map((e: { type: string }) => e.type);
    expect(types).toEqual(expect.arrayContaining(['agency_client.created', 'agency_client.unlinked']));
  });
});

describe('acting for a client with X-Org-Id', () => {
  it('reads and writes a linked client\'s data; the client sees it, and never the agency\'s own data', async () => {
    const a = await agency(app);
    const t = await linkedClient(app, a);
    const asClient = as(a.agencyLive, t.org_id);
    const list = (await asClient.post('/v1/lists', { name: 'Agency-made', type: 'contacts' })).json().data;
    const contact = await asClient.post('/v1/contacts', { list_id: list.id, work_email: 'ada@northwind.example' });
    expect(contact.statusCode, contact.body).toBe(201);
    expect(await ids(asClient, '/v1/contacts')).toEqual([contact.json().data.id]);
    expect(await ids(t.live, '/v1/contacts')).toEqual([contact.json().data.id]);
    expect((await asClient.patch(`/v1/contacts/${contact.json().data.id}`, { title: 'CTO' })).json().data.title).toBe('CTO');

    // The agency's own data stays its own, in both directions.
    const own = (await a.agencyLive.post('/v1/lists', { name: 'Agency only', type: 'contacts' })).json().data.id;
    expect(await ids(t.live, '/v1/lists')).not.toContain(own);
    expect(await ids(asClient, '/v1/lists')).not.toContain(own);
    expect(await ids(a.agencyLive, '/v1/lists')).toEqual([own]);
    await refused(await t.live.get(`/v1/lists/${own}`), 404, 'List not found');
    await refused(await t.live.get('/v1/lists', { 'x-org-id': a.org_id }), 403, MISMATCH);

    // Every event the agency caused carries the actor; the client lists them by actor.
    const byAgency = (await t.live.get(`/v1/events?actor_org_id=${a.org_id}`)).json();
    expect(byAgency.data.map((e: { type: string }) => e.type)).toEqual(['contact.updated', 'contact.created', 'list.created']);
    for (const e of byAgency.data) expect(e.actor).toEqual({ api_key_id: a.liveKey.api_key_id, org_id: a.org_id });
    expect(byAgency.pagination.total).toBe(3);
    const mine = (await t.live.post('/v1/lists', { name: 'Client-made', type: 'leads' })).json().data.id;
    const latest = (await t.live.get('/v1/events?limit=1')).json().data[0];
    expect(latest).toMatchObject({ type: 'list.created', data: { object: { id: mine } }, actor: { org_id: t.org_id } });
    expect((await t.live.get(`/v1/events?actor_org_id=${t.org_id}`)).json().data.map((e: { data: { object: { id: string } } }) => e.data.object.id))
      .toEqual([mine, expect.stringMatching(/^agr_/)]);
  });

  it('refuses unlinked organizations, other agencies\' clients, other modes, ordinary keys and malformed ids', async () => {
    const [a, b] = [await agency(app), await agency(app)];
    const mine = await linkedClient(app, a);
    const theirs = await linkedClient(app, b);
    const stranger = await tenant(app);
    for (const orgId of [theirs.org_id, stranger.org_id, b.org_id, 'org_01JD8X4M6R2T9Q3V5W7Y8Z0A1B']) {
      await refused(await as(a.agencyLive, orgId).get('/v1/contacts'), 403, NOT_LINKED);
      await refused(await as(a.agencyLive, orgId).post('/v1/lists', { name: 'x', type: 'contacts' }), 403, NOT_LINKED);
    }
    // Linked in live mode only: the agency's test key is refused.
    await refused(await as(a.agencyTest, mine.org_id).get('/v1/contacts'), 403, NOT_LINKED);
    // An agency organization's ordinary key is not an agency key.
    await refused(await as(a.live, mine.org_id).get('/v1/contacts'), 403, MISMATCH);
    for (const bad of ['nonsense', 'org_', 'org_abc!', `org_${'A'.repeat(70)}`]) {
      await refused(await as(a.agencyLive, bad).get('/v1/contacts'), 400, 'X-Org-Id must be an organization id (org_…)');
      await refused(await as(stranger.live, bad).get('/v1/contacts'), 400, 'X-Org-Id must be an organization id (org_…)');
    }
    // Key management, grants and clients are the key's own organization's only.
    for (const url of ['/auth/v1/api-keys', '/auth/v1/agency-grants', '/v1/agency/clients']) {
      await refused(await as(a.agencyLive, mine.org_id).get(url), 403, 'This endpoint acts on the API key\'s own organization only; X-Org-Id may not name a client here');
    }
    expect((await mine.live.get('/v1/lists')).json().pagination.total).toBe(0);
    expect((await as(a.agencyLive, a.org_id).get('/v1/lists')).statusCode).toBe(200);
  });

  it('scopes idempotency keys and cursors to the client: never replayed or honoured for another', async () => {
    const a = await agency(app);
    const [c1, c2] = [await linkedClient(app, a), await linkedClient(app, a)];
    const key = { 'idempotency-key': 'agency-shared-key' };
    const first = await as(a.agencyLive, c1.org_id).post('/v1/lists', { name: 'Same', type: 'contacts' }, key);
    const other = await as(a.agencyLive, c2.org_id).post('/v1/lists', { name: 'Same', type: 'contacts' }, key);
    const own = await a.agencyLive.post('/v1/lists', { name: 'Same', type: 'contacts' }, key);
    for (const res of [first, other, own]) expect(res.statusCode).toBe(201);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(own.headers['idempotent-replayed']).toBeUndefined();
    expect(new Set([first, other, own].map((r) => r.json().data.id)).size).toBe(3);
    const replay = await as(a.agencyLive, c1.org_id).post('/v1/lists', { name: 'Same', type: 'contacts' }, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(await ids(c1.live, '/v1/lists')).toEqual([first.json().data.id]);
    expect(await ids(c2.live, '/v1/lists')).toEqual([other.json().data.id]);

    await as(a.agencyLive, c1.org_id).post('/v1/lists', { name: 'Another', type: 'contacts' });
    const cursor = (await as(a.agencyLive, c1.org_id).get('/v1/lists?limit=1')).json().next_cursor;
    expect(cursor).toEqual(expect.any(String));
    for (const c of [as(a.agencyLive, c2.org_id), a.agencyLive, c2.live]) {
      const res = await c.get(`/v1/lists?limit=1&cursor=${cursor}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().type).toBe('bad_request');
    }
    expect((await c1.live.get(`/v1/lists?limit=1&cursor=${cursor}`)).statusCode).toBe(200);
  });

  it('records the agency on ledger debits and sums them per client', async () => {
    const a = await agency(app);
    const made = (await a.agencyTest.post('/v1/agency/clients', { name: 'Ledger client' })).json().data;
    const asClient = as(a.agencyTest, made.org_id);
    const list = (await asClient.post('/v1/lists', { name: 'Audience', type: 'contacts' })).json().data.id;
    for (let i = 0; i < 3; i++) {
      const made = await asClient.post('/v1/contacts', { list_id: list, work_email: `p${i}@ledger.example` });
      expect(made.statusCode, made.body).toBe(201);
    }
    const steps = [{ channel: 'email', delay_days: 0, subject: 'Hello', body: 'Hi' }];
    const mailbox = (await asClient.post('/v1/mailboxes', { email: 'ada@ledger.example' })).json().data.id;
    const campaign = (await asClient.post('/v1/campaigns', { name: 'Agency launch', list_id: list, mailbox_ids: [mailbox], steps })).json().data.id;
    const launched = await asClient.post(`/v1/campaigns/${campaign}/launch`, { force: true });
    expect(launched.statusCode, launched.body).toBe(200);

    // The three messages are paid for by the scheduler's run that queues them (test mode sends at
    // once), charged to the key that launched the campaign.
    const [debit] = await waitFor(async () => (await asClient.get('/v1/usage/transactions?type=debit')).json().data, (d) => d.length === 1);
    expect(debit).toMatchObject({ amount: 3, resource_id: campaign, operation: 'campaign.send', actor: { api_key_id: a.testKey.api_key_id, org_id: a.org_id } });
    const grantRow = (await asClient.get('/v1/usage/transactions?type=grant')).json().data[0];
    expect(grantRow.actor).toBeNull();
    const usage = (await a.agencyTest.get('/v1/agency/usage')).json().data;
    expect(usage).toMatchObject({ debited: 3, clients: [{ org_id: made.org_id, name: 'Ledger client', debited: 3, transactions: 1 }] });
    expect(usage.period_start).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    // Live mode is another ledger.
    expect((await a.agencyLive.get('/v1/agency/usage')).json().data).toMatchObject({ debited: 0, clients: [] });
  });
});
