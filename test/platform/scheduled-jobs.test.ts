// Scheduled work by key on the real store (`w.schedule`, `w.cancel`): a record's next run is replaced,
// not added again; a cancel leaves nothing to run; a rolled-back write changes nothing; a job already
// running when its key is scheduled again finishes undisturbed and the new one still runs; keys are
// the tenant's. Time is moved with the test clock, never waited for.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineJobKind, RetryLater, type JobKind } from '../../src/platform/jobs/kinds.ts';
import { runWrite } from '../../src/platform/write.ts';
import { clock, newOrg, testApp } from '../helpers/app.ts';
import { waitFor as until } from '../helpers/wait.ts';
import { jobRunners, kindName } from '../helpers/job-runners.ts';

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
const jobsOf = (kind: string) => app.services.database.db.selectFrom('jobs').selectAll().where('kind', '=', kind).orderBy('created_at').orderBy('id').execute();
const write = <T>(s: { orgId: string; mode: 'live' | 'test' }, work: Parameters<typeof runWrite<T>>[2]) => runWrite(app.services.database, s, work);

async function scope(mode: 'live' | 'test' = 'live') {
  return { orgId: (await newOrg(app)).org_id, mode };
}

/** A kind that records the payloads it ran. */
function recording(what: string) {
  const ran: string[] = [];
  const kind = defineJobKind<{ v: string }>({ name: kindName(what), async run(p) { ran.push(p.v); } });
  return { kind, ran };
}

const inMs = (seconds: number) => clock.now() + seconds * 1000;

describe('w.schedule', () => {
  it('replaces the waiting job of a key, in another write or the same one, and runs it once when due', async () => {
    const { kind, ran } = recording('replace');
    const s = await scope();
    await write(s, async (w) => w.schedule('reminder:1', kind, { v: 'first' }, inMs(60)));
    const id = await write(s, async (w) => w.schedule('reminder:1', kind, { v: 'second' }, inMs(120)));
    await write(s, async (w) => {
      w.schedule('reminder:2', kind, { v: 'a' }, inMs(60));
      w.schedule('reminder:2', kind, { v: 'b' }, inMs(180));
    });
    const jobs = await jobsOf(kind.name);
    expect(jobs.map((j) => [j.schedule_key, j.payload, j.status])).toEqual([['reminder:1', '{"v":"second"}', 'queued'], ['reminder:2', '{"v":"b"}', 'queued']]);
    expect(jobs[0].id).toBe(id);
    expect(Number(jobs[0].run_at)).toBeGreaterThan(inMs(110));

    runners.start([kind as JobKind<never>]);
    await sleep(100);
    expect(ran).toEqual([]); // not due yet
    clock.advance(121);
    await until(() => jobsOf(kind.name), (j) => j[0].status === 'succeeded');
    expect(ran).toEqual(['second']);
    clock.advance(60);
    await until(() => jobsOf(kind.name), (j) => j.every((x) => x.status === 'succeeded'));
    expect(ran).toEqual(['second', 'b']);
  });

  it('keeps keys apart by tenant and mode, and a cancel takes only its own', async () => {
    const { kind, ran } = recording('tenants');
    const [a, b] = [await scope(), await scope()];
    const aTest = { ...a, mode: 'test' as const };
    for (const s of [a, b, aTest]) await write(s, async (w) => w.schedule('same', kind, { v: `${s.orgId}/${s.mode}` }, inMs(30)));
    await write(a, async (w) => w.cancel('same'));
    expect((await jobsOf(kind.name)).map((j) => [j.org_id, j.mode])).toEqual([[b.orgId, 'live'], [a.orgId, 'test']]);
    runners.start([kind as JobKind<never>]);
    clock.advance(31);
    await until(() => jobsOf(kind.name), (j) => j.every((x) => x.status === 'succeeded'));
    expect(ran.sort()).toEqual([`${a.orgId}/test`, `${b.orgId}/live`].sort());
  });
});

describe('a runner with nothing to claim', () => {
  it('sleeps until the next job falls due, not until its next poll', async () => {
    const ranAt: number[] = [];
    const kind = defineJobKind<{ v: string }>({ name: kindName('on-time'), async run() { ranAt.push(clock.now()); } });
    const runner = runners.start([kind as JobKind<never>]);
    await sleep(2000); // idle long enough that its polls are a second apart
    const s = await scope();
    const due = clock.now() + 400;
    await write(s, async (w) => void w.schedule('on-time', kind, { v: 'x' }, due));
    runner.wake(); // as a commit of its process does
    await until(async () => ranAt, (r) => r.length === 1);
    // Found by its poll, it would have run a second after the wake-up, 600 ms late: anything
    // before that (a loaded machine may delay the timer itself) is the sleep that ended on time.
    expect(ranAt[0] - due).toBeLessThan(580);
    expect(ranAt[0]).toBeGreaterThanOrEqual(due);
  });
});

