// Many service processes on one store. On the PostgreSQL + Redis pass: three processes share one
// rate-limit budget, one idempotency record per key, revocations within seconds, and migrations
// started by all at once on a fresh database run once. On the SQLite pass, two processes on one
// SQLite file share migrations, idempotency and revocations (rate limits are per process there).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { databaseUrl, isPostgres, redisUrl } from '../helpers/app.ts';
import { mostAdmittedInAnyWindow, timed, type Timed } from './support/rate-window.ts';
import { json } from './support/reply.ts';
import { rememberToken } from './support/secrets.ts';
import { afterProcessTests, ROOT, request, startServer, type ServerProcess } from './support/server-process.ts';
import { freshStore, orgIn, type FreshStore } from './support/stores.ts';

const PROCESSES = isPostgres() ? 3 : 2;
const stores: FreshStore[] = [];

afterProcessTests(import.meta.filename, stores);

/** The store these processes share: this run's PostgreSQL database, or a fresh SQLite file. */
async function sharedStoreUrl(): Promise<string> {
  if (isPostgres()) return databaseUrl();
  const store = await freshStore('shared');
  stores.push(store);
  return store.url;
}

async function startMany(env: Record<string, string>, count = PROCESSES): Promise<ServerProcess[]> {
  return Promise.all(Array.from({ length: count }, () => startServer(env)));
}

const storeEnv = async (): Promise<Record<string, string>> => ({
  DATABASE_URL: await sharedStoreUrl(),
  ...(isPostgres() ? { REDIS_URL: redisUrl() } : {}),
});

let shared: Promise<{ env: Record<string, string>; servers: ServerProcess[] }> | undefined;

/** Processes at the default limits, shared by the tests that use them (each with its own org). */
function sharedServers() {
  shared ??= (async () => {
    const env = await storeEnv();
    return { env, servers: await startMany(env) };
  })();
  return shared;
}

