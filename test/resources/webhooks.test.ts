// Webhook endpoints and their deliveries through HTTP, with real local receivers: every event of
// /v1/events arrives exactly as listed and verifies with the standardwebhooks library, retries,
// 410, redelivery, replay, test events, secret rotation, modes, and the endpoints' errors.
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { ids, receiver, type Received } from '../helpers/receiver.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', OUTBOUND_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1' } });
});
afterAll(() => app.close());

const MISSING = 'whe_01JD8X4M6R2T9Q3V5W7Y8Z0A1B';
/** A type these tests never emit: endpoints on hosts nobody listens on get no deliveries. */
const QUIET = ['campaign.paused'];

async function endpoint(c: Client, url: string, event_types: string[] = ['*'], extra: object = {}) {
  const res = await c.post('/v1/webhooks', { url, event_types, ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string; secret: string; url: string; is_active: boolean };
}

/** Every event of the tenant, oldest first, exactly as `GET /v1/events` lists it. */
async function allEvents(c: Client): Promise<Array<Record<string, unknown> & { id: string; type: string }>> {
  const out = [];
  let cursor: string | null = null;
  do {
    const res = await c.get(`/v1/events?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.statusCode).toBe(200);
    out.push(...res.json().data);
    cursor = res.json().next_cursor;
  } while (cursor);
  return out.reverse();
}

const verify = (secret: string, r: Received) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>);

async function deliveries(c: Client, id: string, query = '') {
  const res = await c.get(`/v1/webhooks/${id}/deliveries?limit=200${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as Array<{ id: string; event_id: string; status: string; attempt_count: number; attempts: Array<{ status_code: number | null; error: string | null; duration_ms: number; response_body: string | null }> }>;
}

async function waitFor<T>(what: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await what();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

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

    const events = await allEvents(t.live);
    const mine = events.filter((e) => e.type.startsWith('webhook_endpoint.'));
    expect(mine.map((e) => e.type)).toEqual(['webhook_endpoint.created', 'webhook_endpoint.updated']);
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
    await bad({ url: 'https://example.com', event_types: ['nope.created'] }, 400, /Invalid event_types.0: must be one of \*, api_key.created/);
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
      expect(res.json()).toEqual({ detail: 'Webhook endpoint not found' });
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

describe('deliveries', () => {
  it('deliver every event exactly as /v1/events lists it, signed for the standardwebhooks library', async () => {
    const t = await tenant(app);
    const r = await receiver();
    const hook = await endpoint(t.live, r.url);
    const list = (await t.live.post('/v1/lists', { name: 'Webhooks', type: 'contacts' })).json().data;
    const contact = (await t.live.post('/v1/contacts', { list_id: list.id, name: 'Ada Lovelace', work_email: 'ada@example.com' })).json().data;
    expect((await t.live.patch(`/v1/contacts/${contact.id}`, { title: 'CTO' })).statusCode).toBe(200);
    expect((await t.live.delete(`/v1/contacts/${contact.id}`)).statusCode).toBe(200);
    await t.live.post('/v1/companies', { name: 'Analytical Engines', domain: 'engines.example' });

    const all = await allEvents(t.live);
    const events = all.slice(all.findIndex((e) => e.type === 'webhook_endpoint.created')); // before it: the starting credits
    expect(events.map((e) => e.type)).toEqual(['webhook_endpoint.created', 'list.created', 'contact.created', 'contact.updated', 'contact.deleted', 'company.created']);
    await r.until((got) => new Set(ids(got)).size >= events.length);
    for (const event of events) {
      const got = r.received.filter((x) => x.headers['webhook-id'] === event.id);
      expect(got.length, event.type).toBeGreaterThanOrEqual(1);
      for (const x of got) {
        expect(JSON.parse(x.body)).toEqual(event);
        expect(verify(hook.secret, x)).toEqual(event);
        expect(x.headers['content-type']).toBe('application/json');
        expect(Number(x.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);
        expect(x.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      }
    }
    expect(() => verify('whsec_' + Buffer.alloc(32, 1).toString('base64'), r.received[0])).toThrow();
    const recorded = await waitFor(() => deliveries(t.live, hook.id), (d) => d.filter((x) => x.status === 'succeeded').length === events.length);
    expect(recorded[0]).toMatchObject({ endpoint_id: hook.id, status: 'succeeded', attempt_count: 1, next_attempt_at: null });
    expect(recorded[0].attempts[0]).toMatchObject({ status_code: 200, error: null, response_body: 'ok' });
    const created = await deliveries(t.live, hook.id, '&event_type=contact.created');
    expect(created.map((d) => d.event_id)).toEqual([events[2].id]);
  });

  it('deliver only the subscribed types, and test-mode events only to test-mode endpoints', async () => {
    const t = await tenant(app);
    const live = await receiver();
    const test = await receiver();
    await endpoint(t.live, live.url, ['company.created']);
    await endpoint(t.test, test.url, ['company.created']);
    await t.live.post('/v1/lists', { name: 'Not delivered', type: 'contacts' });
    const liveCompany = (await t.live.post('/v1/companies', { name: 'Live Co' })).json().data;
    const testCompany = (await t.test.post('/v1/companies', { name: 'Test Co' })).json().data;
    await live.until((got) => got.length >= 1);
    await test.until((got) => got.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(live.received.map((x) => JSON.parse(x.body).data.object.id)).toEqual([liveCompany.id]);
    expect(test.received.map((x) => JSON.parse(x.body).data.object.id)).toEqual([testCompany.id]);
  });

  it('retry a receiver that fails for a while: every event arrives and each attempt is recorded', async () => {
    const t = await tenant(app);
    const failing = 3;
    const r = await receiver((n) => ({ status: n < failing ? 500 : 200, body: n < failing ? 'down for maintenance' : 'ok' }));
    const hook = await endpoint(t.live, r.url, ['list.created']);
    const lists = [];
    for (let i = 0; i < 3; i++) lists.push((await t.live.post('/v1/lists', { name: `L${i}`, type: 'contacts' })).json().data);
    const events = (await allEvents(t.live)).filter((e) => e.type === 'list.created');
    expect(events).toHaveLength(3);
    const rows = await waitFor(() => deliveries(t.live, hook.id), (d) => d.length === 3 && d.every((x) => x.status === 'succeeded'), 20_000);
    expect(new Set(ids(r.received.filter((x) => r.received.indexOf(x) >= failing)))).toEqual(new Set(events.map((e) => e.id)));
    const failedAttempts = rows.flatMap((d) => d.attempts).filter((a) => a.status_code === 500);
    expect(failedAttempts).toHaveLength(failing);
    for (const a of failedAttempts) expect(a).toMatchObject({ error: 'The endpoint answered 500', response_body: 'down for maintenance' });
    expect(rows.reduce((n, d) => n + d.attempt_count, 0)).toBe(3 + failing);
    expect((await t.live.get(`/v1/webhooks/${hook.id}`)).json().data.is_active).toBe(true);
  });

  it('give up after the retry schedule, and 410 Gone disables the endpoint at once', async () => {
    const t = await tenant(app);
    const down = await receiver(() => ({ status: 503 }));
    const hook = await endpoint(t.live, down.url, ['list.created']);
    await t.live.post('/v1/lists', { name: 'Never delivered', type: 'contacts' });
    const [gaveUp] = await waitFor(() => deliveries(t.live, hook.id), (d) => d[0]?.status === 'failed', 20_000);
    expect(gaveUp.attempt_count).toBe(6); // the first attempt and the five retries of WEBHOOK_RETRY_SCHEDULE
    expect(down.received).toHaveLength(6);

    const gone = await receiver(() => ({ status: 410 }));
    const goneHook = await endpoint(t.live, gone.url, ['company.created']);
    const other = await receiver();
    await endpoint(t.live, other.url, ['webhook_endpoint.disabled']);
    await t.live.post('/v1/companies', { name: 'Gone Co' });
    const disabled = await waitFor(async () => (await t.live.get(`/v1/webhooks/${goneHook.id}`)).json().data, (e) => e.is_active === false);
    expect(disabled.disabled_reason).toBe('The endpoint answered 410 Gone');
    expect(gone.received).toHaveLength(1);
    const [notice] = await other.until((got) => got.length >= 1);
    expect(JSON.parse(notice.body)).toMatchObject({ type: 'webhook_endpoint.disabled', data: { object: { id: goneHook.id, is_active: false } } });
    // A disabled endpoint gets nothing more until it is enabled again.
    await t.live.post('/v1/companies', { name: 'Not sent' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(gone.received).toHaveLength(1);
    expect((await t.live.post(`/v1/webhooks/${goneHook.id}/test`)).statusCode).toBe(409);
  });

  it('redeliver, replay past events, and send a test event to one endpoint', async () => {
    const t = await tenant(app);
    const r = await receiver();
    const bystander = await receiver();
    const since = Math.floor(Date.now() / 1000);
    const hook = await endpoint(t.live, r.url, ['list.created']);
    await endpoint(t.live, bystander.url, ['list.created']);
    const list = (await t.live.post('/v1/lists', { name: 'Again', type: 'contacts' })).json().data;
    const [first] = await waitFor(() => deliveries(t.live, hook.id), (d) => d.length === 1);
    const eventId = first.event_id;

    const again = await t.live.post(`/v1/webhooks/${hook.id}/deliveries/${first.id}/redeliver`);
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json().data).toEqual({ delivery_id: expect.stringMatching(/^dlv_/), event_id: eventId });
    await r.until((got) => got.length >= 2);
    expect(ids(r.received)).toEqual([eventId, eventId]);
    expect(JSON.parse(r.received[1].body).data.object.id).toBe(list.id);
    expect((await t.live.post(`/v1/webhooks/${hook.id}/deliveries/dlv_nope/redeliver`)).statusCode).toBe(404);

    const replay = await t.live.post(`/v1/webhooks/${hook.id}/replay`, { created_after: since });
    expect(replay.statusCode).toBe(201);
    expect(replay.json().data).toEqual({ replayed: 1 }); // only the type the endpoint subscribes to
    await r.until((got) => got.length >= 3);
    expect(ids(r.received)[2]).toBe(eventId);
    expect((await t.live.post(`/v1/webhooks/${hook.id}/replay`, { created_after: since + 3600 })).json().data).toEqual({ replayed: 0 });
    expect((await t.live.post(`/v1/webhooks/${hook.id}/replay`, { created_after: since, event_types: ['bogus'] })).statusCode).toBe(400);
    expect((await t.live.post(`/v1/webhooks/${hook.id}/replay`, { created_after: since, event_types: ['webhook.test'] })).json().data).toEqual({ replayed: 0 });

    const test = await t.live.post(`/v1/webhooks/${hook.id}/test`);
    expect(test.statusCode).toBe(201);
    const got = await r.until((x) => x.length >= 4);
    expect(JSON.parse(got[3].body)).toMatchObject({ id: test.json().data.event_id, type: 'webhook.test', data: { object: { id: hook.id } } });
    expect(verify(hook.secret, got[3])).toMatchObject({ type: 'webhook.test' });
    await waitFor(() => deliveries(t.live, hook.id), (d) => d.length === 4 && d.every((x) => x.status === 'succeeded'));
    expect(bystander.received).toHaveLength(1); // the list.created event only: no redelivery, replay or test
  });

  it('sign with both secrets for a day after a rotation', async () => {
    const t = await tenant(app);
    const r = await receiver();
    const hook = await endpoint(t.live, r.url, ['list.created']);
    const rotated = await t.live.post(`/v1/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(201);
    const fresh = rotated.json().data.secret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(hook.secret);
    expect((await t.live.get(`/v1/webhooks/${hook.id}`)).json().data).not.toHaveProperty('secret');
    await t.live.post('/v1/lists', { name: 'Rotated', type: 'contacts' });
    const [got] = await r.until((x) => x.length >= 1);
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(fresh, got)).toMatchObject({ type: 'list.created' });
    expect(verify(hook.secret, got)).toMatchObject({ type: 'list.created' });
  });

  it('do not let a slow receiver hold back other endpoints, and time out after 10 s', async () => {
    const t = await tenant(app);
    const slow = await receiver(() => ({ status: 200, delayMs: 30_000 }));
    const fast = await receiver();
    const slowHook = await endpoint(t.live, slow.url, ['company.created']);
    await endpoint(t.live, fast.url, ['company.created']);
    const started = Date.now();
    for (let i = 0; i < 5; i++) await t.live.post('/v1/companies', { name: `Co ${i}` });
    await fast.until((got) => got.length >= 5, 3000);
    expect(Date.now() - started).toBeLessThan(3000);
    const [timedOut] = await waitFor(() => deliveries(t.live, slowHook.id), (d) => d.length > 0 && d.every((x) => x.attempt_count >= 1), 14_000);
    expect(timedOut.status).toBe('pending');
    const attempt = timedOut.attempts[0];
    expect(attempt.status_code).toBeNull();
    expect(attempt.error).toBe('No answer within 10000 ms');
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(9900);
    expect(attempt.duration_ms).toBeLessThan(12_000);
    await t.live.patch(`/v1/webhooks/${slowHook.id}`, { is_active: false });
  }, 30_000);
});
