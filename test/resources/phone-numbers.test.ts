// Phone numbers through HTTP: contacts store theirs in E.164 on every write (create, update, assert,
// batch, import), national numbers read in the organization's phone_region (GET/PATCH
// /v1/organization) and refused without one; suppressions of sms and phone read numbers the same way.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { errorBody } from '../helpers/errors.ts';
import { upload, waitFor } from '../helpers/imports.ts';
import { fails, ok, type Json } from '../helpers/records.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
});
afterAll(() => app.close());

type T = Awaited<ReturnType<typeof tenant>>;

const NO_COUNTRY_CODE = 'value is not a phone number in international form: write it with its country code (+44 20 7946 0000), or set the organization\'s phone_region';
const INVALID = 'value is not a valid phone number: its length or first digits fit no numbering plan of its country';
const phoneError = (msg: string) => errorBody(422, [{ loc: ['body', 'phone'], msg, type: 'value_error.phone' }], { param: 'phone' });

async function setup(region?: string): Promise<{ t: T; c: Client; list: string }> {
  const t = await tenant(app, { sandbox: false });
  if (region) await ok(t.live.patch('/v1/organization', { phone_region: region }));
  const list = (await ok(t.live.post('/v1/lists', { name: 'People', type: 'contacts' }), 201)).id as string;
  return { t, c: t.live, list };
}

const create = (c: Client, list: string, phone: unknown) => c.post('/v1/contacts', { list_id: list, first_name: 'Ada', phone });

