// Mailboxes through HTTP: fields and defaults, the unique address, the connection (an e-mail one:
// 404 unknown, 422 another kind, a connection in use is not deleted), the owner (a member), time
// zones, the warm-up and the allowance it gives day by day, sends counted against it, the sandbox's
// mailbox, and the local driver behind a test-mode test.
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { queueEmail } from '../../src/platform/outbox/send.ts';
import { runWrite } from '../../src/platform/write.ts';
import { clock, tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ok, type Json } from '../helpers/records.ts';
import { waitFor } from '../helpers/wait.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());

const mailbox = (c: Client, body: object) => ok(c.post('/v1/mailboxes', body), 201);
const noSandbox = { sandbox: false };

describe('mailboxes', () => {
  it('creates with defaults, reads back with its allowance, updates and deletes', async () => {
    const t = await tenant(app, noSandbox);
    const box = await mailbox(t.live, { email: 'Ada@Example.COM' });
    expect(box).toEqual({
      id: expect.stringMatching(/^mbx_/), email: 'ada@example.com', display_name: null, connection_id: null, daily_limit: 100, hourly_limit: null,
      warmup: { enabled: false, start: 10, increment_per_day: 5 }, warmup_started_at: null, signature: null, timezone: 'UTC', owner_id: null,
      allowance: { today: 100, this_hour: 100, remaining_today: 100, remaining_this_hour: 100 },
      created_at: expect.any(Number), updated_at: expect.any(Number),
    });
    expect(await ok(t.live.get(`/v1/mailboxes/${box.id}`))).toEqual(box);
    await fails(t.live.post('/v1/mailboxes', { email: 'ada@example.com' }), 409);
    const changed = await ok(t.live.patch(`/v1/mailboxes/${box.id}`, { hourly_limit: 10, display_name: 'Ada', timezone: 'europe/london' }));
    expect(changed).toMatchObject({ hourly_limit: 10, display_name: 'Ada', timezone: 'Europe/London', allowance: { today: 100, this_hour: 10, remaining_this_hour: 10 } });
    await fails(t.live.patch(`/v1/mailboxes/${box.id}`, { timezone: '+02:00' }), 422);
    expect((await ok(t.live.get('/v1/mailboxes?email=ADA@example.com'))).map((m: { id: string }) => m.id)).toEqual([box.id]);
    expect(await ok(t.live.delete(`/v1/mailboxes/${box.id}`))).toEqual({ id: box.id, deleted: true });
    await fails(t.live.get(`/v1/mailboxes/${box.id}`), 404, 'Mailbox not found');
  });

  it('takes only an e-mail connection of the tenant, and a connection in use is not deleted', async () => {
    const t = await tenant(app, noSandbox);
    const other = await tenant(app, noSandbox);
    const conn = await ok(t.live.post('/v1/connections', { kind: 'email', provider: 'local' }), 201);
    const theirs = await ok(other.live.post('/v1/connections', { kind: 'email', provider: 'local' }), 201);
    await fails(t.live.post('/v1/mailboxes', { email: 'a@example.com', connection_id: theirs.id }), 404, 'Connection not found');
    await fails(t.live.post('/v1/mailboxes', { email: 'a@example.com', connection_id: 'conn_nope' }), 404, 'Connection not found');
    const sms = await ok(t.live.post('/v1/connections', { kind: 'sms', provider: 'local' }), 201);
    const refused = await fails(t.live.post('/v1/mailboxes', { email: 'a@example.com', connection_id: sms.id }), 422);
    expect(refused).toMatchObject({ param: 'connection_id', detail: expect.stringMatching(/kind sms/) });
    const box = await mailbox(t.live, { email: 'a@example.com', connection_id: conn.id });
    expect(box.connection_id).toBe(conn.id);
    await fails(t.live.delete(`/v1/connections/${conn.id}`), 409);
    await ok(t.live.delete(`/v1/mailboxes/${box.id}`));
    await ok(t.live.delete(`/v1/connections/${conn.id}`));
  });

  it('belongs to a member: an unknown one is 404, a deleted one leaves it without owner', async () => {
    const t = await tenant(app, noSandbox);
    await fails(t.live.post('/v1/mailboxes', { email: 'a@example.com', owner_id: 'mem_nope' }), 404, 'Member not found');
    const ada = await ok(t.live.post('/v1/members', { name: 'Ada', email: 'ada@example.com' }), 201);
    const box = await mailbox(t.live, { email: 'a@example.com', owner_id: ada.id });
    expect(box.owner_id).toBe(ada.id);
    expect((await ok(t.live.get(`/v1/mailboxes?owner_id=${ada.id}`))).length).toBe(1);
    await ok(t.live.delete(`/v1/members/${ada.id}`));
    expect((await ok(t.live.get(`/v1/mailboxes/${box.id}`))).owner_id).toBeNull();
  });

  it('a warm-up raises the daily allowance day by day up to the daily limit, and sends count against it', async () => {
    const t = await tenant(app, noSandbox);
    const box = await mailbox(t.live, { email: 'a@example.com', daily_limit: 30, hourly_limit: 8, warmup: { enabled: true, start: 5, increment_per_day: 10 } });
    expect(box).toMatchObject({ warmup: { enabled: true, start: 5, increment_per_day: 10 }, warmup_started_at: expect.any(Number), allowance: { today: 5, this_hour: 5, remaining_today: 5, remaining_this_hour: 5 } });
    await clock.advance(86_400);
    expect((await ok(t.live.get(`/v1/mailboxes/${box.id}`))).allowance).toEqual({ today: 15, this_hour: 8, remaining_today: 15, remaining_this_hour: 8 });
    await clock.advance(86_400);
    expect((await ok(t.live.get(`/v1/mailboxes/${box.id}`))).allowance.today).toBe(25);
    await clock.advance(86_400);
    expect((await ok(t.live.get(`/v1/mailboxes/${box.id}`))).allowance.today).toBe(30);
    // A partial warm-up keeps the rest; turning it off and on starts it again.
    const off = await ok(t.live.patch(`/v1/mailboxes/${box.id}`, { warmup: { enabled: false } }));
    expect(off).toMatchObject({ warmup: { enabled: false, start: 5, increment_per_day: 10 }, warmup_started_at: null, allowance: { today: 30 } });
    const on = await ok(t.live.patch(`/v1/mailboxes/${box.id}`, { warmup: { enabled: true } }));
    expect(on).toMatchObject({ warmup_started_at: expect.any(Number), allowance: { today: 5 } });
    // Two sends in test mode (the local driver) count against the test-mode mailbox's allowance.
    const testBox = await mailbox(t.test, { email: 'a@example.com', hourly_limit: 2 });
    for (let i = 0; i < 2; i++) {
      const result = await ok(t.test.post(`/v1/mailboxes/${testBox.id}/test`, { to: `grace${i}@example.org` }));
      expect(result).toMatchObject({ ok: true, response: expect.stringMatching(/local driver/) });
    }
    expect((await ok(t.test.get(`/v1/mailboxes/${testBox.id}`))).allowance).toEqual({ today: 100, this_hour: 2, remaining_today: 98, remaining_this_hour: 0 });
    const refused = await fails(t.test.post(`/v1/mailboxes/${testBox.id}/test`, {}), 409);
    expect(refused.detail).toMatch(/at its limit of 2 messages an hour: it has room again at /);
    expect((await ok(t.test.get(`/v1/outbox?mailbox_id=${testBox.id}`))).length).toBe(2);
  });

  it('a message queued for a mailbox deleted since fails, naming it', async () => {
    const t = await tenant(app, noSandbox);
    const box = await mailbox(t.test, { email: 'a@example.com' });
    await ok(t.test.delete(`/v1/mailboxes/${box.id}`));
    const queued = await runWrite(app.services.database, { orgId: t.org_id, mode: 'test' }, (w) => queueEmail(w, `k:${randomUUID()}`, { from: 'a@example.com', to: ['g@example.org'], subject: 'Hi', text: 'Hi', mailboxId: box.id }));
    const failed = await waitFor(() => ok(t.test.get(`/v1/outbox/${queued.id}`)), (m) => m.status !== 'queued');
    expect(failed).toMatchObject({ status: 'failed', error: `The mailbox ${box.id} was deleted before the message was sent` });
  });

  it('the sandbox has Ada\'s mailbox on example.com, which test sends go through', async () => {
    const t = await tenant(app);
    const [box] = await ok(t.test.get('/v1/mailboxes')) as Json[];
    expect(box).toMatchObject({ email: 'ada@example.com', display_name: 'Ada Lovelace', owner_id: expect.stringMatching(/^mem_/), connection_id: null });
    expect(await ok(t.live.get('/v1/mailboxes'))).toEqual([]);
    const result = await ok(t.test.post(`/v1/mailboxes/${box.id}/test`, {}));
    expect(await ok(t.test.get(`/v1/outbox/${result.outbox_message_id}`))).toMatchObject({ provider: 'local', status: 'delivered', from_address: 'ada@example.com', to_addresses: ['ada@example.com'] });
  });
});
