// Sending domains through HTTP: the records a new domain is told to publish, its DKIM private key
// kept sealed and never answered (nor in lists, events or logs), names refused (422) and taken twice
// (409), the check of the records against a real DNS server (dnsmasq, test/helpers/dns.ts) with all
// right and with each kind of mistake, a DNS server that never answers, scopes, isolation, the
// sandbox's verified example.com, the key the mail sender signs with (dkim.ts) and the DNS settings.
import { createPrivateKey, createPublicKey, randomBytes, sign, verify } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { unseal } from '../../src/platform/sealing.ts';
import { dkimKeyFor } from '../../src/resources/domains/dkim.ts';
import { capturedLogs, client, tenant, testApp, type Client } from '../helpers/app.ts';
import { DnsServer, dnsAvailable, silentDnsServer, type Published } from '../helpers/dns.ts';
import { fails, ok, type Json } from '../helpers/records.ts';

const SPF_INCLUDE = '_spf.mail.rds.test';
const RETURN_PATH_TARGET = 'bounces.mail.rds.test';
const dns = dnsAvailable ? await DnsServer.start() : undefined;
const app = await testApp({
  env: { DNS_SERVERS: dns?.address ?? '127.0.0.1:9', DNS_TIMEOUT_MS: '3000', SPF_INCLUDE, RETURN_PATH_TARGET, RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' },
});
afterAll(async () => {
  await app.close();
  await dns?.close();
});

const freshDomain = () => `d${randomBytes(5).toString('hex')}.example.test`;
const create = (c: Client, domain: string) => ok(c.post('/v1/domains', { domain }), 201);
const byPurpose = (domain: Json, purpose: string) => domain.records.find((r: Json) => r.purpose === purpose);

/** The records of `domain` as the service told them, published as they are (or as `change` makes them). */
function published(domain: Json, change: Partial<Record<'spf' | 'dkim' | 'dmarc' | 'return_path', Published | undefined>> = {}): Record<string, Published | undefined> {
  const out: Record<string, Published | undefined> = {};
  for (const r of domain.records) out[r.name] = r.purpose in change ? change[r.purpose as keyof typeof change] : r.type === 'CNAME' ? { cname: r.value } : { txt: [r.value] };
  return out;
}

/** Everything the service answered or recorded about a tenant's domains: none of it may hold a private key. */
async function answersOf(c: Client, id: string): Promise<string> {
  const events = await c.get('/v1/events?limit=200');
  return [(await c.get('/v1/domains')).body, (await c.get(`/v1/domains/${id}`)).body, events.body].join('\n');
}

describe('sending domains', () => {
  it('answers the records to publish and keeps the DKIM private key sealed, never answered', async () => {
    const t = await tenant(app, { sandbox: false });
    const made = await create(t.live, 'Mail.Example.TEST.');
    expect(made).toMatchObject({ domain: 'mail.example.test', description: null, status: 'pending', dkim_selector: 'rds1', verified_at: null, last_checked_at: null });
    expect(made.id).toMatch(/^dom_/);
    expect(made.records.map((r: Json) => [r.purpose, r.type, r.name, r.status, r.finding])).toEqual([
      ['spf', 'TXT', 'mail.example.test', 'pending', null],
      ['dkim', 'TXT', 'rds1._domainkey.mail.example.test', 'pending', null],
      ['dmarc', 'TXT', '_dmarc.mail.example.test', 'pending', null],
      ['return_path', 'CNAME', 'bounces.mail.example.test', 'pending', null],
    ]);
    expect(byPurpose(made, 'spf').value).toBe(`v=spf1 include:${SPF_INCLUDE} ~all`);
    expect(byPurpose(made, 'dmarc').value).toBe('v=DMARC1; p=none; rua=mailto:dmarc-reports@mail.example.test');
    expect(byPurpose(made, 'return_path').value).toBe(RETURN_PATH_TARGET);
    const dkim = /^v=DKIM1; k=rsa; p=([A-Za-z0-9+/=]+)$/.exec(byPurpose(made, 'dkim').value)!;
    const publicKey = createPublicKey({ key: Buffer.from(dkim[1], 'base64'), format: 'der', type: 'spki' });
    expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);

    // Stored sealed under the service's secret: it opens to the private half of the published key.
    const row = await app.services.database.db.selectFrom('sending_domains').selectAll().where('id', '=', made.id).executeTakeFirstOrThrow();
    expect(row.dkim_private_key).toMatch(/^v1\./);
    const pem = unseal(app.services.secret, row.dkim_private_key);
    expect(pem).toContain('BEGIN PRIVATE KEY');
    expect(createPublicKey(createPrivateKey(pem)).export({ format: 'der', type: 'spki' }).toString('base64')).toBe(dkim[1]);

    const changed = await ok(t.live.patch(`/v1/domains/${made.id}`, { description: 'Outbound sales' }));
    expect(changed.description).toBe('Outbound sales');
    expect((await t.live.get('/v1/events?type=domain.created')).json().data[0].data.object).toEqual(made);
    const everything = [JSON.stringify(made), await answersOf(t.live, made.id), ...capturedLogs].join('\n');
    expect(everything).not.toContain('PRIVATE KEY');
    expect(everything).not.toContain(pem.split('\n')[1]);
    expect(everything).not.toContain(row.dkim_private_key);
    expect(everything).not.toContain('dkim_private_key');

    expect(await ok(t.live.delete(`/v1/domains/${made.id}`))).toEqual({ id: made.id, deleted: true });
    await fails(t.live.get(`/v1/domains/${made.id}`), 404, 'Domain not found');
  });

  it('stores a name lower-cased in its ASCII form and refuses what is not a domain (422)', async () => {
    const t = await tenant(app, { sandbox: false });
    expect((await create(t.live, 'Bücher-Post.Example.TEST')).domain).toBe('xn--bcher-post-9db.example.test');
    expect((await t.live.get('/v1/domains?domain=b%C3%BCcher-post.example.test.')).json().pagination.total).toBe(1);
    const refused = async (domain: string, msg: string) => {
      const body = await fails(t.live.post('/v1/domains', { domain }), 422);
      expect(body.detail, domain).toEqual([{ loc: ['body', 'domain'], msg, type: 'value_error.domain' }]);
    };
    const invalid = 'domain is not a valid host name (labels of letters, digits and hyphens, 1-63 characters each)';
    await refused('192.0.2.1', 'domain must be a domain name, not an IP address');
    await refused('2001:db8::1', 'domain must be a domain name, not an IP address');
    await refused('[::1]', 'domain must be a domain name, not an IP address');
    await refused('localhost', 'domain must have at least two labels (example.com), not a single name');
    await refused('localhost.', 'domain must have at least two labels (example.com), not a single name');
    for (const domain of ['a..example.com', '-a.example.com', 'a-.example.com', 'exa mple.com', 'ada@example.com', 'under_score.example.com', `${'a'.repeat(64)}.com`, 'http://example.com']) await refused(domain, invalid);
    // 219 characters, 268 in their ASCII form.
    await refused(`${'bücher'.repeat(5)}.`.repeat(7) + 'de', 'domain is longer than 253 characters');
    await fails(t.live.post('/v1/domains', {}), 400, 'domain is required', { param: 'domain' });
    expect((await t.live.get('/v1/domains')).json().pagination.total).toBe(1);
  });

  it('takes a domain once per organization and mode (409)', async () => {
    const t = await tenant(app);
    const first = await create(t.live, 'shop.example.test');
    await fails(t.live.post('/v1/domains', { domain: 'SHOP.example.test.' }), 409, `Domain shop.example.test already belongs to domain ${first.id}`);
    // The sandbox holds example.com in test mode; live mode and other organizations have their own.
    const sandboxed = (await t.test.get('/v1/domains?domain=example.com')).json().data[0];
    await fails(t.test.post('/v1/domains', { domain: 'example.com' }), 409, `Domain example.com already belongs to domain ${sandboxed.id}`);
    await create(t.live, 'example.com');
    await create(t.test, 'shop.example.test');
    await create((await tenant(app, { sandbox: false })).live, 'shop.example.test');
  });

  it('gives the sandbox a verified example.com, whose key the mail sender gets in test mode only', async () => {
    const t = await tenant(app);
    const [domain] = (await t.test.get('/v1/domains')).json().data;
    expect(domain).toMatchObject({ domain: 'example.com', status: 'verified', dkim_selector: 'rds1' });
    expect(domain.verified_at).toEqual(expect.any(Number));
    expect(domain.records.map((r: Json) => r.status)).toEqual(['verified', 'verified', 'verified', 'verified']);
    const events = (await t.test.get('/v1/events?type=domain.verified')).json().data;
    expect(events.map((e: Json) => e.data.object.id)).toEqual([domain.id]);
    const key = await dkimKeyFor(app.services.database.db, { orgId: t.org_id, mode: 'test' }, app.services.secret, 'sales@example.com');
    expect(key).toMatchObject({ domainName: 'example.com', keySelector: 'rds1' });
    expect(signsFor(key!.privateKey, domain)).toBe(true);
    expect(await dkimKeyFor(app.services.database.db, { orgId: t.org_id, mode: 'live' }, app.services.secret, 'example.com')).toBeUndefined();
    // A reset keeps domains (configuration): example.com is not made twice.
    await ok(t.test.post('/v1/sandbox/reset'));
    expect((await t.test.get('/v1/domains')).json().data.map((d: Json) => d.id)).toEqual([domain.id]);
  });

  it('needs domains:read to read and domains:write to add, change and verify', async () => {
    const t = await tenant(app, { sandbox: false });
    const made = await create(t.live, freshDomain());
    const keyWith = async (scopes: string[]) => client(app, (await ok(t.live.post('/auth/v1/api-keys', { name: 'scoped', scopes }), 201)).api_key_token);
    const reader = await keyWith(['domains:read']);
    expect((await ok(reader.get(`/v1/domains/${made.id}`))).id).toBe(made.id);
    await ok(reader.get('/v1/domains'));
    for (const res of [reader.post('/v1/domains', { domain: freshDomain() }), reader.post(`/v1/domains/${made.id}/verify`), reader.patch(`/v1/domains/${made.id}`, { description: 'x' }), reader.delete(`/v1/domains/${made.id}`)]) {
      expect((await fails(res, 403)).scope).toBe('domains:write');
    }
    const other = await keyWith(['contacts:write']);
    expect((await fails(other.get('/v1/domains'), 403)).scope).toBe('domains:read');
    const writer = await keyWith(['domains:write']);
    await create(writer, freshDomain());
    expect((await ok(writer.get('/v1/domains'))).length).toBe(2);
  });

  it('keeps each tenant\'s domains to itself', async () => {
    const a = await tenant(app, { sandbox: false });
    const b = await tenant(app, { sandbox: false });
    const made = await create(a.live, freshDomain());
    for (const res of [b.live.get(`/v1/domains/${made.id}`), b.live.post(`/v1/domains/${made.id}/verify`), b.live.patch(`/v1/domains/${made.id}`, { description: 'x' }), b.live.delete(`/v1/domains/${made.id}`), a.test.get(`/v1/domains/${made.id}`)]) {
      await fails(res, 404, 'Domain not found');
    }
    expect((await b.live.get('/v1/domains')).json().pagination.total).toBe(0);
    expect((await ok(a.live.get(`/v1/domains/${made.id}`))).description).toBeNull();
  });
});

