// Suppressions through HTTP on the run's store: manual entries (normalized, one per channel and
// address, removable unless the recipient asked), filters, scopes and isolation; the one check every
// send makes (`suppressionOf`: a suppression, or a suppression list's entry for the address or its
// domain); and the one-click unsubscribe link: minted in a write, stored as its hash only, a page on
// GET that changes nothing, an unsubscribe on POST (RFC 8058's form body, or none) that a second POST
// repeats without a second event.
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { listUnsubscribeHeaders, suppress, suppressionOf, suppressionsOf, unsubscribeLink, type Channel } from '../../src/platform/outbox/suppressions.ts';
import type { Scope } from '../../src/platform/scope.ts';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { fails, ok, type Json } from '../helpers/records.ts';

const PUBLIC_URL = 'https://links.example.test/mail';
const LIMITS = { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_SECOND: '100000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' };
const app = await testApp({ env: { ...LIMITS, PUBLIC_URL } });
afterAll(() => app.close());
const db = app.services.database.db;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const fresh = () => tenant(app, { sandbox: false });
const scopeOf = (t: { org_id: string }, mode: 'live' | 'test' = 'live'): Scope => ({ orgId: t.org_id, mode });
const listed = async (c: Client, url: string) => (await ok(c.get(url))) as Json[];
const eventsOf = (c: Client, type: string) => listed(c, `/v1/events?type=${type}&limit=200`);
const unique = (name: string) => `${name}.${Math.random().toString(36).slice(2, 10)}@example.com`;

/** Mints a link as a send would: inside a write of the tenant. */
const mint = (scope: Scope, target: { channel: Channel; address: string; contact_id?: string | null; message_id?: string | null }) =>
  app.services.writes.run(scope, async (w) => unsubscribeLink(w, target));

const publicCall = (method: 'GET' | 'POST', token: string, options: { payload?: string; headers?: Record<string, string> } = {}) =>
  app.inject({ method, url: `/public/unsubscribe/${token}`, ...options });
const ONE_CLICK = { payload: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } };

