// The jobs engine on the real store: transactional enqueue, retries with backoff until dead, leases
// that outlive a dead worker, two runners never running one job at once, graceful shutdown,
// schedules firing once per period across processes, and the queue figures of /healthz.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.ts';
import { defineJobKind, PermanentJobError, RetryLater, type JobKind, type SettleBatch } from '../../src/platform/jobs/kinds.ts';
import { claimJobs, settleJobs, type SettledJob } from '../../src/platform/jobs/queue.ts';
import { Scheduler } from '../../src/platform/jobs/schedules.ts';
import { runWrite } from '../../src/platform/write.ts';
import { client, newOrg, testApp } from '../helpers/app.ts';
import { waitFor as until } from '../helpers/wait.ts';
import { jobRunners, kindName, silentLog } from '../helpers/job-runners.ts';

let app: FastifyInstance;
const runners = jobRunners(() => app);
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => {
  await runners.stopAll();
  await app.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = silentLog;

const runner = runners.start;


const jobsOf = (kind: string) => app.services.database.db.selectFrom('jobs').selectAll().where('kind', '=', kind).orderBy('id').execute();

async function scope() {
  const org = await newOrg(app, undefined, { sandbox: false });
  return { orgId: org.org_id, mode: 'live' as const };
}

describe('w.enqueue', () => {
  it('commits a job with its write and never with a rolled-back one; the runner runs it once', async () => {
    const ran: string[] = [];
    const kind = defineJobKind<{ n: number }>({ name: kindName('enqueue'), async run(p) { ran.push(String(p.n)); } });
    const s = await scope();
    await expect(runWrite(app.services.database, s, async (w) => {
      w.enqueue(kind, { n: 1 });
      await w.tx.insertInto('lists').values({ id: newId('lst'), org_id: s.orgId, mode: s.mode, name: 'x', type: 'contacts', description: null, member_count: 0, created_at: w.now, updated_at: w.now }).execute();
      throw new Error('the write fails after enqueueing');
    })).rejects.toThrow('the write fails');
    expect(await jobsOf(kind.name)).toEqual([]);

    const id = await runWrite(app.services.database, s, async (w) => w.enqueue(kind, { n: 2 }, { runAt: Date.now() + 300 }));
    const [queued] = await jobsOf(kind.name);
    expect(queued).toMatchObject({ id, org_id: s.orgId, mode: 'live', status: 'queued', attempts: 0, max_attempts: 5, payload: '{"n":2}' });
    const r = runner([kind as JobKind<never>]);
    await sleep(150);
    expect(ran).toEqual([]); // not due yet
    r.wake();
    const [done] = await until(() => jobsOf(kind.name), ([j]) => j.status === 'succeeded');
    expect(ran).toEqual(['2']);
    expect(done).toMatchObject({ attempts: 1, lease_token: null, last_error: null });
  });
});

describe('failures', () => {
  it('retry with backoff up to the kind\'s limit, then stay dead with the last error', async () => {
    const times: number[] = [];
    const kind = defineJobKind<Record<string, never>>({
      name: kindName('fails'), maxAttempts: 3, backoff: (attempt) => attempt * 200,
      async run() {
        times.push(Date.now());
        throw new Error(`attempt ${times.length} failed`);
      },
    });
    await runWrite(app.services.database, await scope(), async (w) => w.enqueue(kind, {}));
    runner([kind as JobKind<never>]).wake();
    const [dead] = await until(() => jobsOf(kind.name), ([j]) => j.status === 'dead');
    expect(dead).toMatchObject({ attempts: 3, last_error: 'attempt 3 failed', lease_token: null });
    expect(times).toHaveLength(3);
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(190);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(390);
  });

  it('honour a handler\'s own retry time and a permanent failure', async () => {
    // Counted per job: the two are due at the same time and may be claimed in either order.
    let retryable = 0;
    const kind = defineJobKind<{ permanent: boolean }>({
      name: kindName('decides'),
      async run(p) {
        if (p.permanent) throw new PermanentJobError('cannot ever work');
        if (++retryable === 1) throw new RetryLater('try again shortly', 100);
      },
    });
    const s = await scope();
    await runWrite(app.services.database, s, async (w) => {
      w.enqueue(kind, { permanent: false });
      w.enqueue(kind, { permanent: true });
    });
    runner([kind as JobKind<never>], { WORKER_CONCURRENCY: '1' }).wake();
    const jobs = await until(() => jobsOf(kind.name), (js) => js.every((j) => j.status === 'succeeded' || j.status === 'dead'));
    expect(jobs.map((j) => [j.status, j.attempts, j.last_error])).toEqual([['succeeded', 2, null], ['dead', 1, 'cannot ever work']]);
  });
});

describe('load and settle', () => {
  it('read once for all the jobs of a claim, and hand each job its own part', async () => {
    const loads: number[] = [];
    const seen: string[] = [];
    const kind = defineJobKind<{ n: number }, string>({
      name: kindName('load'),
      async load(jobs) {
        loads.push(jobs.length);
        return jobs.map(({ payload, job }) => `${payload.n}:${job.id}`);
      },
      async run(p, ctx) { seen.push(`${ctx.loaded}=${p.n}:${ctx.job.id}`); },
    });
    const ids = await runWrite(app.services.database, await scope(), async (w) => [1, 2, 3, 4, 5].map((n) => w.enqueue(kind, { n })));
    runner([kind as JobKind<never>]).wake();
    await until(() => jobsOf(kind.name), (js) => js.every((j) => j.status === 'succeeded'));
    expect(loads).toEqual([5]);
    expect(seen.sort()).toEqual(ids.map((id, i) => `${i + 1}:${id}=${i + 1}:${id}`).sort());
  });

  it('commit what a handler settles with its outcome, whatever it is, and nothing once its lease is lost', async () => {
    const s = await scope();
    const counter = (name: string) => app.services.database.db.selectFrom('counters').select('value')
      .where('org_id', '=', s.orgId).where('mode', '=', s.mode).where('name', '=', name).executeTakeFirst();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const kind = defineJobKind<{ name: string; fail?: boolean; wait?: boolean }>({
      name: kindName('settle'),
      async run(p, ctx) {
        ctx.settle((db) => db.insertInto('counters').values({ org_id: s.orgId, mode: s.mode, name: p.name, value: 1 }).execute());
        if (p.wait) await held;
        if (p.fail) throw new PermanentJobError('failed after settling');
      },
    });
    await runWrite(app.services.database, s, async (w) => {
      w.enqueue(kind, { name: 'settled.ok' });
      w.enqueue(kind, { name: 'settled.failed', fail: true });
      w.enqueue(kind, { name: 'settled.lost', wait: true });
    });
    runner([kind as JobKind<never>]).wake();
    const jobs = await until(() => jobsOf(kind.name), (js) => js.filter((j) => j.status !== 'running').length === 2);
    expect(await counter('settled.ok')).toEqual({ value: 1 });
    expect(await counter('settled.failed')).toEqual({ value: 1 });
    // Another worker takes the waiting job over (its lease lapsed); the first one then finishes.
    const waiting = jobs.find((j) => j.status === 'running')!;
    await app.services.database.db.updateTable('jobs').set({ lease_token: 'other-worker:1' }).where('id', '=', waiting.id).execute();
    release();
    await sleep(300);
    expect(await counter('settled.lost')).toBeUndefined();
    const [after] = (await jobsOf(kind.name)).filter((j) => j.id === waiting.id);
    expect(after).toMatchObject({ status: 'running', lease_token: 'other-worker:1' });
  });

  it('write the values of a settle batch from all the jobs settled together in one call, and none of a job whose lease is lost', async () => {
    const s = await scope();
    const kind = kindName('batch');
    await runWrite(app.services.database, s, async (w) => {
      for (const name of ['a', 'b', 'c']) w.enqueue(defineJobKind({ name: kind, async run() {} }), { name });
    });
    const claimed = await claimJobs(app.services.database, [kind], { perKey: 10, keys: new Map(), perOrg: 10, orgs: new Map() }, 10, 'batch-worker:1', 60_000);
    expect(claimed).toHaveLength(3);
    const calls: string[][] = [];
    const marks: SettleBatch<string> = {
      async write(db, names) {
        calls.push([...names].sort());
        await db.insertInto('counters').values(names.map((name) => ({ org_id: s.orgId, mode: s.mode, name: `batch.${name}`, value: 1 }))).execute();
      },
    };
    // a succeeds, b fails (both still hold their lease), c lost its lease to another worker.
    const settled = claimed.map((job): SettledJob => {
      const { name } = JSON.parse(job.payload) as { name: string };
      return {
        job: name === 'c' ? { ...job, lease_token: 'lost-worker:1' } : job,
        outcome: name === 'b' ? { status: 'failed', error: 'retry', runAt: Date.now() + 60_000 } : { status: 'succeeded' },
        writes: [{ batch: marks as SettleBatch<unknown>, value: name }],
      };
    });
    await app.services.database.db.transaction().execute((tx) => settleJobs(tx, settled));
    expect(calls).toEqual([['a', 'b']]);
    const written = await app.services.database.db.selectFrom('counters').select('name').where('org_id', '=', s.orgId).where('name', 'like', 'batch.%').orderBy('name').execute();
    expect(written.map((r) => r.name)).toEqual(['batch.a', 'batch.b']);
    expect((await jobsOf(kind)).map((j) => j.status).sort()).toEqual(['failed', 'running', 'succeeded']);
  });
});

describe('leases', () => {
  it('give a job whose worker died to another worker when the lease ends', async () => {
    let runs = 0;
    const kind = defineJobKind<Record<string, never>>({ name: kindName('lease'), async run() { runs++; } });
    await runWrite(app.services.database, await scope(), async (w) => w.enqueue(kind, {}));
    // A worker claims it with a one-second lease and dies without a word.
    const [claimed] = await claimJobs(app.services.database, [kind.name], { perKey: 10, keys: new Map(), perOrg: 10, orgs: new Map() }, 10, 'dead-worker:1', 1000);
    expect(claimed.status).toBe('running');
    runner([kind as JobKind<never>]).wake();
    await sleep(400);
    expect(runs).toBe(0); // the lease still holds
    const [done] = await until(() => jobsOf(kind.name), ([j]) => j.status === 'succeeded', 5000);
    expect(runs).toBe(1);
    expect(done.attempts).toBe(2);
  });

  it('let two runners share the queue without ever running one job twice at the same time', async () => {
    const active = new Set<string>();
    const runsOf = new Map<string, number>();
    let overlaps = 0;
    const kind = defineJobKind<{ i: number }>({
      name: kindName('shared'),
      async run(p) {
        const key = String(p.i);
        if (active.has(key)) overlaps++;
        active.add(key);
        runsOf.set(key, (runsOf.get(key) ?? 0) + 1);
        await sleep(5 + Math.random() * 10);
        active.delete(key);
      },
    });
    const s = await scope();
    const count = 200;
    await runWrite(app.services.database, s, async (w) => {
      for (let i = 0; i < count; i++) w.enqueue(kind, { i });
    });
    const a = runner([kind as JobKind<never>], { WORKER_CONCURRENCY: '8' });
    const b = runner([kind as JobKind<never>], { WORKER_CONCURRENCY: '8' });
    a.wake();
    b.wake();
    await until(() => jobsOf(kind.name), (js) => js.every((j) => j.status === 'succeeded'), 20_000);
    expect(overlaps).toBe(0);
    expect(runsOf.size).toBe(count);
    expect([...runsOf.values()].every((n) => n === 1)).toBe(true);
  });
});

describe('concurrency keys', () => {
  it.each<{ env: Record<string, string>; cap: number; what: string }>([
    { env: { WORKER_CONCURRENCY: '8' }, cap: 2, what: 'a quarter of the slots by default' },
    // The key's jobs are one organization's: its own share (half of the slots by default) is raised out of the way.
    { env: { WORKER_CONCURRENCY: '8', WORKER_CONCURRENCY_PER_KEY: '5', WORKER_CONCURRENCY_PER_ORG: '8' }, cap: 5, what: 'WORKER_CONCURRENCY_PER_KEY when set' },
  ])('run at most $what for one key, so a slow key does not hold the others back', async ({ env, cap }) => {
    let slowNow = 0;
    let slowMost = 0;
    const fastDone: number[] = [];
    const kind = defineJobKind<{ slow: boolean }>({
      name: kindName('keys'),
      async run(p) {
        if (!p.slow) {
          fastDone.push(Date.now());
          return;
        }
        slowMost = Math.max(slowMost, ++slowNow);
        await sleep(600);
        slowNow--;
      },
    });
    await runWrite(app.services.database, await scope(), async (w) => {
      for (let i = 0; i < 12; i++) w.enqueue(kind, { slow: true }, { concurrencyKey: 'slow-endpoint' });
    });
    await runWrite(app.services.database, await scope(), async (w) => {
      for (let i = 0; i < 4; i++) w.enqueue(kind, { slow: false }, { concurrencyKey: `fast-${i % 2}` });
    });
    const started = Date.now();
    runner([kind as JobKind<never>], env).wake();
    await until(async () => fastDone.length, (n) => n === 4, 5000);
    expect(Math.max(...fastDone) - started).toBeLessThan(500);
    await until(() => jobsOf(kind.name), (js) => js.every((j) => j.status === 'succeeded'), 10_000);
    expect(slowMost).toBe(cap);
  });
});

describe('graceful stop', () => {
  it('lets short jobs finish and hands longer ones back to the queue', async () => {
    const kind = defineJobKind<{ ms: number }>({
      name: kindName('stop'),
      async run(p, ctx) {
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, p.ms);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(t);
            reject(new Error('aborted'));
          });
        });
      },
    });
    await runWrite(app.services.database, await scope(), async (w) => {
      w.enqueue(kind, { ms: 200 });
      w.enqueue(kind, { ms: 60_000 });
    });
    const r = runner([kind as JobKind<never>]);
    r.wake();
    await until(async () => r.active, (n) => n === 2);
    await r.stop(800);
    const jobs = await jobsOf(kind.name);
    expect(jobs.map((j) => [j.status, j.attempts])).toEqual([['succeeded', 1], ['queued', 0]]);
  });
});

