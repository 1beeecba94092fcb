// Hostile input that is not about one route: invalid UTF-8, every flipped byte of real cursors,
// hostile request headers. The walk of every route (enumerated and random bodies and query strings,
// hostile ids in paths) runs in shards, one file per resource group: walks/hostile-input.ts, run by
// the files in shards/. After every test no error has escaped a handler and GET /healthz answers.
import { describe, expect, it } from 'vitest';
import { freshOrg, send } from './support/actors.ts';
import { guarded, queryParams } from './support/api.ts';
import { make } from './support/factories.ts';
import { figures } from './support/figures.ts';
import { json } from './support/reply.ts';
import { snapshot } from './support/snapshot.ts';
import { hostileApp } from './walks/hostile-app.ts';

const { app, api } = await hostileApp(import.meta.filename);

describe('invalid UTF-8', () => {
  it('is refused, or stored exactly as acknowledged', async () => {
    const owner = (await freshOrg(app, 'U')).live;
    const name = Buffer.concat([Buffer.from('{"type":"contacts","name":"a'), Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80]), Buffer.from('z"}')]);
    figures.hostileInputs++;
    const reply = await owner.call('POST', '/v1/lists', { payload: name, headers: { 'content-type': 'application/json' } });
    expect([201, 400, 422].includes(reply.status), reply.body).toBe(true);
    if (reply.status === 201) expect(json(await owner.call('GET', `/v1/lists/${json(reply).data.id}`)).data).toEqual(json(reply).data);
  });
});

describe('cursors', () => {
  it('answers every byte flip, truncation and extension of a real cursor with 400 bad_request', async () => {
    const org = await freshOrg(app, 'C');
    const owner = org.live;
    let tried = 0;
    for (const route of guarded(api).filter((r) => r.method === 'GET' && r.params.length === 0 && queryParams(r).some((p) => p.name === 'cursor'))) {
      for (let i = 0; i < 3; i++) await make(api, owner, route.url, { fresh: true }).catch(() => undefined);
      const first = json(await owner.call('GET', `${route.url}?limit=1`));
      const cursor: string | null = first.next_cursor;
      if (!cursor) continue;
      const variants = new Set<string>();
      for (let i = 0; i < cursor.length; i++) {
        const code = cursor.charCodeAt(i);
        for (const flipped of [code ^ 0x01, code ^ 0x20, code ^ 0x04]) variants.add(cursor.slice(0, i) + String.fromCharCode(flipped) + cursor.slice(i + 1));
        variants.add(cursor.slice(0, i));
      }
      variants.add(`${cursor}A`);
      variants.add(`${cursor}.`);
      variants.add(cursor.split('.').reverse().join('.'));
      variants.delete(cursor);
      for (const variant of variants) {
        figures.hostileInputs++;
        tried++;
        const reply = await owner.call('GET', `${route.url}?limit=1&cursor=${encodeURIComponent(variant)}`);
        expect(reply.status, `${route.url} cursor ${JSON.stringify(variant)} (real ${cursor}) → ${reply.body}`).toBe(400);
        expect(json(reply).type).toBe('bad_request');
      }
      const real = await owner.call('GET', `${route.url}?limit=1&cursor=${encodeURIComponent(cursor)}`);
      expect(real.status, 'the real cursor still works').toBe(200);
    }
    expect(tried).toBeGreaterThan(100);
  });
});

describe('hostile headers', () => {
  it('refuses malformed Idempotency-Key values and never echoes a hostile request id', async () => {
    const org = await freshOrg(app, 'H');
    const before = await snapshot(api, org.live);
    for (const key of ['', ' ', 'k'.repeat(256), 'ключ', 'a b', 'tab\there', '\u0000']) {
      figures.hostileInputs++;
      const reply = await send(app, 'POST', '/v1/lists', {
        body: { name: 'x', type: 'contacts' },
        headers: { authorization: `Bearer ${org.live.token}`, 'idempotency-key': Buffer.from(key, 'utf8').toString('latin1') },
      });
      expect(reply.status, `Idempotency-Key ${JSON.stringify(key)} → ${reply.body}`).toBe(400);
    }
    for (const id of ['<script>', 'x'.repeat(100), 'a b', '../../x']) {
      figures.hostileInputs++;
      const reply = await org.live.call('GET', '/v1/lists', { headers: { 'x-request-id': id } });
      expect(reply.headers['x-request-id']).not.toBe(id);
    }
    for (const authorization of [`Bearer ${'x'.repeat(10_000)}`, 'Bearer svc_live_', 'Bearer svc_test_', `Bearer ${org.live.token.replace('svc_live_', 'svc_test_')}`.slice(0, -1), 'Bearer \u00ff\u00fe']) {
      figures.hostileInputs++;
      const reply = await send(app, 'GET', '/v1/lists', { headers: { authorization: Buffer.from(authorization, 'utf8').toString('latin1') } });
      expect(reply.status, authorization.slice(0, 40)).toBe(401);
    }
    expect(await snapshot(api, org.live)).toBe(before);
  });
});
