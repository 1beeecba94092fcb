// Products through HTTP: defaults and validation, the SKU unique per tenant (409 naming the holder),
// filters with exact totals, the active products quotes can use, assert by SKU, custom fields,
// search, and tenant isolation.
import { afterAll, describe, expect, it } from 'vitest';
import { tenant, testApp } from '../helpers/app.ts';
import { fails, ok, product, type Json } from '../helpers/quotes.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());

const ids = (page: Json) => page.data.map((x: Json) => x.id).sort();

describe('products', () => {
  it('creates with defaults, normalizes the currency and refuses bad input', async () => {
    const t = await tenant(app);
    const plain = await product(t.live);
    expect(plain).toMatchObject({ name: 'Seat', unit_price: 12_000, currency: 'USD', active: true, sku: null, description: null, custom_fields: {} });
    expect(plain.id).toMatch(/^prd_/);
    expect(await product(t.live, { currency: 'eur', sku: 'E-1', active: false })).toMatchObject({ currency: 'EUR', sku: 'E-1', active: false });
    expect((await fails(t.live.post('/v1/products', { name: 'X', unit_price: 1, currency: 'XYZ' }), 422)).detail[0]).toMatchObject({ loc: ['body', 'currency'], type: 'value_error.currency' });
    await fails(t.live.post('/v1/products', { name: 'X', unit_price: -1 }), 422);
    await fails(t.live.post('/v1/products', { name: 'X', unit_price: 1.5 }), 422);
    await fails(t.live.post('/v1/products', { unit_price: 1 }), 400);
    await fails(t.live.post('/v1/products', { name: 'X' }), 400);
    await fails(t.live.post('/v1/products', { name: 'X', unit_price: 1, price: 2 }), 422);
    await fails(t.live.patch(`/v1/products/${plain.id}`, {}), 400, 'No fields to update');
    await fails(t.live.get('/v1/products/prd_missing'), 404, 'Product not found');
  });

  it('keeps the SKU unique within a tenant: 409 naming the holder, free in other tenants and modes', async () => {
    const t = await tenant(app);
    const first = await product(t.live, { sku: 'TEAM-SEAT' });
    await fails(t.live.post('/v1/products', { name: 'Other', unit_price: 1, sku: 'TEAM-SEAT' }), 409, `Sku TEAM-SEAT already belongs to product ${first.id}`);
    const second = await product(t.live, { sku: 'OTHER' });
    await fails(t.live.patch(`/v1/products/${second.id}`, { sku: 'TEAM-SEAT' }), 409, `Sku TEAM-SEAT already belongs to product ${first.id}`);
    await product(t.test, { sku: 'TEAM-SEAT' });
    await product((await tenant(app)).live, { sku: 'TEAM-SEAT' });
    // Freed by a delete.
    await ok(t.live.delete(`/v1/products/${first.id}`));
    expect(await ok(t.live.patch(`/v1/products/${second.id}`, { sku: 'TEAM-SEAT' }))).toMatchObject({ sku: 'TEAM-SEAT' });
  });

  it('filters by active, currency, SKU and name with exact totals; lists quotable (active) products', async () => {
    const t = await tenant(app);
    const a = await product(t.live, { name: 'Team seat', sku: 'A' });
    const b = await product(t.live, { name: 'Business seat', sku: 'B', currency: 'EUR' });
    const c = await product(t.live, { name: 'Legacy', sku: 'C', active: false });
    const page = async (url: string) => (await t.live.get(url)).json();
    expect(ids(await page('/v1/products?active=true'))).toEqual([a.id, b.id].sort());
    expect((await page('/v1/products?active=false')).pagination.total).toBe(1);
    expect(ids(await page('/v1/products?currency=eur'))).toEqual([b.id]);
    expect(ids(await page('/v1/products?sku=C'))).toEqual([c.id]);
    expect(ids(await page('/v1/products?name=SEAT'))).toEqual([a.id, b.id].sort());
    expect((await page('/v1/products')).pagination.total).toBe(3);

    const quotable = await page('/v1/quotes/quotable-products');
    expect(ids(quotable)).toEqual([a.id, b.id].sort());
    expect(quotable.pagination.total).toBe(2);
    expect(ids(await page('/v1/quotes/quotable-products?currency=usd'))).toEqual([a.id]);
    const first = await page('/v1/quotes/quotable-products?limit=1');
    expect(first.pagination).toMatchObject({ total: 2, has_next: true });
    const second = await page(`/v1/quotes/quotable-products?limit=1&cursor=${first.next_cursor}`);
    expect([...first.data, ...second.data].map((x: Json) => x.id).sort()).toEqual([a.id, b.id].sort());
    await fails(t.live.get('/v1/quotes/quotable-products?active=false'), 422);
    await fails(t.live.get('/v1/quotes/quotable-products?currency=US'), 422);
    // Another tenant's catalog stays its own.
    expect((await (await tenant(app)).live.get('/v1/quotes/quotable-products')).json().pagination.total).toBe(0);
  });

  it('asserts by SKU: created, updated, unchanged', async () => {
    const t = await tenant(app);
    const created = await t.live('PUT', '/v1/products/assert', { sku: 'WS-1', name: 'Workshop', unit_price: 100_000 });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ action: 'created', data: { sku: 'WS-1', unit_price: 100_000 } });
    const updated = await t.live('PUT', '/v1/products/assert', { sku: 'WS-1', name: 'Workshop', unit_price: 120_000 });
    expect(updated.json()).toMatchObject({ action: 'updated', data: { id: created.json().data.id, unit_price: 120_000 } });
    const same = await t.live('PUT', '/v1/products/assert', { sku: 'WS-1', name: 'Workshop', unit_price: 120_000 });
    expect(same.json().action).toBe('noop');
    expect((await t.live('PUT', '/v1/products/assert', { name: 'No key', unit_price: 1 })).statusCode).toBe(422);
    expect((await t.live.get('/v1/products')).json().pagination.total).toBe(1);
  });

  it('carries custom fields (filtered) and is found by full-text search', async () => {
    const t = await tenant(app);
    await ok(t.live.post('/v1/fields', { object: 'products', name: 'family', data_type: 'text' }), 201);
    const tagged = await product(t.live, { name: 'Onboarding workshop', description: 'Two half-days, remote', custom_fields: { family: 'services' } });
    await product(t.live, { name: 'Seat' });
    expect(tagged.custom_fields).toEqual({ family: 'services' });
    expect(ids((await t.live.get('/v1/products?custom_fields.family=services')).json())).toEqual([tagged.id]);
    await fails(t.live.post('/v1/products', { name: 'X', unit_price: 1, custom_fields: { unknown: 1 } }), 422);
    const found = (await t.live.post('/v1/search/products', { q: 'half work' })).json();
    expect(ids(found)).toEqual([tagged.id]);
    expect((await (await tenant(app)).live.post('/v1/search/products', { q: 'workshop' })).json().pagination.total).toBe(0);
  });

  it('answers another tenant\'s and the other mode\'s products like missing ones', async () => {
    const t = await tenant(app);
    const u = await tenant(app);
    const mine = await product(t.live);
    for (const other of [u.live, u.test, t.test]) {
      await fails(other.get(`/v1/products/${mine.id}`), 404, 'Product not found');
      await fails(other.patch(`/v1/products/${mine.id}`, { name: 'Taken' }), 404, 'Product not found');
      await fails(other.delete(`/v1/products/${mine.id}`), 404, 'Product not found');
    }
    expect(await ok(t.live.get(`/v1/products/${mine.id}`))).toEqual(mine);
  });
});
