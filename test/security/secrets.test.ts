// Secrets stay secret: key listings never carry tokens or hashes; no response carries a stack trace
// or an internal message, not even for a server fault; no log line of an app built here or of a
// service process (at the most verbose level) holds a token, a token hash or a request body value.
// Every other security test file searches its own captured logs the same way when it ends.
import { afterAll, describe, expect, it } from 'vitest';
import { capturedLogs, isPostgres, testApp } from '../helpers/app.ts';
import { freshOrg, send } from './support/actors.ts';
import { reportFigures } from './support/figures.ts';
import { internalsIn, json } from './support/reply.ts';
import { bodySentinel, expectNoSecretsInLogs, rememberToken, secretsIn } from './support/secrets.ts';
import { processActor, startServer, stopAllServers } from './support/server-process.ts';
import { freshStore, orgIn, type FreshStore } from './support/stores.ts';

const app = await testApp();
const stores: FreshStore[] = [];

afterAll(async () => {
  await stopAllServers();
  for (const store of stores) await store.drop();
  await app.close();
  reportFigures(import.meta.filename, isPostgres() ? 'postgres' : 'sqlite');
  expectNoSecretsInLogs(capturedLogs);
});

describe('tokens', () => {
  it('are never in a key listing, in either mode, nor their hashes', async () => {
    const org = await freshOrg(app, 'K');
    const made: string[] = [org.live.token, org.test.token];
    for (const [who, mode] of [[org.live, 'live'], [org.live, 'test'], [org.test, 'test']] as const) {
      const created = json(await who.call('POST', '/auth/v1/api-keys', { body: { name: bodySentinel(), mode } })).data;
      expect(created.api_key_token).toMatch(new RegExp(`^svc_${mode}_`));
      made.push(created.api_key_token);
    }
    for (const who of [org.live, org.test]) {
      const reply = await who.call('GET', '/auth/v1/api-keys');
      expect(reply.status).toBe(200);
      for (const token of made) {
        expect(reply.body.includes(token)).toBe(false);
        expect(reply.body.includes(token.replace(/^svc_(live|test)_/, ''))).toBe(false);
      }
      expect(secretsIn(reply.body).filter((s) => !s.startsWith('body value')), 'secrets in the key listing').toEqual([]);
      for (const key of json(reply).data.keys) expect(Object.keys(key).filter((k) => /token|hash|secret/i.test(k))).toEqual([]);
    }
  });

  it('appear in no response but the one that creates them', async () => {
    const org = await freshOrg(app, 'T');
    const hook = await org.live.call('POST', '/v1/webhooks', { body: { url: 'https://example.com/hook', event_types: ['campaign.paused'] } });
    expect(secretsIn(hook.body)).toHaveLength(1); // the webhook secret, shown once
    const urls = ['/v1/lists', '/v1/contacts', '/v1/events?limit=200', '/auth/v1/api-keys', '/v1/usage', '/v1/openapi.json', '/v1/webhooks', `/v1/webhooks/${json(hook).data.id}`];
    for (const url of urls) {
      const reply = await org.live.call('GET', url);
      expect(secretsIn(reply.body).filter((s) => !s.startsWith('body value')), url).toEqual([]);
    }
  });
});

describe('responses of a server fault', () => {
  it('carry only a generic detail when the store is gone', async () => {
    const broken = await testApp();
    const org = await freshOrg(broken, 'S');
    await broken.services.database.close();
    const replies = [
      await send(broken, 'GET', '/v1/lists', { headers: { authorization: `Bearer ${org.live.token}` }, check: { allowUnavailable: true, allowServerError: true } }),
      await send(broken, 'POST', '/v1/lists', { body: { name: bodySentinel(), type: 'contacts' }, headers: { authorization: `Bearer ${org.live.token}` }, check: { allowUnavailable: true, allowServerError: true } }),
      await send(broken, 'GET', '/healthz', { check: { allowUnavailable: true, allowServerError: true } }),
    ];
    for (const reply of replies) {
      expect(reply.status, reply.body).toBeGreaterThanOrEqual(500);
      expect(internalsIn(reply.body), reply.body).toBeUndefined();
      // Nothing but the generic body of a fault or of an unavailable store.
      expect([
        { type: 'internal_error', detail: 'Internal Server Error' },
        { type: 'service_unavailable', detail: 'The service is temporarily unavailable; retry with backoff' },
      ], reply.body).toContainEqual(json(reply));
    }
    await broken.close().catch(() => undefined);
  });
});

describe('logs', () => {
  it('of a service process at LOG_LEVEL=trace hold no token, hash or body value', async () => {
    const store = await freshStore('secrets');
    stores.push(store);
    const server = await startServer({ DATABASE_URL: store.url, LOG_LEVEL: 'trace' });
    const org = await orgIn(store.url);
    const owner = processActor(() => server.base, org.org_id, org.live_token);
    const list = json(await owner.call('POST', '/v1/lists', { body: { name: bodySentinel(), type: 'contacts', description: bodySentinel() } })).data;
    await owner.call('POST', '/v1/contacts', { body: { list_id: list.id, name: bodySentinel(), work_email: `${bodySentinel()}@example.com`, title: bodySentinel() } });
    await owner.call('POST', '/v1/contacts', { body: { list_id: list.id, work_email: bodySentinel() } }); // 422
    await owner.call('POST', '/v1/contacts', { body: { list_id: bodySentinel(), name: bodySentinel() } }); // 404
    await owner.call('POST', '/v1/lists', { body: { name: bodySentinel(), type: bodySentinel() } }); // 400
    await owner.call('PATCH', `/v1/lists/${list.id}`, { body: { name: bodySentinel(), [bodySentinel()]: bodySentinel() } }); // 422
    await owner.call('POST', '/v1/lists', { body: { name: bodySentinel(), type: 'contacts' }, headers: { 'idempotency-key': bodySentinel() } });
    const key = json(await owner.call('POST', '/auth/v1/api-keys', { body: { name: bodySentinel() } })).data;
    rememberToken(key.api_key_token);
    await owner.call('GET', `/v1/lists?title=${bodySentinel()}`);
    await owner.call('DELETE', `/auth/v1/api-keys/${key.api_key_id}`);
    const stranger = processActor(() => server.base, org.org_id, key.api_key_token);
    expect((await stranger.call('GET', '/v1/lists')).status).toBe(401); // revoked
    const jwt = processActor(() => server.base, org.org_id, `eyJhbGciOiJIUzI1NiJ9.${bodySentinel()}.sig`);
    expect((await jwt.call('GET', '/v1/lists')).status).toBe(401);
    const bare = processActor(() => server.base, org.org_id, org.live_token.slice(0, -2));
    expect((await bare.call('GET', '/v1/lists')).status).toBe(401);
    await server.stop('SIGTERM');
    const lines = capturedLogs.filter((line) => line.includes(`"pid":${server.child.pid}`));
    expect(lines.length, 'the process logged its requests').toBeGreaterThan(10);
    expectNoSecretsInLogs(lines);
  });
});