describe('contacts: phone in E.164', () => {
  it('stores international numbers in E.164 however they are written', async () => {
    const { c, list } = await setup();
    const cases: Array<[string, string]> = [
      ['+44 20 7946 0000', '+442079460000'], ['+1 (415) 555-0100', '+14155550100'], ['0044 20 7946 0000', '+442079460000'],
      ['+44-20-7946-0000', '+442079460000'], ['  +1.415.555.0100 ', '+14155550100'], ['+14155550100', '+14155550100'],
    ];
    for (const [written, stored] of cases) {
      const contact = await ok(create(c, list, written), 201);
      expect(contact.phone, written).toBe(stored);
      expect((await ok(c.get(`/v1/contacts/${contact.id}`))).phone).toBe(stored);
    }
  });

  it('refuses a national number without a phone_region, and a number that is none, naming phone; null and empty text clear', async () => {
    const { c, list } = await setup();
    expect((await create(c, list, '020 7946 0000')).json()).toEqual(phoneError(NO_COUNTRY_CODE));
    expect((await create(c, list, '(415) 555-0100')).statusCode).toBe(422);
    expect((await create(c, list, '+44 20 7946 000')).json()).toEqual(phoneError(INVALID));
    expect((await create(c, list, '+1 555 555 0100')).json()).toEqual(phoneError(INVALID));
    expect((await create(c, list, '+999 1234 5678')).json()).toEqual(phoneError('value is not a phone number'));
    expect((await create(c, list, 'call me')).json()).toEqual(phoneError(NO_COUNTRY_CODE));
    expect((await create(c, list, '+44 20 7946 0000 ext. 12')).json()).toEqual(phoneError('value has an extension, which E.164 cannot hold'));
    expect((await c.get('/v1/contacts')).json().pagination.total).toBe(0);

    const contact = await ok(create(c, list, '+44 20 7946 0000'), 201);
    expect((await c.patch(`/v1/contacts/${contact.id}`, { phone: 'nope' })).json()).toEqual(phoneError(NO_COUNTRY_CODE));
    expect((await ok(c.get(`/v1/contacts/${contact.id}`))).phone).toBe('+442079460000');
    expect((await ok(c.patch(`/v1/contacts/${contact.id}`, { phone: null }))).phone).toBeNull();
    expect((await ok(c.patch(`/v1/contacts/${contact.id}`, { phone: '' }))).phone).toBe('');
    expect((await ok(create(c, list, null), 201)).phone).toBeNull();
  });

  it('reads national numbers in the organization\'s phone_region, in both modes; international ones stay as they are', async () => {
    const { t, c, list } = await setup('GB');
    expect((await ok(create(c, list, '020 7946 0000'), 201)).phone).toBe('+442079460000');
    expect((await ok(create(c, list, '00 1 415 555 0100'), 201)).phone).toBe('+14155550100');
    expect((await ok(create(c, list, '+1 (415) 555-0100'), 201)).phone).toBe('+14155550100');
    // A US number written nationally is not a GB one.
    expect((await create(c, list, '(415) 555-0100')).json()).toEqual(phoneError(INVALID));
    const testList = (await ok(t.test.post('/v1/lists', { name: 'Test people', type: 'contacts' }), 201)).id;
    expect((await ok(create(t.test, testList, '07911 123456'), 201)).phone).toBe('+447911123456');

    // A new region applies to the writes after it; stored numbers stay.
    await ok(c.patch('/v1/organization', { phone_region: 'us' }));
    const us = await ok(create(c, list, '(415) 555-0100'), 201);
    expect(us.phone).toBe('+14155550100');
    expect((await ok(create(c, list, '011 44 20 7946 0000'), 201)).phone).toBe('+442079460000');
    expect((await ok(c.patch(`/v1/contacts/${us.id}`, { phone: '212 555 0100' }))).phone).toBe('+12125550100');
    await ok(c.patch('/v1/organization', { phone_region: null }));
    expect((await create(c, list, '(415) 555-0100')).json()).toEqual(phoneError(NO_COUNTRY_CODE));
  });

  it('an update that writes the stored number another way changes nothing', async () => {
    const { c, list } = await setup();
    const contact = await ok(create(c, list, '+44 20 7946 0000'), 201);
    const same = await ok(c.patch(`/v1/contacts/${contact.id}`, { phone: '+44 (0)20 7946 0000' }));
    expect(same).toEqual(contact);
    expect((await c.get('/v1/events?type=contact.updated')).json().pagination.total).toBe(0);
  });

  it('normalizes on assert and on batch assert, a refused record naming phone', async () => {
    const { c, list } = await setup('GB');
    const one = await c('PUT', '/v1/contacts/assert', { list_id: list, work_email: 'ada@example.com', phone: '020 7946 0000' });
    expect(one.statusCode, one.body).toBe(201);
    expect(one.json().data.phone).toBe('+442079460000');
    expect((await c('PUT', '/v1/contacts/assert', { list_id: list, work_email: 'ada@example.com', phone: '+1 415 555 0100' })).json()).toMatchObject({ action: 'updated', data: { phone: '+14155550100' } });
    expect((await c('PUT', '/v1/contacts/assert', { list_id: list, work_email: 'ada@example.com', phone: '12' })).json()).toEqual(phoneError(INVALID));

    const batch = await c('PUT', '/v1/contacts/assert/batch', {
      records: [
        { list_id: list, work_email: 'b@example.com', phone: '07911 123456' },
        { list_id: list, work_email: 'c@example.com', phone: '+44 20 7946' },
        { list_id: list, work_email: 'ada@example.com', phone: '0044 20 7946 0001' },
      ],
    });
    expect(batch.statusCode, batch.body).toBe(200);
    const { results } = batch.json().data;
    expect(results[1]).toEqual({ index: 1, error: { status: 422, type: 'validation_error', detail: [{ loc: ['body', 'phone'], msg: INVALID, type: 'value_error.phone' }], param: 'phone' } });
    const phones = await Promise.all([0, 2].map(async (i) => (await ok(c.get(`/v1/contacts/${results[i].id}`))).phone));
    expect(phones).toEqual(['+447911123456', '+442079460001']);
  });

  it('imports rows with their phones normalized, a row with a number that is none failing at phone', async () => {
    const { t, list } = await setup('GB');
    const csv = [
      'Email,Phone',
      'a@example.com,+44 20 7946 0000',
      'b@example.com,020 7946 0001',
      'c@example.com,+1 (415) 555-0100',
      'd@example.com,not a number',
      "e@example.com,'+49 30 1234567",
    ].join('\n');
    const res = await upload(app, t.live_token, { csv, fields: { object: 'contacts', list_id: list, mapping: { Email: 'work_email', Phone: 'phone' } } });
    expect(res.statusCode, res.body).toBe(201);
    const done = await waitFor(app, t.live_token, `/v1/imports/${String(res.json().data.id)}`);
    expect(done).toMatchObject({ status: 'completed_with_errors', created: 4, failed: 1 });
    const errors = (await ok(t.live.get(`/v1/imports/${String(done.id)}/errors`))) as unknown as Json[];
    expect(errors).toMatchObject([{ row: 5, column: 'Phone', message: 'value is not a phone number' }]);
    const people = (await t.live.get(`/v1/contacts?list_id=${list}&limit=10`)).json().data as Json[];
    expect(Object.fromEntries(people.map((p) => [p.work_email, p.phone]))).toEqual({
      'a@example.com': '+442079460000', 'b@example.com': '+442079460001', 'c@example.com': '+14155550100', 'e@example.com': '+49301234567',
    });
  });
});