describe(`${PROCESSES} processes on one store`, () => {
  it('run the migrations once when all start at once on a fresh store', async () => {
    const store = await freshStore('migrate');
    stores.push(store);
    const servers = await startMany({ DATABASE_URL: store.url });
    const org = await orgIn(store.url);
    for (const server of servers) {
      const reply = await request(server.base, 'POST', '/v1/lists', { token: org.live_token, body: { name: 'After migration', type: 'contacts' } });
      expect(reply.status, reply.body).toBe(201);
    }
    const database = openDatabase(store.url);
    try {
      const rows = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db);
      const files = readdirSync(join(ROOT, 'src/db/migrations')).filter((f) => f.endsWith('.ts')).map((f) => f.replace(/\.ts$/, '')).sort();
      expect(rows.rows.map((r) => r.name)).toEqual(files);
    } finally {
      await database.close();
    }
    await Promise.all(servers.map((s) => s.stop()));
  });

  it('keep one idempotency record per key across processes', async () => {
    const { env, servers } = await sharedServers();
    const org = await orgIn(env.DATABASE_URL);
    const token = org.live_token;
    const body = { name: 'Cross-process', type: 'contacts' };
    // The same key at every process at once: one execution, the rest replay it or wait (409).
    const replies = await Promise.all(servers.flatMap((s) => [1, 2, 3].map(() => request(s.base, 'POST', '/v1/lists', { token, body, headers: { 'idempotency-key': 'cross-1' } }))));
    const executed = replies.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(executed.length, replies.map((r) => `${r.status} ${r.body.slice(0, 80)}`).join('\n')).toBe(1);
    for (const r of replies) {
      expect([201, 409].includes(r.status)).toBe(true);
      if (r.status === 201) expect(r.body).toBe(executed[0].body);
    }
    // Then each process replays the stored response.
    for (const server of servers) {
      const again = await request(server.base, 'POST', '/v1/lists', { token, body, headers: { 'idempotency-key': 'cross-1' } });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(executed[0].body);
      const other = await request(server.base, 'POST', '/v1/lists', { token, body: { ...body, name: 'Different' }, headers: { 'idempotency-key': 'cross-1' } });
      expect(other.status).toBe(422);
    }
    const listed = json(await request(servers[0].base, 'GET', '/v1/lists', { token }));
    expect(listed.pagination.total).toBe(1);
  });

  it('never create two records for one natural key or unique custom value, asserting at every process at once', async () => {
    const { env, servers } = await sharedServers();
    const org = await orgIn(env.DATABASE_URL);
    const token = org.live_token;
    const list = json(await request(servers[0].base, 'POST', '/v1/lists', { token, body: { name: 'Asserted', type: 'contacts' } })).data.id;
    expect((await request(servers[0].base, 'POST', '/v1/fields', { token, body: { object: 'companies', name: 'crm_id', data_type: 'text', unique: true } })).status).toBe(201);
    for (let round = 0; round < 3; round++) {
      const replies = await Promise.all(servers.flatMap((s) => [1, 2, 3].map((n) => request(s.base, 'PUT', '/v1/contacts/assert', { token, body: { list_id: list, work_email: `Same${round}@Example.com`, title: `T${n}` } }))));
      expect(replies.every((r) => r.status === 200 || r.status === 201), replies.map((r) => `${r.status} ${r.body.slice(0, 80)}`).join('\n')).toBe(true);
      expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
      expect(new Set(replies.map((r) => json(r).data.id)).size).toBe(1);
      // Creates of one unique custom value: one wins, every other is 409 naming the winner.
      const creates = await Promise.all(servers.map((s, n) => request(s.base, 'POST', '/v1/companies', { token, body: { name: `C${n}`, custom_fields: { crm_id: `crm-${round}` } } })));
      const won = creates.filter((r) => r.status === 201);
      expect(won).toHaveLength(1);
      for (const lost of creates.filter((r) => r.status !== 201)) {
        expect(lost.status).toBe(409);
        expect(json(lost).detail).toContain(json(won[0]).data.id);
      }
    }
    const listed = json(await request(servers[0].base, 'GET', '/v1/contacts', { token }));
    expect(listed.pagination.total).toBe(3);
  });

  it('refuse a key revoked through one process at every other within 5 seconds', async () => {
    const { env, servers } = await sharedServers();
    const org = await orgIn(env.DATABASE_URL);
    const created = json(await request(servers[0].base, 'POST', '/auth/v1/api-keys', { token: org.live_token, body: { name: 'Soon revoked' } })).data;
    rememberToken(created.api_key_token);
    for (const server of servers) expect((await request(server.base, 'GET', '/v1/lists', { token: created.api_key_token })).status).toBe(200);
    const revokedAt = Date.now();
    expect((await request(servers[0].base, 'DELETE', `/auth/v1/api-keys/${created.api_key_id}`, { token: org.live_token })).status).toBe(200);
    expect((await request(servers[0].base, 'GET', '/v1/lists', { token: created.api_key_token })).status, 'refused at once where revoked').toBe(401);
    for (const server of servers.slice(1)) {
      let status = 200;
      while (status !== 401 && Date.now() - revokedAt < 5000) {
        status = (await request(server.base, 'GET', '/v1/lists', { token: created.api_key_token })).status;
        if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status, 'refused by another process within 5 s').toBe(401);
    }
  });

  it.runIf(isPostgres())('share one rate-limit budget through Redis', async () => {
    const env: Record<string, string> = { ...(await storeEnv()), RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_PER_MINUTE: '15' };
    const servers = await startMany(env);
    const org = await orgIn(env.DATABASE_URL);
    const results: Array<Promise<Timed>> = [];
    const end = Date.now() + 3200;
    let n = 0;
    while (Date.now() < end) {
      for (let i = 0; i < 6; i++) {
        const server = servers[n++ % servers.length];
        results.push(timed(() => request(server.base, 'GET', '/v1/lists?limit=1', { token: org.live_token })));
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const settled = await Promise.all(results);
    const passed = settled.filter((r) => r.status !== 429).length;
    expect(mostAdmittedInAnyWindow(settled, 1000), 'admitted in one second across all processes').toBeLessThanOrEqual(5);
    expect(passed, 'admitted in the run across all processes').toBeLessThanOrEqual(15);
    expect(passed).toBeGreaterThanOrEqual(10);
    await Promise.all(servers.map((s) => s.stop()));
  });
});
