// Webhook endpoints through HTTP: the event-type catalog, creation with a secret shown once, reads,
// listings, updates, deletion, the limit of active endpoints, bad input and other tenants.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/platform/event-types.ts';
import { resources } from '../../src/resources/registry.ts';
import { tenant, testApp } from '../helpers/app.ts';
import { allEvents, endpoint, QUIET } from '../helpers/webhooks.ts';

let app: FastifyInstance;
beforeAll(async () => {
  // Private networks allowed and retries after a second: see DELIVERY_ENV in the helpers.
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
});
afterAll(() => app.close());

const MISSING = 'whe_01JD8X4M6R2T9Q3V5W7Y8Z0A1B';

describe('GET /v1/webhooks/event-types', () => {
  it('lists every event type with a description, and /v1/events refuses a type not in it', async () => {
    const t = await tenant(app);
    const res = await t.live.get('/v1/webhooks/event-types');
    expect(res.statusCode).toBe(200);
    const types = res.json().data as Array<{ type: string; description: string }>;
    for (const type of ['contact.created', 'list.deleted', 'campaign.launched', 'usage.debit', 'webhook_endpoint.disabled', 'webhook.test']) {
      expect(types.find((x) => x.type === type)?.description, type).toMatch(/\w/);
    }
    // Every event a fresh test mode holds (the sandbox's) is of a listed type.
    const sandbox = await allEvents(t.test);
    expect(sandbox.length).toBeGreaterThan(10);
    for (const e of sandbox) expect(types.map((x) => x.type)).toContain(e.type);

    // The kernel builds its resources' types from their names: each is catalogued (all three kinds of
    // write unless the definition names fewer: the outbox's messages record events of their own).
    for (const r of resources) {
      for (const action of r.crudEvents ?? ['created', 'updated', 'deleted']) expect(Object.keys(EVENT_TYPES), r.name).toContain(`${r.name}.${action}`);
    }
    expect(Object.keys(EVENT_TYPES)).not.toContain('message.created');

    const bogus = await t.live.get('/v1/events?type=bogus.type');
    const otherEnum = await t.live.get('/v1/lists?type=bogus');
    expect(bogus.statusCode).toBe(otherEnum.statusCode);
    expect(bogus.statusCode).toBeGreaterThanOrEqual(400);
    expect(bogus.json().detail).toMatch(/type/);
    expect((await t.live.get('/v1/events?type=contact.created')).statusCode).toBe(200);
  });
});

