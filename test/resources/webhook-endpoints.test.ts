// Webhook endpoints as a kernel definition (webhooks.resource.ts): what its secret field, its cap and
// its hooks promise beyond the CRUD the generated tests walk: a rotation keeps the old secret for a
// day and shows neither in its event, the cap holds against concurrent creates, giving `is_active`
// again clears what the service recorded of failures, and the sandbox reset keeps the endpoints.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp } from '../helpers/app.ts';
import { allEvents, endpoint, QUIET } from '../helpers/webhooks.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());

const db = () => app.services.database.db;
const stored = (id: string) => db().selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('webhook endpoints', () => {
  it('rotate their secret: the new one shown once, the old one kept a day, neither in the event', async () => {
    const t = await tenant(app);
    const hook = await endpoint(t.live, 'https://example.com/rotate', QUIET);
    const before = await stored(hook.id);
    expect(before.secret).toBe(hook.secret);
    const rotated = await t.live.post(`/v1/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(201);
    const fresh = rotated.json().data.secret as string;
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const after = await stored(hook.id);
    expect(after).toMatchObject({ secret: fresh, previous_secret: hook.secret });
    expect(Number(after.previous_secret_until) - Number(after.updated_at)).toBe(24 * 3600);
    const [event] = (await allEvents(t.live)).filter((e) => e.type === 'webhook_endpoint.updated');
    expect(event.previous_attributes).toEqual({});
    const text = JSON.stringify(await allEvents(t.live));
    for (const secret of [hook.secret, fresh]) expect(text).not.toContain(secret);
  });

  it('hold the cap of 10 active endpoints against concurrent creates', async () => {
    const t = await tenant(app);
    for (let i = 0; i < 8; i++) await endpoint(t.live, `https://example.com/${i}`, QUIET);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => t.live.post('/v1/webhooks', { url: `https://example.com/race/${i}`, event_types: QUIET })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 201, 409, 409, 409, 409]);
    expect((await t.live.get('/v1/webhooks?is_active=true')).json().pagination.total).toBe(10);
  });

  it('clear what the service recorded of failures when is_active is given again, and only then write', async () => {
    const t = await tenant(app);
    const hook = await endpoint(t.live, 'https://example.com/failing', QUIET);
    await db().updateTable('webhook_endpoints').set({ failing_since: 1_700_000_000 }).where('id', '=', hook.id).execute();
    expect((await t.live.patch(`/v1/webhooks/${hook.id}`, { is_active: true })).statusCode).toBe(200);
    expect((await stored(hook.id)).failing_since).toBeNull();
    await t.live.patch(`/v1/webhooks/${hook.id}`, { is_active: true });
    expect((await allEvents(t.live)).filter((e) => e.type === 'webhook_endpoint.updated')).toHaveLength(1);

    // Disabled by the service: `is_active: false` again keeps it off and drops the reason.
    await db().updateTable('webhook_endpoints').set({ is_active: 0, disabled_reason: 'The endpoint answered 410 Gone' }).where('id', '=', hook.id).execute();
    const off = await t.live.patch(`/v1/webhooks/${hook.id}`, { is_active: false });
    expect(off.json().data).toMatchObject({ is_active: false, disabled_reason: null });
  });

  it('are kept by the sandbox reset, like API keys', async () => {
    const t = await tenant(app);
    const hook = await endpoint(t.test, 'https://example.com/sandbox', QUIET);
    expect((await t.test.post('/v1/sandbox/reset')).statusCode).toBe(200);
    expect((await t.test.get(`/v1/webhooks/${hook.id}`)).statusCode).toBe(200);
  });
});