describe('manual suppressions', () => {
  it('are created normalized, read, listed with an exact total, refused twice, and removed', async () => {
    const t = await fresh();
    const made = await ok(t.live.post('/v1/suppressions', { channel: 'email', address: '  Ada.Lovelace@Example.COM ', detail: 'Asked by phone' }), 201);
    expect(made).toMatchObject({ channel: 'email', address: 'ada.lovelace@example.com', reason: 'manual', contact_id: null, message_id: null, detail: 'Asked by phone' });
    expect(made.id).toMatch(/^sup_/);
    expect(await ok(t.live.get(`/v1/suppressions/${made.id}`))).toEqual(made);
    const sms = await ok(t.live.post('/v1/suppressions', { channel: 'sms', address: '+4915112345678', reason: 'manual' }), 201);
    const page = (await t.live.get('/v1/suppressions')).json();
    expect(page.pagination.total).toBe(2);
    expect(page.data.map((s: Json) => s.id)).toEqual([sms.id, made.id]);

    // One suppression per channel and address, whatever the case given: the first stands.
    await fails(t.live.post('/v1/suppressions', { channel: 'email', address: 'ADA.LOVELACE@example.com' }), 409,
      `Address ada.lovelace@example.com is already suppressed on email (manual): suppression ${made.id}`);
    // The same address on another channel is another suppression.
    expect((await t.live.post('/v1/suppressions', { channel: 'phone', address: '+4915112345678' })).statusCode).toBe(201);

    // Addresses must fit their channel; reasons other than manual are the service's to record.
    for (const [channel, address] of [['email', '+4915112345678'], ['sms', 'ada@example.com'], ['phone', '015112345678']]) {
      const res = await t.live.post('/v1/suppressions', { channel, address });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().param).toBe('address');
    }
    await fails(t.live.post('/v1/suppressions', { channel: 'email', address: unique('x'), reason: 'unsubscribed' }), 400);
    await fails(t.live.post('/v1/suppressions', { channel: 'fax', address: unique('x') }), 400);
    // A suppression is a fact, not an editable record.
    expect((await t.live.patch(`/v1/suppressions/${made.id}`, { detail: 'x' })).statusCode).toBe(404);

    expect(await ok(t.live.delete(`/v1/suppressions/${made.id}`))).toEqual({ id: made.id, deleted: true });
    await fails(t.live.get(`/v1/suppressions/${made.id}`), 404, 'Suppression not found');
    expect((await t.live.get('/v1/suppressions')).json().pagination.total).toBe(2);
    expect((await eventsOf(t.live, 'suppression.created')).map((e) => e.data.object.id)).toContain(made.id);
    expect((await eventsOf(t.live, 'suppression.deleted')).map((e) => e.data.object.id)).toEqual([made.id]);
    // Removed, the address may be suppressed again.
    expect((await t.live.post('/v1/suppressions', { channel: 'email', address: 'ada.lovelace@example.com' })).statusCode).toBe(201);
  });

  it('filter by reason, channel and address (e-mail addresses in any case)', async () => {
    const t = await fresh();
    const scope = scopeOf(t);
    const manual = await ok(t.live.post('/v1/suppressions', { channel: 'email', address: 'grace@example.com' }), 201);
    const text = await ok(t.live.post('/v1/suppressions', { channel: 'sms', address: '+14155550100' }), 201);
    await app.services.writes.run(scope, (w) => suppress(w, { channel: 'email', address: 'bounced@example.com', reason: 'hard_bounce', message_id: 'msg_1', detail: '550 5.1.1 user unknown' }));
    const ids = async (query: string) => (await listed(t.live, `/v1/suppressions?${query}`)).map((s) => s.address);
    expect(await ids('reason=manual')).toEqual(['+14155550100', 'grace@example.com']);
    expect(await ids('reason=hard_bounce')).toEqual(['bounced@example.com']);
    expect(await ids('channel=sms')).toEqual(['+14155550100']);
    expect(await ids('address=GRACE@example.com')).toEqual(['grace@example.com']);
    expect(await ids('channel=email&reason=manual')).toEqual(['grace@example.com']);
    expect(await ids('channel=sms&address=grace@example.com')).toEqual([]);
    expect((await t.live.get('/v1/suppressions?reason=manual')).json().pagination.total).toBe(2);
    await fails(t.live.get('/v1/suppressions?reason=bogus'), 400);
    expect(manual.id).not.toBe(text.id);
  });

  it('need suppressions:read to read and suppressions:write to write', async () => {
    const t = await fresh();
    const made = await ok(t.live.post('/v1/suppressions', { channel: 'email', address: 'scoped@example.com' }), 201);
    const keyWith = async (scopes: string[]) => (await ok(t.live.post('/auth/v1/api-keys', { name: scopes.join(' '), scopes }), 201)).api_key_token as string;
    const auth = (token: string) => ({ authorization: `Bearer ${token}` });
    const reader = await keyWith(['suppressions:read']);
    const other = await keyWith(['contacts:write']);
    const writer = await keyWith(['suppressions:write']);
    expect((await app.inject({ method: 'GET', url: '/v1/suppressions', headers: auth(reader) })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: `/v1/suppressions/${made.id}`, headers: auth(reader) })).statusCode).toBe(200);
    const refused = await app.inject({ method: 'POST', url: '/v1/suppressions', headers: auth(reader), payload: { channel: 'email', address: 'no@example.com' } });
    expect(refused.statusCode).toBe(403);
    expect((await app.inject({ method: 'DELETE', url: `/v1/suppressions/${made.id}`, headers: auth(reader) })).statusCode).toBe(403);
    expect((await app.inject({ method: 'GET', url: '/v1/suppressions', headers: auth(other) })).statusCode).toBe(403);
    expect((await app.inject({ method: 'POST', url: '/v1/suppressions', headers: auth(writer), payload: { channel: 'email', address: 'yes@example.com' } })).statusCode).toBe(201);
    expect((await app.inject({ method: 'GET', url: '/v1/suppressions', headers: auth(writer) })).statusCode).toBe(200);
  });

  it('belong to one organization and mode', async () => {
    const a = await fresh();
    const b = await fresh();
    const made = await ok(a.live.post('/v1/suppressions', { channel: 'email', address: 'isolated@example.com' }), 201);
    for (const intruder of [a.test, b.live, b.test]) {
      await fails(intruder.get(`/v1/suppressions/${made.id}`), 404, 'Suppression not found');
      await fails(intruder.delete(`/v1/suppressions/${made.id}`), 404, 'Suppression not found');
      expect((await intruder.get('/v1/suppressions')).json().pagination.total).toBe(0);
      // The same address is free elsewhere.
      expect((await intruder.post('/v1/suppressions', { channel: 'email', address: 'isolated@example.com' })).statusCode).toBe(201);
    }
    expect(await suppressionOf(db, scopeOf(a, 'test'), 'email', 'other@example.com')).toBeUndefined();
    expect(await suppressionOf(db, scopeOf(b), 'email', 'isolated@example.com')).toMatchObject({ reason: 'manual' });
    expect((await a.live.get(`/v1/suppressions/${made.id}`)).statusCode).toBe(200);
  });
});