/** Whether a signature made with `privateKey` checks out against the public key the domain's DKIM record publishes. */
function signsFor(privateKey: string, domain: Json): boolean {
  const p = /p=(\S+)$/.exec(byPurpose(domain, 'dkim').value)![1];
  const data = Buffer.from('a message');
  return verify('sha256', data, createPublicKey({ key: Buffer.from(p, 'base64'), format: 'der', type: 'spki' }), sign('sha256', data, privateKey));
}

describe('the DNS settings', () => {
  it('take addresses with or without ports, and refuse names and bad ports by name', () => {
    expect(loadConfig({}).dnsServers).toEqual([]);
    expect(loadConfig({ DNS_SERVERS: '192.0.2.53, 127.0.0.1:5353,[2001:db8::1]:53,2001:db8::2' }).dnsServers).toEqual(['192.0.2.53', '127.0.0.1:5353', '[2001:db8::1]:53', '2001:db8::2']);
    for (const bad of ['dns.example.com', '127.0.0.1:0', '127.0.0.1:70000', '127.0.0.1:', '1.2.3.4,,5.6.7.8']) {
      expect(() => loadConfig({ DNS_SERVERS: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ DNS_SERVERS: bad }), bad).toThrow(/^DNS_SERVERS must be/);
    }
    expect(() => loadConfig({ SPF_INCLUDE: 'not a host' })).toThrow(/^SPF_INCLUDE must be a host name/);
    expect(() => loadConfig({ DNS_TIMEOUT_MS: '10' })).toThrow(/^DNS_TIMEOUT_MS must be at least 100/);
  });
});

