// The public side of quotes through HTTP, with no API key: the JSON form and the page of a sent
// quote (escaped, self-contained, under its Content-Security-Policy), the first view, accepting and
// declining with every 400/404/409, tokens retired by edit-as-draft, and the per-address limit.
import { afterAll, describe, expect, it } from 'vitest';
import { clock, tenant, testApp } from '../helpers/app.ts';
import { eventsOf, fails, ok, sentQuote, type Json } from '../helpers/quotes.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_SECOND: '100000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());

const pub = (method: 'GET' | 'POST', url: string, body?: object, remoteAddress?: string) =>
  app.inject({ method, url, ...(body === undefined ? {} : { payload: body }), ...(remoteAddress ? { remoteAddress } : {}) });
const view = (token: string) => pub('GET', `/v1/public/quotes/${token}`);
const accept = (token: string, body: object = { name: 'Ada Lovelace' }) => pub('POST', `/v1/public/quotes/${token}/accept`, body);
const decline = (token: string, body: object = { reason: 'Over budget' }) => pub('POST', `/v1/public/quotes/${token}/decline`, body);

describe('the public JSON form', () => {
  it('shows a sent quote without a key and without internal fields; the first view makes it viewed', async () => {
    const t = await tenant(app);
    const q = await sentQuote(t.live, { tax_percent: 10, terms: 'Net 30' });
    const first = await ok(view(q.public_token));
    expect(first).toEqual({
      number: 'Q-0001', revision: 1, title: 'Team plan', seller: expect.any(String), status: 'viewed', currency: 'USD',
      line_items: [{ name: 'Workshop', description: null, quantity: 2, unit_price: 150_000, discount_percent: 0, subtotal: 300_000, discount: 0, total: 300_000 }],
      subtotal: 300_000, discount_total: 0, tax_percent: 10, tax_total: 30_000, total: 330_000, valid_until: null, terms: 'Net 30',
      sent_at: q.sent_at, accepted_at: null, signer_name: null, declined_at: null,
    });
    expect(first.seller.length).toBeGreaterThan(0);
    const seen = await ok(t.live.get(`/v1/quotes/${q.id}`));
    expect(seen).toMatchObject({ status: 'viewed' });
    expect(seen.viewed_at).toBeGreaterThan(0);
    await ok(view(q.public_token));
    const events = await eventsOf(t.live, 'quote.viewed');
    expect(events).toHaveLength(1);
    expect(events[0].previous_attributes).toMatchObject({ status: 'sent', viewed_at: null });
    // A key is not needed, and a wrong one changes nothing.
    expect((await app.inject({ method: 'GET', url: `/v1/public/quotes/${q.public_token}`, headers: { authorization: 'Bearer nope' } })).statusCode).toBe(200);
  });

  it('answers 404 for unknown tokens, drafts and tokens of an earlier revision', async () => {
    const t = await tenant(app);
    await fails(view('not-a-token'), 404, 'Quote not found');
    await fails(accept('not-a-token'), 404, 'Quote not found');
    await fails(decline('not-a-token'), 404, 'Quote not found');
    await fails(view('x'.repeat(101)), 414);
    const q = await sentQuote(t.live);
    await ok(t.live.post(`/v1/quotes/${q.id}/edit-as-draft`));
    for (const answer of [view(q.public_token), accept(q.public_token), decline(q.public_token)]) await fails(answer, 404, 'Quote not found');
    expect((await ok(t.live.get(`/v1/quotes/${q.id}`))).status).toBe('draft');
  });
});