describe('suppressionOf, the check before every send', () => {
  it('answers a suppression, or a suppression list\'s entry for the address or its domain, in the tenant only', async () => {
    const t = await fresh();
    const scope = scopeOf(t);
    const list = await ok(t.live.post('/v1/lists', { name: 'Do not contact', type: 'suppressions' }), 201);
    await ok(t.live.post(`/v1/lists/${list.id}/entries`, { values: ['listed@example.com', 'blocked.example'] }), 201);
    const made = await ok(t.live.post('/v1/suppressions', { channel: 'email', address: 'listed@example.com' }), 201);

    expect(await suppressionOf(db, scope, 'email', 'free@example.com')).toBeUndefined();
    // A suppression of its own comes before the list's entry.
    expect(await suppressionOf(db, scope, 'email', ' LISTED@example.com')).toEqual({ reason: 'manual', source: made.id });
    await ok(t.live.delete(`/v1/suppressions/${made.id}`));
    expect(await suppressionOf(db, scope, 'email', 'listed@example.com')).toEqual({ reason: 'suppression_list', source: list.id });
    expect(await suppressionOf(db, scope, 'email', 'anyone@Blocked.Example')).toEqual({ reason: 'suppression_list', source: list.id });
    expect(await suppressionOf(db, scope, 'email', 'anyone@not-blocked.example')).toBeUndefined();
    // Lists hold e-mail addresses and domains: they suppress no phone number, and no other tenant.
    expect(await suppressionOf(db, scope, 'sms', '+14155550100')).toBeUndefined();
    expect(await suppressionOf(db, scopeOf(t, 'test'), 'email', 'listed@example.com')).toBeUndefined();
    await ok(t.live.post('/v1/suppressions', { channel: 'sms', address: '+14155550100' }), 201);
    expect(await suppressionOf(db, scope, 'sms', '+14155550100')).toMatchObject({ reason: 'manual' });
    expect(await suppressionOf(db, scope, 'phone', '+14155550100')).toBeUndefined();
  });

  it('answers many addresses at once as it answers each (suppressionsOf, a scheduler run\'s read)', async () => {
    const t = await fresh();
    const scope = scopeOf(t);
    const list = await ok(t.live.post('/v1/lists', { name: 'Do not contact', type: 'suppressions' }), 201);
    await ok(t.live.post(`/v1/lists/${list.id}/entries`, { values: ['listed@example.com', 'blocked.example', 'both@example.com'] }), 201);
    await ok(t.live.post('/v1/suppressions', { channel: 'email', address: 'both@example.com' }), 201);
    await ok(t.live.post('/v1/suppressions', { channel: 'email', address: 'own@example.com' }), 201);
    const addresses = ['free@example.com', ' LISTED@example.com', 'anyone@blocked.example', 'both@example.com', 'own@example.com', 'anyone@not-blocked.example'];
    const many = await suppressionsOf(db, scope, 'email', addresses);
    for (const address of addresses) expect(many.get(address.trim().toLowerCase())).toEqual(await suppressionOf(db, scope, 'email', address));
    expect([...many.keys()].sort()).toEqual(['anyone@blocked.example', 'both@example.com', 'listed@example.com', 'own@example.com']);
    expect((await suppressionsOf(db, scopeOf(t, 'test'), 'email', addresses)).size).toBe(0);
    expect((await suppressionsOf(db, scope, 'sms', ['+14155550100'])).size).toBe(0);
  });

  it('is fed by suppress, which keeps the first reason unless the recipient asked', async () => {
    const t = await fresh();
    const scope = scopeOf(t);
    const run = (entry: Parameters<typeof suppress>[1]) => app.services.writes.run(scope, (w) => suppress(w, entry));
    await run({ channel: 'email', address: 'Bounce@Example.com', reason: 'hard_bounce', detail: '550 user unknown' });
    await run({ channel: 'email', address: 'bounce@example.com', reason: 'manual' });
    await run({ channel: 'email', address: 'bounce@example.com', reason: 'hard_bounce' });
    const [first] = await listed(t.live, '/v1/suppressions');
    expect(first).toMatchObject({ address: 'bounce@example.com', reason: 'hard_bounce', detail: '550 user unknown' });
    expect(await eventsOf(t.live, 'suppression.created')).toHaveLength(1);
    expect(await eventsOf(t.live, 'suppression.updated')).toHaveLength(0);

    // A complaint is the recipient's word: it takes the bounce's place and can no longer be removed.
    await run({ channel: 'email', address: 'bounce@example.com', reason: 'complaint', message_id: 'msg_9' });
    const after = await ok(t.live.get(`/v1/suppressions/${first.id}`));
    expect(after).toMatchObject({ reason: 'complaint', message_id: 'msg_9' });
    const [updated] = await eventsOf(t.live, 'suppression.updated');
    expect(updated.data.object).toEqual(after);
    expect(updated.previous_attributes).toMatchObject({ reason: 'hard_bounce' });
    await fails(t.live.delete(`/v1/suppressions/${first.id}`), 409);
    expect(await eventsOf(t.live, 'contact.unsubscribed')).toHaveLength(0);
    expect((await t.live.get('/v1/suppressions')).json().pagination.total).toBe(1);
  });
});

