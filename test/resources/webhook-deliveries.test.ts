// Webhook deliveries with real local receivers: every event of /v1/events arrives exactly as listed
// and verifies with the standardwebhooks library, retries, giving up, 410, redelivery, replay, test
// events, secret rotation, modes, and a slow receiver.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryJob } from '../../src/platform/jobs/queue.ts';
import { tenant, testApp } from '../helpers/app.ts';
import { allEvents, deliveries, endpoint, verify, waitFor } from '../helpers/webhooks.ts';
import { ids, receiver } from '../helpers/receiver.ts';

let app: FastifyInstance;
beforeAll(async () => {
  // Private networks allowed and retries after a second: see DELIVERY_ENV in the helpers.
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
});
afterAll(() => app.close());

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
    // An operator's retry starts the attempts again; the record goes on from the six it has.
    expect(await retryJob(app.services.database.db, gaveUp.id)).toMatchObject({ status: 'queued' });
    const [again] = await waitFor(() => deliveries(t.live, hook.id), (d) => d[0]?.attempt_count === 7, 10_000);
    expect(again.attempts).toHaveLength(7);
    expect(again.attempts.slice(0, 6)).toEqual(gaveUp.attempts);

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
