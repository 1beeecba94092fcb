// What the kernel gives a secret field that no group uses yet: a secret stored as its SHA-256 (a
// write key's, compared and never used), answered by the create and by its rotation only, and a cap
// on every record of a tenant. The resource is defined here, over the webhook_endpoints table (its
// rows subscribe to nothing, so no delivery follows), and served by an app built for this file.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineResource } from '../../src/platform/resource/define.ts';
import { boolean, int, json, secret, text } from '../../src/platform/resource/fields.ts';
import { crudRoutes } from '../../src/platform/resource/routes.ts';
import { tenant, testApp } from '../helpers/app.ts';
import { allEvents } from '../helpers/webhooks.ts';

let made = 0;
const keys = defineResource({
  name: 'signing_key', plural: 'signing-keys', prefix: 'sgk', table: 'webhook_endpoints', tag: 'Keys', tagDescription: 'Records of the secret test', notFound: 'Key not found',
  fields: {
    url: text({ required: true, min: 1, description: 'Label', example: 'shop' }),
    event_types: json({ nullable: false, default: [], input: Type.Array(Type.String()), output: Type.Array(Type.String()), description: 'Unused' }),
    all_events: int({ nullable: false, default: 0, readOnly: true, description: 'Unused' }),
    is_active: boolean({ nullable: false, default: true, description: 'Unused' }),
    secret: secret({
      description: 'The key, shown once', example: 'sk_…', store: 'hash', generate: () => `sk_${++made}_${Math.random().toString(36).slice(2)}`,
      rotate: { summary: 'Roll the key', description: 'A new key; the old one stops at once.' },
    }),
  },
  cap: { max: 2, message: 'At most 2 keys' },
});

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env: { DATABASE_POOL_SIZE: '2', WORKERS: 'off' }, routes: [crudRoutes(keys)] });
});
afterAll(() => app.close());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const stored = (id: string) => app.services.database.db.selectFrom('webhook_endpoints').select(['secret', 'previous_secret']).where('id', '=', id).executeTakeFirstOrThrow();

describe('a hashed secret field', () => {
  it('is shown by the create and the rotation only, and stored as its hash', async () => {
    const t = await tenant(app);
    const created = await t.live.post('/v1/signing-keys', { url: 'shop' });
    expect(created.statusCode, created.body).toBe(201);
    const key = created.json().data;
    expect(key.secret).toMatch(/^sk_\d+_/);
    expect(await stored(key.id)).toEqual({ secret: sha256(key.secret), previous_secret: null });
    const read = (await t.live.get(`/v1/signing-keys/${key.id}`)).json().data;
    expect(read).toEqual({ ...key, secret: undefined });
    expect(read).not.toHaveProperty('secret');
    expect((await t.live.get('/v1/signing-keys')).body).not.toContain(key.secret);
    expect((await t.live.patch(`/v1/signing-keys/${key.id}`, { secret: 'mine' })).statusCode).toBe(422);

    const rolled = await t.live.post(`/v1/signing-keys/${key.id}/rotate-secret`);
    expect(rolled.statusCode).toBe(201);
    const fresh = rolled.json().data.secret as string;
    expect(fresh).not.toBe(key.secret);
    expect(await stored(key.id)).toEqual({ secret: sha256(fresh), previous_secret: null });
    const events = await allEvents(t.live);
    expect(events.filter((e) => e.type.startsWith('signing_key.')).map((e) => e.type)).toEqual(['signing_key.created', 'signing_key.updated']);
    for (const shown of [key.secret, fresh]) expect(JSON.stringify(events)).not.toContain(shown);
  });

  it('goes with a cap on every record of the tenant, freed by a delete', async () => {
    const t = await tenant(app);
    const first = (await t.live.post('/v1/signing-keys', { url: 'a' })).json().data;
    expect((await t.live.post('/v1/signing-keys', { url: 'b' })).statusCode).toBe(201);
    expect((await t.live.post('/v1/signing-keys', { url: 'c' })).json()).toEqual({ type: 'conflict', detail: 'At most 2 keys' });
    expect((await t.test.post('/v1/signing-keys', { url: 'c' })).statusCode).toBe(201);
    await t.live.delete(`/v1/signing-keys/${first.id}`);
    expect((await t.live.post('/v1/signing-keys', { url: 'c' })).statusCode).toBe(201);
  });
});