describe('one-click unsubscribe links', () => {
  it('are stored as their hash, show a page that changes nothing, unsubscribe on POST once, and say so again', async () => {
    const t = await fresh();
    const scope = scopeOf(t);
    const address = unique('Ada');
    const link = await mint(scope, { channel: 'email', address, contact_id: 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', message_id: 'msg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' });
    expect(link.token).toMatch(/^[\w-]{43}$/);
    expect(link.url).toBe(`${PUBLIC_URL}/public/unsubscribe/${link.token}`);
    expect(listUnsubscribeHeaders(link.url)).toEqual({ 'List-Unsubscribe': `<${link.url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
    expect(listUnsubscribeHeaders(link.url, 'unsubscribe@example.com')['List-Unsubscribe']).toBe(`<${link.url}>, <mailto:unsubscribe@example.com>`);

    // Only the token's hash is stored: no row holds the token itself.
    const rows = await db.selectFrom('unsubscribe_links').selectAll().where('org_id', '=', t.org_id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ token_hash: sha256(link.token), mode: 'live', channel: 'email', address: address.toLowerCase(), contact_id: 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' });
    expect(JSON.stringify(rows)).not.toContain(link.token);
    expect((await publicCall('GET', rows[0].token_hash)).statusCode).toBe(404);

    // The page names the address and asks; opening it (twice, as scanners do) unsubscribes nobody.
    for (let i = 0; i < 2; i++) {
      const page = await publicCall('GET', `${link.token}?utm_source=newsletter`);
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers['content-security-policy']).toContain("form-action 'self'");
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.body).toContain(address.toLowerCase());
      expect(page.body).toContain(`<form method="post" action="./${link.token}">`);
      expect(page.body).toContain('name="List-Unsubscribe" value="One-Click"');
    }
    expect(await suppressionOf(db, scope, 'email', address)).toBeUndefined();
    expect((await t.live.get('/v1/suppressions')).json().pagination.total).toBe(0);

    // A mail provider's one-click POST (RFC 8058) unsubscribes at once.
    const done = await publicCall('POST', link.token, ONE_CLICK);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toEqual({ data: { unsubscribed: true, channel: 'email', address: address.toLowerCase() } });
    const [suppression] = await listed(t.live, '/v1/suppressions');
    expect(suppression).toMatchObject({ channel: 'email', address: address.toLowerCase(), reason: 'unsubscribed', contact_id: 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', message_id: 'msg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' });
    expect(await suppressionOf(db, scope, 'email', address)).toEqual({ reason: 'unsubscribed', source: suppression.id });
    const [unsubscribed] = await eventsOf(t.live, 'contact.unsubscribed');
    expect(unsubscribed.data.object).toEqual(suppression);
    expect(unsubscribed.data.object).toMatchObject({ address: address.toLowerCase(), channel: 'email', contact_id: 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' });
    expect((await eventsOf(t.live, 'suppression.created')).map((e) => e.data.object)).toEqual([suppression]);

    // Again: the same answer, and nothing more recorded.
    const again = await publicCall('POST', link.token, ONE_CLICK);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(done.json());
    expect(await eventsOf(t.live, 'contact.unsubscribed')).toHaveLength(1);
    expect(await eventsOf(t.live, 'suppression.created')).toHaveLength(1);
    expect((await t.live.get('/v1/suppressions')).json().pagination.total).toBe(1);

    // The page now says so, and the unsubscribe is the recipient's: the API cannot remove it.
    const page = await publicCall('GET', link.token);
    expect(page.body).toContain('You are unsubscribed');
    expect(page.body).not.toContain('<form');
    await fails(t.live.delete(`/v1/suppressions/${suppression.id}`), 409,
      'A suppression for an unsubscribe cannot be removed: the recipient asked not to receive messages. Only manual and hard_bounce suppressions can be removed');
  });

  it('take an empty body, JSON, or a multipart form, and answer a browser with a page', async () => {
    const t = await fresh();
    const scope = scopeOf(t);
    const cases: Array<[string, { payload?: string; headers?: Record<string, string> }]> = [
      ['empty', {}],
      ['empty form', { payload: '', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
      ['json', { payload: '{}', headers: { 'content-type': 'application/json' } }],
      ['multipart', { payload: '--b\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--b--\r\n', headers: { 'content-type': 'multipart/form-data; boundary=b' } }],
    ];
    for (const [name, options] of cases) {
      const address = unique(name.replace(' ', '-'));
      const link = await mint(scope, { channel: 'email', address });
      const res = await publicCall('POST', link.token, options);
      expect(res.statusCode, `${name}: ${res.body}`).toBe(200);
      expect(await suppressionOf(db, scope, 'email', address), name).toMatchObject({ reason: 'unsubscribed' });
    }
    // The page's button, from a browser: a page back.
    const address = unique('browser');
    const link = await mint(scope, { channel: 'email', address });
    const res = await publicCall('POST', link.token, { payload: ONE_CLICK.payload, headers: { ...ONE_CLICK.headers, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('You are unsubscribed');
    expect(res.body).toContain(address);
    expect(await eventsOf(t.live, 'contact.unsubscribed')).toHaveLength(cases.length + 1);
    // A phone number's link works the same.
    const sms = await mint(scope, { channel: 'sms', address: '+14155550123' });
    expect((await publicCall('POST', sms.token)).json()).toEqual({ data: { unsubscribed: true, channel: 'sms', address: '+14155550123' } });
  });

  it('turn a manual suppression into an unsubscribe, which the API can no longer remove', async () => {
    const t = await fresh();
    const made = await ok(t.live.post('/v1/suppressions', { channel: 'email', address: 'manual@example.com' }), 201);
    const link = await mint(scopeOf(t), { channel: 'email', address: 'manual@example.com' });
    expect((await publicCall('GET', link.token)).body).toContain('<form');
    expect((await publicCall('POST', link.token, ONE_CLICK)).statusCode).toBe(200);
    expect(await ok(t.live.get(`/v1/suppressions/${made.id}`))).toMatchObject({ reason: 'unsubscribed' });
    const [updated] = await eventsOf(t.live, 'suppression.updated');
    expect(updated.previous_attributes).toMatchObject({ reason: 'manual' });
    expect(await eventsOf(t.live, 'contact.unsubscribed')).toHaveLength(1);
    await fails(t.live.delete(`/v1/suppressions/${made.id}`), 409);
  });

  it('answer an unknown token with 404, a page for a browser and JSON otherwise', async () => {
    const token = 'Xq3v0sQx2kH1n8bTqR6yWc4dZp7fLm9aJ0eUuVtYiOs';
    const page = await publicCall('GET', token);
    expect(page.statusCode).toBe(404);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('Link not found');
    const posted = await publicCall('POST', token, ONE_CLICK);
    expect(posted.statusCode).toBe(404);
    expect(posted.json()).toEqual({ type: 'not_found', detail: 'Unsubscribe link not found' });
    const browser = await publicCall('POST', token, { ...ONE_CLICK, headers: { ...ONE_CLICK.headers, accept: 'text/html' } });
    expect(browser.statusCode).toBe(404);
    expect(browser.body).toContain('Link not found');
  });

  it('are cleared with the test-mode data by a sandbox reset', async () => {
    const t = await fresh();
    const link = await mint(scopeOf(t, 'test'), { channel: 'email', address: unique('sandbox') });
    expect((await publicCall('POST', link.token)).statusCode).toBe(200);
    expect((await t.test.get('/v1/suppressions')).json().pagination.total).toBe(1);
    expect((await t.test.post('/v1/sandbox/reset')).statusCode).toBe(200);
    expect((await t.test.get('/v1/suppressions')).json().pagination.total).toBe(0);
    expect((await publicCall('GET', link.token)).statusCode).toBe(404);
  });
});