describe.skipIf(!dnsAvailable)('verifying a sending domain through DNS (dnsmasq)', () => {
  const verifyOf = (c: Client, id: string) => ok(c.post(`/v1/domains/${id}/verify`));

  it('is verified when every record is published as told, and the mail sender then gets its key', async () => {
    const t = await tenant(app, { sandbox: false });
    const made = await create(t.live, freshDomain());
    const scope = { orgId: t.org_id, mode: 'live' as const };
    expect(await dkimKeyFor(app.services.database.db, scope, app.services.secret, made.domain)).toBeUndefined();
    // The DKIM key is longer than one TXT string (255 characters): published as several, joined.
    expect(byPurpose(made, 'dkim').value.length).toBeGreaterThan(255);
    await dns!.publish(published(made));
    const checked = await verifyOf(t.live, made.id);
    expect(checked).toMatchObject({ status: 'verified', verified_at: expect.any(Number), last_checked_at: expect.any(Number) });
    expect(checked.records.map((r: Json) => [r.purpose, r.status, r.finding])).toEqual([
      ['spf', 'verified', `SPF record includes ${SPF_INCLUDE}`],
      ['dkim', 'verified', 'DKIM record holds this domain\'s public key'],
      ['dmarc', 'verified', 'DMARC record found with p=none'],
      ['return_path', 'verified', `CNAME points to ${RETURN_PATH_TARGET}`],
    ]);
    expect(await ok(t.live.get(`/v1/domains/${made.id}`))).toEqual(checked);
    const event = (await t.live.get('/v1/events?type=domain.verified')).json().data[0];
    expect(event.data.object).toEqual(checked);
    expect(event.previous_attributes).toMatchObject({ status: 'pending', verified_at: null, last_checked_at: null });

    const key = await dkimKeyFor(app.services.database.db, scope, app.services.secret, `sales@${made.domain.toUpperCase()}`);
    expect(key).toMatchObject({ domainName: made.domain, keySelector: 'rds1', privateKey: expect.stringContaining('BEGIN PRIVATE KEY') });
    expect(signsFor(key!.privateKey, made)).toBe(true);
    expect(await dkimKeyFor(app.services.database.db, { orgId: t.org_id, mode: 'test' }, app.services.secret, made.domain)).toBeUndefined();
    expect(await dkimKeyFor(app.services.database.db, scope, app.services.secret, `other.${made.domain}`)).toBeUndefined();

    // A record taken down later fails the next check: the domain is no longer verified, nor signed for.
    await dns!.publish(published(made, { dmarc: undefined }));
    const failed = await verifyOf(t.live, made.id);
    expect(failed).toMatchObject({ status: 'failed', verified_at: null });
    expect(await dkimKeyFor(app.services.database.db, scope, app.services.secret, made.domain)).toBeUndefined();
    expect(JSON.stringify((await t.live.get('/v1/events?limit=50')).json())).not.toContain('PRIVATE KEY');
  });

  it('fails with a finding for each record missing or wrong', async () => {
    const t = await tenant(app, { sandbox: false });
    const made = await Promise.all([0, 1, 2, 3, 4].map(() => create(t.live, freshDomain())));
    const [noInclude, wrongKey, noDmarc, twoSpf, wrongCname] = made;
    const otherKey = byPurpose(made[4], 'dkim').value;
    await dns!.publish({
      ...published(noInclude, { spf: { txt: ['v=spf1 include:_spf.elsewhere.test ~all'] } }),
      ...published(wrongKey, { dkim: { txt: [otherKey] } }),
      ...published(noDmarc, { dmarc: undefined }),
      ...published(twoSpf, { spf: { txt: [byPurpose(twoSpf, 'spf').value, 'v=spf1 -all'] } }),
      ...published(wrongCname, { return_path: { cname: 'bounces.elsewhere.test' }, dmarc: { txt: ['v=DMARC1; p=sometimes'] } }),
    });
    const findings = async (domain: Json) => {
      const checked = await verifyOf(t.live, domain.id);
      expect(checked.status, JSON.stringify(checked.records)).toBe('failed');
      return Object.fromEntries(checked.records.filter((r: Json) => r.status === 'failed').map((r: Json) => [r.purpose, r.finding]));
    };
    expect(await findings(noInclude)).toEqual({ spf: `SPF record does not include ${SPF_INCLUDE}: add include:${SPF_INCLUDE} before its all term` });
    expect(await findings(wrongKey)).toEqual({ dkim: `The DKIM record at rds1._domainkey.${wrongKey.domain} holds another public key than this domain's` });
    expect(await findings(noDmarc)).toEqual({ dmarc: `No TXT record at _dmarc.${noDmarc.domain}` });
    expect(await findings(twoSpf)).toEqual({ spf: `2 SPF records at ${twoSpf.domain}: a domain may publish only one (receivers treat more as an error); merge them into one` });
    expect(await findings(wrongCname)).toEqual({
      return_path: `The CNAME at bounces.${wrongCname.domain} points to bounces.elsewhere.test, not ${RETURN_PATH_TARGET}`,
      dmarc: `The DMARC record at _dmarc.${wrongCname.domain} has no valid policy: p= must be none, quarantine or reject`,
    });
    const events = (await t.live.get('/v1/events?type=domain.verification_failed')).json().data;
    expect(events).toHaveLength(5);
    expect(events[0].data.object.records.find((r: Json) => r.status === 'failed').finding).toContain('DMARC record');

    // Published right (with an SPF record of its own besides the include), the same domain is verified.
    await dns!.publish(published(noInclude, { spf: { txt: [`v=spf1 ip4:192.0.2.0/24 +include:${SPF_INCLUDE.toUpperCase()} -all`] } }));
    expect((await verifyOf(t.live, noInclude.id)).status).toBe('verified');
  });

  it('reports DNS servers that never answer as a finding, within the timeout', async () => {
    const silent = await silentDnsServer();
    const hanging = await testApp({ env: { DNS_SERVERS: silent.address, DNS_TIMEOUT_MS: '1000' } });
    // A dead server first leaves the next one its share of the time.
    const second = await testApp({ env: { DNS_SERVERS: `${silent.address},${dns!.address}`, DNS_TIMEOUT_MS: '4000', SPF_INCLUDE, RETURN_PATH_TARGET } });
    try {
      const t = await tenant(hanging, { sandbox: false });
      const made = await create(t.live, freshDomain());
      const started = Date.now();
      const checked = await verifyOf(t.live, made.id);
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(checked.status).toBe('failed');
      expect(checked.records.map((r: Json) => r.finding)).toEqual([
        `The DNS servers did not answer the TXT query for ${made.domain} within 1 s`,
        `The DNS servers did not answer the TXT query for rds1._domainkey.${made.domain} within 1 s`,
        `The DNS servers did not answer the TXT query for _dmarc.${made.domain} within 1 s`,
        `The DNS servers did not answer the CNAME query for bounces.${made.domain} within 1 s`,
      ]);

      const u = await tenant(second, { sandbox: false });
      const good = await create(u.live, freshDomain());
      await dns!.publish(published(good));
      expect((await verifyOf(u.live, good.id)).status).toBe('verified');
    } finally {
      await second.close();
      await hanging.close();
      await silent.close();
    }
  });
});