describe('GET/PATCH /v1/organization: phone_region', () => {
  it('is null by default, set and cleared with a live key, upper-cased; an unknown region is 422 naming it', async () => {
    const t = await tenant(app, { sandbox: false });
    expect((await ok(t.live.get('/v1/organization'))).phone_region).toBeNull();
    const set = await ok(t.live.patch('/v1/organization', { phone_region: 'gb' }));
    expect(set).toMatchObject({ id: t.org_id, phone_region: 'GB', mode: 'live' });
    expect((await ok(t.test.get('/v1/organization'))).phone_region).toBe('GB');

    const refused = errorBody(422, [{ loc: ['body', 'phone_region'], msg: 'value is not a region phone numbers can be read in: an ISO 3166-1 alpha-2 code like GB or US', type: 'value_error.phone_region' }], { param: 'phone_region' });
    expect((await t.live.patch('/v1/organization', { phone_region: 'XX' })).json()).toEqual(refused);
    expect((await t.live.patch('/v1/organization', { phone_region: 'G1' })).json()).toEqual(refused);
    const long = await t.live.patch('/v1/organization', { phone_region: 'GBR' });
    expect(long.statusCode).toBe(422);
    expect(long.json().param).toBe('phone_region');
    expect((await t.live.patch('/v1/organization', { phone_region: 44 })).statusCode).toBe(422);
    expect((await t.live.patch('/v1/organization', { name: 'Renamed' })).json().detail).toEqual([{ loc: ['body', 'name'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]);
    await fails(t.live.patch('/v1/organization', {}), 400, 'No fields to update');
    // Both modes read it: a test key may not change it.
    await fails(t.test.patch('/v1/organization', { phone_region: 'US' }), 403, 'The organization\'s settings apply to both modes: change them with a live key');
    expect((await ok(t.live.get('/v1/organization'))).phone_region).toBe('GB');

    expect((await ok(t.live.patch('/v1/organization', { phone_region: null }))).phone_region).toBeNull();
    expect((await ok(t.live.get('/v1/organization'))).phone_region).toBeNull();
  });

  it('is each organization\'s own', async () => {
    const a = await tenant(app, { sandbox: false });
    const b = await tenant(app, { sandbox: false });
    await ok(a.live.patch('/v1/organization', { phone_region: 'DE' }));
    expect((await ok(b.live.get('/v1/organization'))).phone_region).toBeNull();
  });
});

describe('suppressions of sms and phone', () => {
  it('store numbers in E.164, national ones read in the phone_region, and refuse a number that is none at address', async () => {
    const { c } = await setup();
    expect((await ok(c.post('/v1/suppressions', { channel: 'sms', address: '+44 20 7946 0000' }), 201)).address).toBe('+442079460000');
    await fails(c.post('/v1/suppressions', { channel: 'sms', address: '+442079460000' }), 409);
    const national = await c.post('/v1/suppressions', { channel: 'phone', address: '020 7946 0000' });
    expect(national.json()).toEqual(errorBody(422, [{ loc: ['body', 'address'], msg: NO_COUNTRY_CODE, type: 'value_error' }], { param: 'address' }));
    await ok(c.patch('/v1/organization', { phone_region: 'GB' }));
    expect((await ok(c.post('/v1/suppressions', { channel: 'phone', address: '020 7946 0000' }), 201)).address).toBe('+442079460000');
    expect((await c.post('/v1/suppressions', { channel: 'sms', address: '+44 20' })).statusCode).toBe(422);
  });
});