describe('schedules', () => {
  it('fire once per period however many processes keep the timer', async () => {
    const kind = defineJobKind<Record<string, never>>({ name: kindName('cron'), async run() {} });
    const schedules = [{ cron: '* * * * * *', kind }];
    const a = new Scheduler(app.services.database, schedules, log, () => {});
    const b = new Scheduler(app.services.database, schedules, log, () => {});
    const started = Date.now();
    await sleep(3100);
    a.stop();
    b.stop();
    const seconds = Math.floor((Date.now() - started) / 1000);
    const jobs = await jobsOf(kind.name);
    expect(jobs.length).toBeGreaterThanOrEqual(seconds - 1);
    expect(jobs.length).toBeLessThanOrEqual(seconds + 1);
    expect(new Set(jobs.map((j) => j.id)).size).toBe(jobs.length);
    for (const j of jobs) expect(j).toMatchObject({ org_id: '', status: 'queued', id: expect.stringMatching(new RegExp(`^sch_${kind.name.replace(/\./g, '\\.')}_\\d+$`)) });
  });
});

describe('GET /healthz', () => {
  it('reports the queue by status and the age of the oldest due job', async () => {
    const kind = defineJobKind<Record<string, never>>({ name: kindName('health'), async run() {} });
    await runWrite(app.services.database, await scope(), async (w) => w.enqueue(kind, {}, { runAt: Date.now() - 5000 }));
    const res = await client(app, undefined).get('/healthz');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.status).toBe('ok');
    expect(body.jobs.workers).toBe('inline');
    expect(Object.keys(body.jobs.counts).sort()).toEqual(['dead', 'failed', 'queued', 'running', 'succeeded']);
    expect(body.jobs.counts.queued).toBeGreaterThanOrEqual(1);
    expect(body.jobs.oldest_due_age_seconds).toBeGreaterThanOrEqual(4);
  });
});