describe('w.cancel', () => {
  it('leaves nothing to run, in the write that scheduled it too; cancelling no job is no error', async () => {
    const { kind, ran } = recording('cancel');
    const s = await scope();
    await write(s, async (w) => w.schedule('k', kind, { v: 'cancelled' }, inMs(5)));
    await write(s, async (w) => w.cancel('k'));
    await write(s, async (w) => {
      w.schedule('k2', kind, { v: 'never' }, inMs(5));
      w.cancel('k2');
    });
    await write(s, async (w) => w.cancel('nothing'));
    expect(await jobsOf(kind.name)).toEqual([]);
    // Cancelled, then scheduled again in one write: the schedule stands.
    await write(s, async (w) => w.schedule('k3', kind, { v: 'old' }, inMs(5)));
    await write(s, async (w) => {
      w.cancel('k3');
      w.schedule('k3', kind, { v: 'kept' }, inMs(5));
    });
    runners.start([kind as JobKind<never>]);
    clock.advance(6);
    await until(() => jobsOf(kind.name), (j) => j.length === 1 && j[0].status === 'succeeded');
    expect(ran).toEqual(['kept']);
  });
});

describe('a rolled-back write', () => {
  it('neither schedules nor cancels', async () => {
    const { kind } = recording('rollback');
    const s = await scope();
    await write(s, async (w) => w.schedule('kept', kind, { v: 'kept' }, inMs(60)));
    await expect(write(s, async (w) => {
      w.schedule('kept', kind, { v: 'replaced' }, inMs(90));
      w.schedule('new', kind, { v: 'new' }, inMs(60));
      throw new Error('the write fails after scheduling');
    })).rejects.toThrow('the write fails');
    await expect(write(s, async (w) => {
      w.cancel('kept');
      throw new Error('the write fails after cancelling');
    })).rejects.toThrow('the write fails');
    expect((await jobsOf(kind.name)).map((j) => [j.schedule_key, j.payload])).toEqual([['kept', '{"v":"kept"}']]);
  });
});

describe('a job running when its key is scheduled again', () => {
  /** Runs `first` under the key `step`, and while it runs schedules `second` at `at`. */
  async function rescheduledWhileRunning(kind: JobKind<{ v: string }>, at: number) {
    const s = await scope();
    await write(s, async (w) => w.schedule('step', kind, { v: 'first' }, clock.now()));
    runners.start([kind as JobKind<never>]);
    await until(() => jobsOf(kind.name), (j) => j[0].status === 'running');
    await write(s, async (w) => w.schedule('step', kind, { v: 'second' }, at));
    return s;
  }

  it('finishes undisturbed, and the new one runs when due', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ran: string[] = [];
    const kind = defineJobKind<{ v: string }>({
      name: kindName('running'),
      async run(p) {
        if (p.v === 'first') await gate;
        ran.push(p.v);
      },
    });
    await rescheduledWhileRunning(kind, inMs(30));
    release();
    await until(() => jobsOf(kind.name), (j) => j[0].status === 'succeeded');
    expect(ran).toEqual(['first']);
    clock.advance(31);
    const jobs = await until(() => jobsOf(kind.name), (j) => j.length === 2 && j.every((x) => x.status === 'succeeded'));
    expect(ran).toEqual(['first', 'second']);
    expect(jobs.map((j) => j.payload)).toEqual(['{"v":"first"}', '{"v":"second"}']);
  });

  it('gives its key up when it fails after that: its retry runs, the new one stays the key\'s', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ran: string[] = [];
    const kind = defineJobKind<{ v: string }>({
      name: kindName('fails'),
      async run(p, { job }) {
        if (p.v === 'first' && job.attempt === 1) {
          await gate;
          throw new RetryLater('not this time', 10_000);
        }
        ran.push(p.v);
      },
    });
    const s = await rescheduledWhileRunning(kind, inMs(60));
    release();
    const [old, next] = await until(() => jobsOf(kind.name), (j) => j[0].status === 'failed');
    expect([old.schedule_key, next.schedule_key, next.status]).toEqual([null, 'step', 'queued']);
    // A cancel of the key now reaches the new job only.
    await write(s, async (w) => w.cancel('step'));
    clock.advance(61);
    await until(() => jobsOf(kind.name), (j) => j.length === 1 && j[0].status === 'succeeded');
    expect(ran).toEqual(['first']);
  });
});