describe('answers', () => {
  it('accepts in the signer\'s name, recording name, time and address, and leaves the deal to the seller', async () => {
    const t = await tenant(app);
    const deal = await ok(t.live.post('/v1/deals', { name: 'Deal' }), 201);
    const q = await sentQuote(t.live, { deal_id: deal.id });
    await fails(accept(q.public_token, {}), 400);
    await fails(accept(q.public_token, { name: '   ' }), 400, 'name is required: the full name of the person accepting', { param: 'name' });
    await fails(accept(q.public_token, { name: 'Ada', extra: 1 }), 422);
    await fails(accept(q.public_token, { name: 'x'.repeat(201) }), 422);
    const accepted = await ok(accept(q.public_token, { name: '  Ada Lovelace ' }));
    expect(accepted).toMatchObject({ status: 'accepted', signer_name: 'Ada Lovelace' });
    expect(accepted.accepted_at).toBeGreaterThan(0);
    const seller = await ok(t.live.get(`/v1/quotes/${q.id}`));
    expect(seller).toMatchObject({ status: 'accepted', signer_name: 'Ada Lovelace', signer_ip: '127.0.0.1', accepted_at: accepted.accepted_at });
    expect(seller.viewed_at).toBe(accepted.accepted_at);
    const [event] = await eventsOf(t.live, 'quote.accepted');
    expect(event.data.object).toEqual(seller);
    expect(event.previous_attributes).toMatchObject({ status: 'sent', signer_name: null });
    expect(await ok(t.live.get(`/v1/deals/${deal.id}`))).toMatchObject({ status: 'open', stage_id: deal.stage_id });
    await fails(accept(q.public_token), 409, 'A quote that is accepted cannot be accepted');
    await fails(decline(q.public_token), 409, 'A quote that is accepted cannot be declined');
    await fails(t.live.post(`/v1/quotes/${q.id}/void`), 409, 'A quote that is accepted cannot be voided');
    await fails(t.live.post(`/v1/quotes/${q.id}/edit-as-draft`), 409, 'A quote that is accepted cannot be edited as a draft (duplicate it instead)');
    expect((await ok(view(q.public_token))).status).toBe('accepted');
  });

  it('declines with or without a reason; a viewed quote too', async () => {
    const t = await tenant(app);
    const q = await sentQuote(t.live);
    await ok(view(q.public_token));
    const declined = await ok(decline(q.public_token, { reason: ' Over budget ' }));
    expect(declined).toMatchObject({ status: 'declined', accepted_at: null });
    expect(await ok(t.live.get(`/v1/quotes/${q.id}`))).toMatchObject({ status: 'declined', decline_reason: 'Over budget' });
    expect((await eventsOf(t.live, 'quote.declined'))[0].previous_attributes).toMatchObject({ status: 'viewed' });
    await fails(decline(q.public_token), 409, 'A quote that is declined cannot be declined');
    await fails(accept(q.public_token), 409, 'A quote that is declined cannot be accepted');
    const silent = await sentQuote(t.live);
    expect((await ok(decline(silent.public_token, {}))).status).toBe('declined');
    expect((await ok(t.live.get(`/v1/quotes/${silent.id}`))).decline_reason).toBeNull();
    // A declined quote can be revised: the new link works, the old one is gone.
    const revised = await ok(t.live.post(`/v1/quotes/${q.id}/edit-as-draft`));
    expect(revised).toMatchObject({ status: 'draft', revision: 2, decline_reason: null, declined_at: null });
    const resent = await ok(t.live.post(`/v1/quotes/${q.id}/send`));
    expect((await ok(view(resent.public_token))).status).toBe('viewed');
  });

  it('refuses answers to void and expired quotes', async () => {
    const t = await tenant(app);
    const voided = await sentQuote(t.live);
    await ok(t.live.post(`/v1/quotes/${voided.id}/void`));
    expect((await ok(view(voided.public_token))).status).toBe('void');
    await fails(accept(voided.public_token), 409, 'A quote that is void cannot be accepted');
    const until = clock.seconds() + 60;
    const late = await sentQuote(t.live, { valid_until: until });
    clock.set(until + 1);
    expect((await ok(view(late.public_token))).status).toBe('expired');
    await fails(accept(late.public_token), 409, 'A quote that is expired cannot be accepted');
    await fails(decline(late.public_token), 409, 'A quote that is expired cannot be declined');
    expect(await eventsOf(t.live, 'quote.viewed')).toEqual([]);
  });
});

