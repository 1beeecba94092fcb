// Provider connections through HTTP: credentials written, sealed and never answered (not in the
// answer, reads, events, the stored idempotent answer or the raw row), settings checked per
// provider, kind and provider fixed at creation, private servers refused unless allowed, filters,
// tenancy, scopes, and a sandbox reset that keeps them.
import { afterAll, describe, expect, it } from 'vitest';
import { unseal } from '../../src/platform/sealing.ts';
import { client, tenant, testApp } from '../helpers/app.ts';
import { fails, ids, ok, type Json } from '../helpers/records.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
const strict = await testApp({ env: { OUTBOUND_ALLOW_PRIVATE: 'false' } });
afterAll(() => Promise.all([app.close(), strict.close()]));

const PASSWORD = 'correct-horse-battery-staple';
const smtp = { kind: 'email', provider: 'smtp', name: 'Sales', settings: { smtp: { host: 'smtp.example.com', port: 587 }, imap: { host: 'imap.example.com', port: 993, secure: true } }, credentials: { username: 'sales@example.com', password: PASSWORD } };
const noSandbox = { sandbox: false };
const rawRow = (id: string) => app.services.database.db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('connections', () => {
  it('seals credentials: answered only as credentials_set, nowhere in reads, events or stored answers', async () => {
    const t = await tenant(app, noSandbox);
    const res = await t.live.post('/v1/connections', smtp, { 'idempotency-key': 'conn-1' });
    const conn = await ok(Promise.resolve(res), 201);
    expect(conn).toMatchObject({ id: expect.stringMatching(/^conn_/), kind: 'email', provider: 'smtp', name: 'Sales', settings: smtp.settings, credentials_set: true, is_default: false });
    expect(conn).not.toHaveProperty('credentials');
    expect(res.body).not.toContain(PASSWORD);
    const again = await t.live.post('/v1/connections', smtp, { 'idempotency-key': 'conn-1' });
    expect(again.statusCode).toBe(201);
    expect(JSON.parse(again.body).data.id).toBe(conn.id);
    for (const url of [`/v1/connections/${conn.id}`, '/v1/connections', '/v1/events?type=connection.created']) {
      const read = await t.live.get(url);
      expect(read.statusCode).toBe(200);
      expect(read.body).toContain(conn.id);
      expect(read.body).not.toContain(PASSWORD);
      expect(read.body).not.toContain('"credentials"');
    }
    const stored = await app.services.database.db.selectFrom('idempotency_keys').selectAll().where('org_id', '=', t.org_id).execute();
    expect(stored.length).toBeGreaterThan(0);
    expect(JSON.stringify(stored)).not.toContain(PASSWORD);
    const row = await rawRow(conn.id);
    expect(typeof row.credentials).toBe('string');
    expect(row.credentials).not.toContain(PASSWORD);
    expect(JSON.parse(unseal(app.services.secret, row.credentials!))).toEqual(smtp.credentials);
    expect(() => unseal('another secret of enough length for a key', row.credentials!)).toThrow();
  });

  it('checks settings per provider, the provider per kind, and the credentials\' shape', async () => {
    const t = await tenant(app, noSandbox);
    const badPort = await fails(t.live.post('/v1/connections', { ...smtp, settings: { smtp: { host: 'smtp.example.com', port: 70000 } } }), 422);
    expect(badPort.param).toBe('settings.smtp.port');
    expect((await fails(t.live.post('/v1/connections', { ...smtp, provider: 'pigeon' }), 400)).detail).toMatch(/Invalid provider for kind email: must be one of local, smtp/);
    await fails(t.live.post('/v1/connections', { ...smtp, kind: 'fax' }), 400);
    const badCredentials = await fails(t.live.post('/v1/connections', { ...smtp, credentials: { username: 'a', password: 7 } }), 422);
    expect(badCredentials).toMatchObject({ type: 'validation_error' });
    expect(JSON.stringify(badCredentials)).toMatch(/credentials/);
    await fails(t.live.post('/v1/connections', { ...smtp, credentials: { username: 'a' } }), 422);
    expect(await ok(t.live.get('/v1/connections'))).toEqual([]);
  });

  it('replaces credentials on update, clears them with null, and keeps kind and provider', async () => {
    const t = await tenant(app, noSandbox);
    const conn = await ok(t.live.post('/v1/connections', smtp), 201);
    const before = (await rawRow(conn.id)).credentials;
    const changed = await ok(t.live.patch(`/v1/connections/${conn.id}`, { credentials: { username: 'sales@example.com', password: 'new-password' } }));
    expect(changed.credentials_set).toBe(true);
    const after = (await rawRow(conn.id)).credentials!;
    expect(after).not.toBe(before);
    expect(JSON.parse(unseal(app.services.secret, after)).password).toBe('new-password');
    const badPort = await fails(t.live.patch(`/v1/connections/${conn.id}`, { settings: { smtp: { host: 'smtp.example.com', port: 0 } } }), 422);
    expect(badPort.param).toBe('settings.smtp.port');
    const cleared = await ok(t.live.patch(`/v1/connections/${conn.id}`, { credentials: null }));
    expect(cleared.credentials_set).toBe(false);
    expect((await rawRow(conn.id)).credentials).toBeNull();
    expect((await fails(t.live.patch(`/v1/connections/${conn.id}`, { kind: 'email' }), 422)).param).toBe('kind');
    expect((await fails(t.live.patch(`/v1/connections/${conn.id}`, { provider: 'local' }), 422)).param).toBe('provider');
    const updates = await t.live.get('/v1/events?type=connection.updated');
    expect(updates.body).toContain(conn.id);
    expect(updates.body).not.toContain('new-password');
    expect(updates.body).not.toContain(PASSWORD);
  });

  it('refuses a private or loopback server unless the operator allows it', async () => {
    const t = await tenant(strict, noSandbox);
    const c = client(strict, t.live_token);
    for (const host of ['127.0.0.1', 'localhost', '10.1.2.3']) {
      const refused = await fails(c.post('/v1/connections', { ...smtp, settings: { smtp: { host, port: 25 } } }), 400);
      expect(refused.param).toBe('settings.smtp.host');
    }
    await ok(c.post('/v1/connections', smtp), 201);
    const allowed = await tenant(app, noSandbox);
    await ok(allowed.live.post('/v1/connections', { ...smtp, settings: { smtp: { host: '127.0.0.1', port: 2525 } } }), 201);
  });

  it('refuses a Twilio API URL at a private or loopback address unless the operator allows it', async () => {
    const t = await tenant(strict, noSandbox);
    const c = client(strict, t.live_token);
    const save = (apiUrl: string) => c.post('/v1/connections', {
      kind: 'telephony', provider: 'twilio', settings: { account_sid: `AC${'0'.repeat(32)}`, api_url: apiUrl }, credentials: { auth_token: 'twilio-auth-token-000000' },
    });
    expect((await fails(save('http://127.0.0.1:9/'), 400)).param).toBe('settings.api_url');
    expect((await fails(save('http://localhost/'), 400)).param).toBe('settings.api_url');
    expect((await fails(save('ftp://api.twilio.com/'), 400)).detail).toBe('settings.api_url must be an http(s) URL');
    await ok(save('https://api.twilio.com'), 201);
  });

  it('filters by kind and provider, and takes the local driver for sms', async () => {
    const t = await tenant(app, noSandbox);
    const real = await ok(t.live.post('/v1/connections', smtp), 201);
    const local = await ok(t.live.post('/v1/connections', { kind: 'email', provider: 'local' }), 201);
    expect(ids(await ok(t.live.get('/v1/connections')) as Json[])).toEqual([local.id, real.id]);
    expect(ids(await ok(t.live.get('/v1/connections?provider=smtp')) as Json[])).toEqual([real.id]);
    expect(ids(await ok(t.live.get('/v1/connections?provider=local&kind=email')) as Json[])).toEqual([local.id]);
    const sms = await ok(t.live.post('/v1/connections', { kind: 'sms', provider: 'local', name: 'Texts recorded' }), 201);
    expect(sms).toMatchObject({ kind: 'sms', provider: 'local', credentials_set: false });
    expect(ids(await ok(t.live.get('/v1/connections?kind=sms')) as Json[])).toEqual([sms.id]);
    expect((await fails(t.live.post('/v1/connections', { kind: 'sms', provider: 'vonage' }), 400)).detail).toBe('Invalid provider for kind sms: must be one of local, twilio');
  });

  it('belongs to one organization and mode, and needs the connections scopes', async () => {
    const t = await tenant(app, noSandbox);
    const other = await tenant(app, noSandbox);
    const conn = await ok(t.live.post('/v1/connections', smtp), 201);
    await fails(other.live.get(`/v1/connections/${conn.id}`), 404, 'Connection not found');
    await fails(t.test.get(`/v1/connections/${conn.id}`), 404, 'Connection not found');
    await fails(other.live.patch(`/v1/connections/${conn.id}`, { name: 'x' }), 404);
    await fails(other.live.delete(`/v1/connections/${conn.id}`), 404);
    const keyWith = async (scopes: string[]) => client(app, (await ok(t.live.post('/auth/v1/api-keys', { name: 'scoped', scopes }), 201)).api_key_token);
    const reader = await keyWith(['connections:read']);
    expect(ids(await ok(reader.get('/v1/connections')) as Json[])).toEqual([conn.id]);
    await fails(reader.post('/v1/connections', smtp), 403);
    await fails(reader.delete(`/v1/connections/${conn.id}`), 403);
    const other_scope = await keyWith(['contacts:read']);
    await fails(other_scope.get('/v1/connections'), 403);
    const writer = await keyWith(['connections:write']);
    await ok(writer.patch(`/v1/connections/${conn.id}`, { name: 'Renamed' }));
    expect(await ok(t.live.delete(`/v1/connections/${conn.id}`))).toEqual({ id: conn.id, deleted: true });
  });

  it('is kept by a sandbox reset', async () => {
    const t = await tenant(app);
    const conn = await ok(t.test.post('/v1/connections', { kind: 'email', provider: 'local', name: 'Kept' }), 201);
    await ok(t.test.post('/v1/sandbox/reset'));
    expect(await ok(t.test.get(`/v1/connections/${conn.id}`))).toMatchObject({ name: 'Kept' });
  });
});
