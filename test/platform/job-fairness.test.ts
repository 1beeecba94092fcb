// Fair claiming across organizations, on the real store: a tenant whose backlog of slow jobs would
// take every worker slot gets its share (WORKER_CONCURRENCY_PER_ORG, half of the slots by default),
// so a quiet tenant's job, and the jobs of no organization (maintenance), run within seconds; and
// the claim stays a read of indexes behind a backlog of 20,000 jobs of one tenant.
import type { FastifyInstance } from 'fastify';
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { defineJobKind, type JobKind } from '../../src/platform/jobs/kinds.ts';
import { claimStatement, enqueueOnce } from '../../src/platform/jobs/queue.ts';
import { runWrite } from '../../src/platform/write.ts';
import { newOrg, tenant, testApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/imports.ts';
import { receiver } from '../helpers/receiver.ts';
import { endpoint } from '../helpers/webhooks.ts';
import { jobRunners, kindName } from '../helpers/job-runners.ts';

let app: FastifyInstance;
const runners = jobRunners(() => app);
let release: () => void = () => {};
const released = new Promise<void>((resolve) => (release = resolve));

beforeAll(async () => {
  app = await testApp({ env: { WORKERS: 'off' } });
});
afterAll(async () => {
  release();
  await runners.stopAll();
  await app.close();
});


const runner = runners.start;

async function until(done: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('one tenant flooding the queue', () => {
  it.each<{ env: Record<string, string>; share: number; what: string }>([
    { env: {}, share: 8, what: 'half of the slots by default' },
    { env: { WORKER_CONCURRENCY_PER_ORG: '3' }, share: 3, what: 'WORKER_CONCURRENCY_PER_ORG when set' },
  ])('takes $what; a quiet tenant\'s job and a job of no organization run at once', async ({ env, share }) => {
    const flooding = await newOrg(app);
    const quiet = await newOrg(app);
    const running = new Map<string, number>();
    const most = new Map<string, number>();
    const ran: string[] = [];
    // The flooding tenant's jobs hang until the end of the file, as deliveries to a host that never answers.
    const kind = defineJobKind<{ hang: boolean; name: string }>({
      name: kindName('flood'),
      async run(p, ctx) {
        const org = ctx.job.orgId;
        running.set(org, (running.get(org) ?? 0) + 1);
        most.set(org, Math.max(most.get(org) ?? 0, running.get(org)!));
        ran.push(p.name);
        if (p.hang) await released;
        running.set(org, running.get(org)! - 1);
      },
    });
    // Ten keys (endpoints) of four slots each could take all 16 slots of the worker.
    await runWrite(app.services.database, { orgId: flooding.org_id, mode: 'live' }, async (w) => {
      for (let i = 0; i < 200; i++) w.enqueue(kind, { hang: true, name: `flood-${i}` }, { concurrencyKey: `endpoint-${i % 10}`, runAt: Date.now() - 60_000 + i });
    });
    const r = runner([kind as JobKind<never>], env);
    r.wake();
    await until(() => (running.get(flooding.org_id) ?? 0) >= share, `the flooding tenant runs ${share} jobs`);

    const enqueuedAt = Date.now();
    await runWrite(app.services.database, { orgId: quiet.org_id, mode: 'test' }, async (w) => w.enqueue(kind, { hang: false, name: 'quiet' }));
    await enqueueOnce(app.services.database.db, `sys_${kind.name}`, kind.name, 1, { hang: false, name: 'system' });
    r.wake();
    await until(() => ran.includes('quiet') && ran.includes('system'), 'the quiet tenant\'s job and the system job run');
    expect(Date.now() - enqueuedAt).toBeLessThan(5000);
    expect(most.get(flooding.org_id)).toBe(share);
    expect(running.get(flooding.org_id)).toBe(share);
  });

  it.each<{ env: Record<string, string>; most: number; what: string }>([
    { env: { WORKER_CONCURRENCY: '8' }, most: 4, what: 'its share when alone too' },
    { env: { WORKER_CONCURRENCY: '8', WORKER_CONCURRENCY_PER_ORG: '8' }, most: 8, what: 'every slot when WORKER_CONCURRENCY_PER_ORG allows it' },
  ])('takes $what', async ({ env, most: expected }) => {
    const org = await newOrg(app);
    let now = 0;
    let most = 0;
    const kind = defineJobKind<Record<string, never>>({
      name: kindName('alone'),
      async run() {
        most = Math.max(most, ++now);
        await new Promise((resolve) => setTimeout(resolve, 200));
        now--;
      },
    });
    await runWrite(app.services.database, { orgId: org.org_id, mode: 'live' }, async (w) => {
      for (let i = 0; i < 24; i++) w.enqueue(kind, {});
    });
    runner([kind as JobKind<never>], env).wake();
    await until(() => most === expected, `${expected} jobs of the tenant at once`);
    await until(() => now === 0, 'the jobs are done');
    expect(most).toBe(expected);
  });
});

describe('webhook deliveries to a receiver that never answers', () => {
  it('leave half of the slots to other tenants: another tenant\'s export completes within seconds', async () => {
    // A process of its own with inline workers (16 slots) and a delivery timeout longer than the test.
    const own = await testApp({ env: { WEBHOOK_TIMEOUT_MS: '120000' } });
    try {
      const silent = await receiver(() => ({ status: 200, delayMs: 600_000 }));
      const flooding = await tenant(own);
      for (let i = 0; i < 10; i++) await endpoint(flooding.live, silent.url);
      for (let i = 0; i < 10; i++) expect((await flooding.live.post('/v1/companies', { name: `Flood ${i}` })).statusCode).toBe(201);
      // 100 deliveries are due; half of the 16 slots take them and hang.
      await silent.until((received) => received.length >= 8);

      const quiet = await tenant(own);
      const started = Date.now();
      const created = await quiet.live.post('/v1/exports', { object: 'companies' });
      expect(created.statusCode, created.body).toBe(201);
      const done = await waitFor(own, quiet.live_token, `/v1/exports/${created.json().data.id}`, new Set(['completed', 'failed']), 30_000);
      expect(done.status).toBe('completed');
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(silent.received.length).toBe(8);
      await silent.close();
    } finally {
      await own.close();
    }
  }, 60_000);
});

describe('the claim behind a backlog of 20,000 jobs of one tenant', () => {
  it('reads indexes only, with the tenant at its share and without', async () => {
    const flooding = await newOrg(app);
    const quiet = await newOrg(app);
    const kind = kindName('backlog');
    const now = Date.now();
    const job = (org: string, i: number) => ({
      org_id: org, mode: 'live' as const, id: `job_${org}_${i}`, kind, payload: '{}', concurrency_key: `endpoint-${i % 10}`, status: 'queued',
      run_at: now - 600_000 + i, attempts: 0, max_attempts: 5, lease_until: null, lease_token: null, last_error: null, created_at: now, updated_at: now,
    });
    const rows = Array.from({ length: 20_000 }, (_, i) => job(flooding.org_id, i));
    for (let i = 0; i < rows.length; i += 1000) await app.services.database.db.insertInto('jobs').values(rows.slice(i, i + 1000)).execute();
    await app.services.database.db.insertInto('jobs').values({ ...job(quiet.org_id, 0), concurrency_key: null, run_at: now }).execute();
    const database = app.services.database;
    await sql`analyze`.execute(database.db);

    const plan = async (orgs: Map<string, number>) => {
      const { sql: text, parameters } = claimStatement(database, [kind], { perKey: 4, keys: new Map(), perOrg: 8, orgs }, 16, 'plan:1', 30_000).compile(database.db);
      const explain = database.dialect === 'postgres' ? 'explain ' : 'explain query plan ';
      const result = await database.db.executeQuery(CompiledQuery.raw(explain + text, [...parameters]));
      return result.rows.map((row) => String((row as Record<string, unknown>)['QUERY PLAN'] ?? (row as Record<string, unknown>).detail)).join('\n');
    };
    for (const orgs of [new Map(), new Map([[flooding.org_id, 0]])]) {
      const text = await plan(orgs);
      // PostgreSQL: no sequential scan of jobs; SQLite: every read of jobs is a search of an index.
      expect(text).not.toMatch(/Seq Scan on jobs|^SCAN jobs\b/m);
      expect(text).toMatch(database.dialect === 'postgres' ? /Index Scan using jobs_due / : /jobs USING INDEX jobs_due /);
      if (orgs.size > 0) expect(text).toMatch(/jobs_due_by_org/);
    }
    // With the tenant at its share, the claim takes the quiet tenant's job from behind the backlog.
    const claimed = await claimStatement(database, [kind], { perKey: 4, keys: new Map(), perOrg: 8, orgs: new Map([[flooding.org_id, 0]]) }, 16, 'plan:2', 30_000).execute(database.db);
    expect(claimed.rows.map((r) => r.org_id)).toEqual([quiet.org_id]);
    await database.db.deleteFrom('jobs').where('kind', '=', kind).execute();
  });
});

describe('jobs due at the same moment', () => {
  it('are claimed up to the rooms of their keys and organization, whatever order ties are ranked in', async () => {
    // One tenant's deliveries to two endpoints, all due at one millisecond (an event fanned out to
    // both), keys interleaved: ranked by key and by organization in two orders, the first jobs of
    // each key could all be past the organization's room and none claimed.
    const org = await newOrg(app);
    const kind = kindName('tie');
    const at = Date.now() - 30_000;
    await runWrite(app.services.database, { orgId: org.org_id, mode: 'live' }, async (w) => {
      for (let i = 0; i < 60; i++) w.enqueue(defineJobKind({ name: kind, run: async () => {} }), {}, { concurrencyKey: `tie-${i % 3 === 0 ? 'a' : 'b'}`, runAt: at });
    });
    const database = app.services.database;
    const claimed = await claimStatement(database, [kind], { perKey: 4, keys: new Map(), perOrg: 8, orgs: new Map() }, 16, 'tie:1', 30_000).execute(database.db);
    const byKey = Map.groupBy(claimed.rows, (row) => row.concurrency_key);
    expect([claimed.rows.length, byKey.get('tie-a')?.length, byKey.get('tie-b')?.length]).toEqual([8, 4, 4]);
  });
});

describe('WORKER_CONCURRENCY_PER_ORG', () => {
  it('defaults to half of WORKER_CONCURRENCY, at least 1, and may not exceed it', () => {
    expect(loadConfig({}).workerConcurrencyPerOrg).toBe(8);
    expect(loadConfig({ WORKER_CONCURRENCY: '1' }).workerConcurrencyPerOrg).toBe(1);
    expect(loadConfig({ WORKER_CONCURRENCY: '4', WORKER_CONCURRENCY_PER_ORG: '4' }).workerConcurrencyPerOrg).toBe(4);
    expect(() => loadConfig({ WORKER_CONCURRENCY: '4', WORKER_CONCURRENCY_PER_ORG: '5' })).toThrow('WORKER_CONCURRENCY_PER_ORG must not exceed WORKER_CONCURRENCY');
    expect(() => loadConfig({ WORKER_CONCURRENCY_PER_ORG: '0' })).toThrow(/WORKER_CONCURRENCY_PER_ORG/);
  });
});