describe('the page', () => {
  it('renders the quote escaped, self-contained, accessible, under a policy that allows only itself', async () => {
    const t = await tenant(app);
    const q = await sentQuote(t.live, { title: '<script>alert(1)</script> & "Co"', terms: '<img src=x onerror=alert(2)>', tax_percent: 20 });
    const res = await pub('GET', `/q/${q.public_token}?utm_source=mail`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[\w+/=]+'; script-src 'sha256-[\w+/=]+'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'$/);
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const html = res.body;
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;');
    expect(html).toContain('&lt;img src=x onerror=alert(2)&gt;');
    expect(html).toContain('$3,600.00');
    expect(html).toMatch(/<label for="signer">Your full name<\/label>\s*<input id="signer" name="name" required/);
    expect(html).toContain(`action="/v1/public/quotes/${q.public_token}/accept"`);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    // Exactly the inline style and script the policy names.
    const { createHash } = await import('node:crypto');
    const hashOf = (tag: string) => `'sha256-${createHash('sha256').update(html.match(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`))![1]).digest('base64')}'`;
    expect(csp).toContain(`style-src ${hashOf('style')}`);
    expect(csp).toContain(`script-src ${hashOf('script')}`);
    expect((await ok(t.live.get(`/v1/quotes/${q.id}`))).status).toBe('viewed');

    await ok(accept(q.public_token));
    const after = (await pub('GET', `/q/${q.public_token}`)).body;
    expect(after).toContain('Accepted by Ada Lovelace on');
    expect(after).not.toContain('<form');
  });

  it('answers a 404 page for unknown and retired links', async () => {
    const res = await pub('GET', '/q/unknown-token');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.body).toContain('<h1>Quote not found</h1>');
  });
});

describe('the per-address limit', () => {
  it('limits the public routes per client address, apart from the API\'s own limit', async () => {
    const limited = await testApp({ env: { PUBLIC_RATE_LIMIT_PER_SECOND: '3', PUBLIC_RATE_LIMIT_PER_MINUTE: '100' } });
    try {
      const t = await tenant(limited);
      const address = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
      const to = (await (await t.live.post('/v1/lists', { name: 'L', type: 'contacts' }))).json().data;
      const c = (await t.live.post('/v1/contacts', { list_id: to.id, name: 'Ada' })).json().data;
      const draft = (await t.live.post('/v1/quotes', { title: 'Q', contact_id: c.id, line_items: [{ name: 'X', unit_price: 1 }] })).json().data;
      const token = (await t.live.post(`/v1/quotes/${draft.id}/send`)).json().data.public_token;
      const get = (addr: string, url = `/v1/public/quotes/${token}`) => limited.inject({ method: 'GET', url, remoteAddress: addr });
      const answers: Json[] = [];
      for (let i = 0; i < 4; i++) answers.push(await get(address, i % 2 ? `/q/${token}` : undefined));
      expect(answers.slice(0, 3).map((r) => r.statusCode)).toEqual([200, 200, 200]);
      expect(answers[3].statusCode).toBe(429);
      expect(answers[3].json().detail).toMatch(/^Rate limit exceeded: at most 3 requests per second and 100 per minute per client address; retry after \d+ s$/);
      expect(Number(answers[3].headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(answers[0].headers['x-ratelimit-limit-second']).toBe('3');
      expect((await limited.inject({ method: 'POST', url: `/v1/public/quotes/${token}/accept`, payload: { name: 'Ada' }, remoteAddress: address })).statusCode).toBe(429);
      // Another address, and the API with a key, are not held back.
      expect((await get(`203.0.113.${Math.floor(Math.random() * 250) + 1}`)).statusCode).toBe(200);
      expect((await t.live.get(`/v1/quotes/${draft.id}`)).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