describe('webhook endpoints', () => {
  it('are created with a secret shown once, read, listed, updated and deleted', async () => {
    const t = await tenant(app);
    const created = await endpoint(t.live, 'https://example.com/hook', ['contact.created'], { description: 'CRM' });
    expect(created).toMatchObject({ id: expect.stringMatching(/^whe_/), url: 'https://example.com/hook', event_types: ['contact.created'], is_active: true, description: 'CRM', disabled_reason: null });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = (await t.live.get(`/v1/webhooks/${created.id}`)).json().data;
    expect(read).not.toHaveProperty('secret');
    expect(read).toEqual({ ...created, secret: undefined });
    const listed = (await t.live.get('/v1/webhooks')).json();
    expect(listed.data.map((e: { id: string }) => e.id)).toEqual([created.id]);
    expect(JSON.stringify(listed)).not.toContain(created.secret);

    const patched = await t.live.patch(`/v1/webhooks/${created.id}`, { is_active: false, event_types: ['*'] });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data).toMatchObject({ is_active: false, event_types: ['*'] });
    expect((await t.live.get('/v1/webhooks?is_active=true')).json().pagination.total).toBe(0);
    expect((await t.live.get('/v1/webhooks?is_active=false')).json().pagination.total).toBe(1);
    expect((await t.live.patch(`/v1/webhooks/${created.id}`, {})).statusCode).toBe(400);
    // The same values again change nothing: the endpoint as it is, no event.
    const again = await t.live.patch(`/v1/webhooks/${created.id}`, { is_active: false, event_types: ['*'] });
    expect(again.json().data).toEqual(patched.json().data);

    const events = await allEvents(t.live);
    const mine = events.filter((e) => e.type.startsWith('webhook_endpoint.'));
    expect(mine.map((e) => e.type)).toEqual(['webhook_endpoint.created', 'webhook_endpoint.updated']);
    expect(mine[1].previous_attributes).toEqual({ is_active: true, event_types: ['contact.created'] });
    expect(JSON.stringify(events)).not.toContain(created.secret);

    expect((await t.live.delete(`/v1/webhooks/${created.id}`)).json().data).toEqual({ id: created.id, deleted: true });
    expect((await t.live.get(`/v1/webhooks/${created.id}`)).statusCode).toBe(404);
  });

  it('refuse bad input with the error shape, and another tenant sees none of them', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const bad = async (body: object, status: number, detail: RegExp | string) => {
      const res = await t.live.post('/v1/webhooks', body);
      expect(res.statusCode, res.body).toBe(status);
      expect(JSON.stringify(res.json().detail)).toMatch(detail);
    };
    await bad({ url: 'https://example.com', event_types: ['nope.created'] }, 400, /Invalid event_types.0: must be one of \*, agency_client.created/);
    await bad({ url: 'https://example.com', event_types: ['*', 'contact.created'] }, 400, /cannot be combined/);
    await bad({ url: 'ftp://example.com/x', event_types: ['*'] }, 400, /https:\/\/ or http:\/\//);
    await bad({ url: 'not a url', event_types: ['*'] }, 422, /value is not a valid uri/);
    await bad({ url: 'https://user:pw@example.com', event_types: ['*'] }, 400, /credentials/);
    await bad({ event_types: ['*'] }, 400, /url/);
    await bad({ url: 'https://example.com', event_types: [] }, 422, /at least 1/);
    await bad({ url: 'https://example.com', event_types: ['*'], secret: 'mine' }, 422, /Extra inputs/);

    const mine = await endpoint(t.live, 'https://example.com/a', QUIET);
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['GET', '/deliveries'], ['POST', '/test'], ['POST', '/rotate-secret'], ['POST', '/replay']] as const) {
      const body = method === 'PATCH' ? { is_active: false } : path === '/replay' ? { created_after: 0 } : undefined;
      const res = await other.live(method, `/v1/webhooks/${mine.id}${path}`, body ?? (method === 'POST' ? {} : undefined));
      expect(res.statusCode, `${method} ${path}`).toBe(404);
      expect(res.json()).toEqual({ type: 'not_found', detail: 'Webhook endpoint not found' });
      expect((await t.test(method, `/v1/webhooks/${mine.id}${path}`, body ?? (method === 'POST' ? {} : undefined))).statusCode).toBe(404);
    }
    expect((await t.live.get(`/v1/webhooks/${MISSING}`)).statusCode).toBe(404);
    expect((await other.live.get('/v1/webhooks')).json().data).toEqual([]);
  });

  it('allow at most 10 active endpoints per organization and mode', async () => {
    const t = await tenant(app);
    for (let i = 0; i < 10; i++) await endpoint(t.live, `https://example.com/${i}`, QUIET);
    const over = await t.live.post('/v1/webhooks', { url: 'https://example.com/11', event_types: ['*'] });
    expect(over.statusCode).toBe(409);
    expect(over.json().detail).toMatch(/At most 10 active webhook endpoints/);
    const inactive = await endpoint(t.live, 'https://example.com/off', QUIET, { is_active: false });
    expect((await t.live.patch(`/v1/webhooks/${inactive.id}`, { is_active: true })).statusCode).toBe(409);
    await endpoint(t.test, 'https://example.com/test-mode', QUIET); // the other mode has its own ten
  });
});
