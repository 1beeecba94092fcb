// Agency grants through HTTP: single-use codes, listing and revocation (at once here, within two
// seconds on another process), and rate limits counted against the agency's own organization.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { agency, as, grant, link, NOT_LINKED, refused } from '../helpers/agency.ts';
import { client, databaseUrl, tenant, testApp } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => app.close());

describe('agency grants', () => {
  it('links with a single-use code, lists grants without codes, and refuses bad codes', async () => {
    const a = await agency(app);
    const t = await tenant(app);
    const made = await grant(t.live);
    expect(made).toMatchObject({ mode: 'live', status: 'pending', agency_org_id: null, redeemed_at: null, revoked_at: null });
    expect(made.grant_code).toMatch(/^agc_[A-Za-z0-9_-]{43}$/);
    expect(made.expires_at - made.created_at).toBe(24 * 60 * 60);

    await refused(await a.agencyTest.post('/v1/agency/clients/link', { grant_code: made.grant_code }), 400, 'This grant code links live mode; redeem it with a live key');
    const linked = await link(a.agencyLive, made.grant_code);
    expect(linked).toMatchObject({ org_id: t.org_id });
    for (const code of [made.grant_code, 'agc_nope', `agc_${'x'.repeat(43)}`]) {
      const again = await a.agencyLive.post('/v1/agency/clients/link', { grant_code: code });
      expect(again.statusCode).toBe(400);
      expect(again.json().detail).toMatch(/^Invalid grant code/);
    }
    await refused(await a.agencyLive.post('/v1/agency/clients/link', { grant_code: (await grant(t.live)).grant_code }), 409, 'Organization already linked to this agency');
    const own = await grant(a.live);
    await refused(await a.agencyLive.post('/v1/agency/clients/link', { grant_code: own.grant_code }), 400, 'An organization cannot be its own client');

    const listed = await t.live.get('/auth/v1/agency-grants');
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain(made.grant_code);
    const statuses = listed.json().data.map((g: { id: string; status: string; agency_org_id: string | null }) => [g.id, g.status, g.agency_org_id]);
    expect(statuses).toContainEqual([made.id, 'active', a.org_id]);
    expect(listed.json().data.find((g: { id: string }) => g.id === made.id).agency_name).toMatch(/^Agency \d+$/);
    // A test key's grants are test mode's, apart from the live ones.
    expect((await t.test.get('/auth/v1/agency-grants')).json().pagination.total).toBe(0);
    // Grants need the key's own full access.
    await refused(await as(a.agencyLive, t.org_id).post('/auth/v1/agency-grants'), 403, 'This endpoint acts on the API key\'s own organization only; X-Org-Id may not name a client here');
  });

  it('refuses the agency at once after a revocation here, within two seconds on another process', async () => {
    const a = await agency(app);
    const t = await tenant(app);
    const made = await grant(t.live);
    await link(a.agencyLive, made.grant_code);
    // Another process on the same store, with its own caches, which have seen the link.
    const other = await buildApp({ config: loadConfig({ DATABASE_URL: databaseUrl(), LOG_LEVEL: 'silent' }), database: app.services.database });
    try {
      const elsewhere = as(client(other, a.liveKey.api_key_token), t.org_id);
      expect((await elsewhere.get('/v1/lists')).statusCode).toBe(200);
      expect((await as(a.agencyLive, t.org_id).get('/v1/lists')).statusCode).toBe(200);

      const revoked = await t.live.delete(`/auth/v1/agency-grants/${made.id}`);
      expect(revoked.statusCode).toBe(200);
      expect(revoked.json().data).toMatchObject({ id: made.id, status: 'revoked', revoked_at: expect.any(Number) });
      const at = Date.now();
      await refused(await as(a.agencyLive, t.org_id).get('/v1/lists'), 403, NOT_LINKED);
      let status = 200;
      while (status === 200 && Date.now() - at < 3000) {
        status = (await elsewhere.get('/v1/lists')).statusCode;
        if (status === 200) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(403);
      expect(Date.now() - at).toBeLessThanOrEqual(2100);
    } finally {
      await other.close();
    }
    expect((await a.agencyLive.get('/v1/agency/clients')).json().pagination.total).toBe(0);
    expect((await t.live.delete(`/auth/v1/agency-grants/${made.id}`)).json().data.status).toBe('revoked');
    await refused(await t.live.delete('/auth/v1/agency-grants/agr_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'), 404, 'Agency grant not found');
    // A revoked pending code can no longer be redeemed; an unlinked grant shows as such.
    const pending = await grant(t.live);
    await t.live.delete(`/auth/v1/agency-grants/${pending.id}`);
    expect((await a.agencyLive.post('/v1/agency/clients/link', { grant_code: pending.grant_code })).statusCode).toBe(400);
    const again = await grant(t.live);
    await link(a.agencyLive, again.grant_code);
    await a.agencyLive.delete(`/v1/agency/clients/${t.org_id}`);
    const listed = (await t.live.get('/auth/v1/agency-grants')).json().data;
    expect(listed.find((g: { id: string }) => g.id === again.id).status).toBe('unlinked');
    const types = (await t.live.get('/v1/events?limit=20')).json().data.map((e: { type: string }) => e.type);
    expect(types).toEqual(expect.arrayContaining(['agency_grant.created', 'agency_grant.revoked']));
  });
});

describe('rate limits', () => {
  it('counts an agency key\'s requests for clients against the agency\'s own organization', async () => {
    const limited = await testApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_PER_MINUTE: '8' } });
    try {
      const a = await agency(limited);
      const t = await tenant(limited);
      const code = (await grant(t.live)).grant_code;
      await link(a.agencyLive, code);
      // The agency's organization has used 3 of its 8 (two key creations, the link); the client 1.
      const asClient = as(a.agencyLive, t.org_id);
      let status = 200;
      let sent = 0;
      while (status !== 429 && sent < 20) {
        status = (await asClient.get('/v1/lists')).statusCode;
        sent++;
      }
      expect(status).toBe(429);
      expect(sent).toBeLessThanOrEqual(8);
      expect((await a.agencyLive.get('/v1/lists')).statusCode).toBe(429);
      const own = await t.live.get('/v1/lists');
      expect(own.statusCode).toBe(200);
      expect(Number(own.headers['x-ratelimit-remaining'])).toBe(6);
    } finally {
      await limited.close();
    }
  });
});
