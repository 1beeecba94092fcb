// Scenarios 23 and 24: sequences.
// 23: the enrollments of a list made when a sequence runs: 100,000 contacts (10,000 quick) enrolled,
//     their first steps due, from `POST /v1/sequences/{id}/run` until the sequence is `live` (the
//     scheduling state's job commits the enrollments and the move together), on the API process with
//     its workers.
// 24: the scheduler (src/resources/sequences/scheduler.ts). Its lag from due to sent through the
//     local driver at 200 due steps a second, on the API process with its workers (`npm start`),
//     with GET one measured in turn alone and while the steps fall due; and the cost of one of its
//     runs with 100 enrollments due in a sequence of 10,000 and of 1,000,000 (100,000 quick),
//     measured run by run in turn on the store directly.
import { sql } from 'kysely';
import type { Database } from '../src/db/database.ts';
import { createOrganization } from '../src/orgs/orgs.ts';
import { idMillis, newId } from '../src/platform/ids.ts';
import { OUTBOX_SEND, type SendPayload } from '../src/platform/outbox/send.ts';
import { selectIn, tenantOf, updateIn } from '../src/platform/resource/tenancy.ts';
import type { Scope } from '../src/platform/scope.ts';
import { runWrite } from '../src/platform/write.ts';
import { createList } from '../src/resources/lists/lists.store.ts';
import { wakeSweep } from '../src/resources/sequences/enrollments.store.ts';
import { sweep } from '../src/resources/sequences/scheduler.ts';
import type { LoadSpec } from './load.ts';
import type { BenchOptions } from './options.ts';
import type { Server } from './processes.ts';
import type { Figure, InTurnRun } from './scenarios.ts';
import { createSeededOrg, rowsPerStatement, ROWS_PER_TRANSACTION, seedContacts } from './seed.ts';

interface Percentiles { p50: number; p99: number }

export interface SequenceResults {
  s23_enrol_at_run: { enrollments: number; seconds: number; perSecond: number };
  /**
   * Lag of each step from its due time (`due_at`, whole seconds) to its send job's success
   * (`jobs.updated_at`, milliseconds, committed just after the message is recorded delivered),
   * in milliseconds: `alone` with nothing else running, the rest while GET one ran at full load.
   * `duePerSecond`: the steps that fell due in those turns over the seconds they fell due in;
   * `queued`: from due until the scheduler's run queued the message (the time its id carries);
   * `unsent`: steps not sent (unexpected).
   */
  s24_scheduler_lag: {
    steps: number; duePerSecond: number; p50: number; p99: number; max: number; queued: Percentiles; unsent: number;
    /** `cpuMsPerStep`: the API process's CPU time over those steps, from the first falling due until the last was sent. */
    alone: { steps: number; p50: number; p99: number; queued: Percentiles; cpuMsPerStep: number | null };
    getAlone: Figure; getDuring: Figure;
  };
  /** Median milliseconds of one scheduler run (`sweep` in its write) stepping `due` enrollments of a sequence of `small` and of `large` enrollments. */
  s24_sweep_cost: { due: number; runs: number; small: { enrollments: number; ms: number }; large: { enrollments: number; ms: number } };
}

interface Context {
  kind: 'sqlite' | 'postgres';
  database: Database;
  options: BenchOptions;
  log: (message: string) => void;
  start: (script: string, env: Record<string, string>) => Promise<Server>;
  stop: (server: Server) => Promise<void>;
  inTurn: (runs: Array<Omit<InTurnRun, 'spec'> & { spec: Pick<LoadSpec, 'kind' | 'path'> & Partial<LoadSpec> }>) => Promise<Figure[]>;
  env: Record<string, string>;
  getOneSpec: Pick<LoadSpec, 'kind' | 'path'> & Partial<LoadSpec>;
}

async function send<T>(method: string, url: string, token: string, body?: unknown): Promise<T> {
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}

async function until(done: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what} not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const median = (xs: number[]) => percentile(xs, 50);
const round2 = (x: number) => Math.round(x * 100) / 100;

/** Steps may go at any hour of any day: only the scheduler's own timing sets when they are sent. */
const ANY_TIME = { timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start_hour: 0, end_hour: 24 };
const STEP = { subject: 'Quick question, {{ contact.first_name }}', body: 'Hi {{ contact.first_name }},\n\nWould a short call next week suit you?' };

/** An organization's test mode (the local e-mail driver) with a list of `contacts` contacts; their ids, oldest first. */
async function testModeWithContacts(database: Database, name: string, contacts: number) {
  const org = await createOrganization(database, { defaultCredits: 1000 }, name, { sandbox: false });
  const scope: Scope = { orgId: org.org_id, mode: 'test' };
  const listId = await runWrite(database, scope, async (w) => (await createList(w, { name: 'Prospects', type: 'contacts' })).id);
  const contactIds: string[] = [];
  await seedContacts(database, { scope, token: org.test_token, listIds: [listId], contacts: 0 }, contacts, (id) => contactIds.push(id));
  return { scope, token: org.test_token, listId, contactIds };
}

/** A sequence sending from `mailboxes` new mailboxes at any time, with `steps` e-mail steps (the first due `firstWait` seconds after enrolment, the others three days apart). */
async function createSequence(v1: string, token: string, name: string, options: { mailboxes: number; steps: number; firstWait: number; listId?: string }): Promise<{ id: string }> {
  const mailboxIds: string[] = [];
  for (let i = 0; i < options.mailboxes; i++) {
    mailboxIds.push((await send<{ id: string }>('POST', `${v1}/mailboxes`, token, { email: `rep${i}@bench-sequences.example`, display_name: `Rep ${i}`, daily_limit: 100_000 })).id);
  }
  const sequence = await send<{ id: string }>('POST', `${v1}/sequences`, token, { name, associated_list_id: options.listId, mailbox_ids: mailboxIds, schedule: ANY_TIME });
  for (let i = 0; i < options.steps; i++) {
    await send('POST', `${v1}/sequences/${sequence.id}/steps`, token, { ...STEP, time_interval: i === 0 ? options.firstWait : 3 * 86_400 });
  }
  return sequence;
}

/** Runs the sequence and waits until it is `live` with `enrolled` enrollments. */
async function runUntilLive(v1: string, token: string, sequenceId: string, enrolled: number, what: string): Promise<void> {
  const started = performance.now();
  await send('POST', `${v1}/sequences/${sequenceId}/run`, token);
  for (;;) {
    const read = await send<{ status: string; counts: { enrolled: number } }>('GET', `${v1}/sequences/${sequenceId}`, token);
    if (read.status === 'live') {
      if (read.counts.enrolled !== enrolled) throw new Error(`${what} enrolled ${read.counts.enrolled} of ${enrolled}`);
      return;
    }
    if (performance.now() - started > 600_000) throw new Error(`${what}: the sequence was not live within 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function enrolAtRun(ctx: Context): Promise<SequenceResults['s23_enrol_at_run']> {
  const enrollments = ctx.options.quick ? 10_000 : 100_000;
  ctx.log(`scenario 23, a sequence enrolling a list of ${enrollments.toLocaleString('en')} contacts when it runs`);
  const org = await createSeededOrg(ctx.database, 'Sequence org');
  org.listIds = org.listIds.slice(0, 1);
  await seedContacts(ctx.database, org, enrollments);
  if (ctx.database.dialect === 'postgres') await sql`analyze`.execute(ctx.database.db);
  const api = await ctx.start('bench/instrumented-server.ts', ctx.env);
  try {
    const v1 = `${api.url}/v1`;
    // Due a day after enrolment: the scheduler has nothing to send while the enrolment is measured.
    const sequence = await createSequence(v1, org.token, 'Bench', { mailboxes: 1, steps: 1, firstWait: 86_400, listId: org.listIds[0] });
    const started = performance.now();
    await runUntilLive(v1, org.token, sequence.id, enrollments, 'scenario 23');
    const seconds = (performance.now() - started) / 1000;
    return { enrollments, seconds: Math.round(seconds * 100) / 100, perSecond: Math.round(enrollments / seconds) };
  } finally {
    await ctx.stop(api);
  }
}

/** Steps falling due a second in scenario 24's lag. */
const RATE = 200;
/** The mailboxes a sequence's e-mails rotate over (each within its limits at that rate). */
const MAILBOXES = 10;
// One tenant's sequence makes every job here, so it may use every slot, as in scenarios 9, 10 and 20
// (docs/operations.md: where one tenant has the service to itself). At the defaults (16, 8 of one
// organization) a step cost about 2.1 ms of the API's CPU against 1.3 (SQLite, docs/performance.md).
const ONE_TENANT_WORKERS = { WORKER_CONCURRENCY: '64', WORKER_CONCURRENCY_PER_KEY: '64', WORKER_CONCURRENCY_PER_ORG: '64' };

async function schedulerLag(ctx: Context): Promise<SequenceResults['s24_scheduler_lag']> {
  const { database, options } = ctx;
  const roundSeconds = Math.max(3, options.roundSeconds);
  // A turn's steps fall due from its start (the load generator starting, its warm-up) until past the end of its round.
  const turnSeconds = Math.ceil(0.5 + options.warmupSeconds + roundSeconds) + 1;
  const aloneSeconds = 5;
  const pool = RATE * (aloneSeconds + options.rounds * turnSeconds);
  ctx.log(`scenario 24, the scheduler at ${RATE} due steps/s (${pool.toLocaleString('en')} enrollments), in turn with GET one`);
  const org = await testModeWithContacts(database, 'Scheduler org', pool);
  const api = await ctx.start('bench/instrumented-server.ts', { ...ctx.env, ...ONE_TENANT_WORKERS });
  try {
    const v1 = `${api.url}/v1`;
    // Enrolled through the API, each first step due a day later; the run then brings them due.
    const sequence = await createSequence(v1, org.token, 'Scheduler bench', { mailboxes: MAILBOXES, steps: 2, firstWait: 86_400, listId: org.listId });
    await runUntilLive(v1, org.token, sequence.id, pool, 'scenario 24');
    if (ctx.kind === 'postgres') await sql`analyze sequence_enrollments, contacts, outbox_messages, jobs, mailboxes`.execute(database.db);
    const ids = (await selectIn(database.db, 'sequence_enrollments', org.scope).select('id').where('sequence_id', '=', sequence.id).orderBy('id').execute()).map((r) => r.id);
    const dueAt = new Map<string, number>();
    let next = 0;
    /** The next `seconds` × RATE enrollments fall due, RATE each second from the first whole second at least 0.5 s away, the scheduler woken for them. */
    const fallDue = async (seconds: number): Promise<string[]> => {
      const slice = ids.slice(next, next + seconds * RATE);
      next += slice.length;
      const first = Math.ceil((Date.now() + 500) / 1000);
      await runWrite(database, org.scope, async (w) => {
        for (let s = 0; s < seconds; s++) {
          const these = slice.slice(s * RATE, (s + 1) * RATE);
          await updateIn(w.tx, 'sequence_enrollments', w.scope).set({ due_at: first + s, updated_at: w.now }).where('id', 'in', these).execute();
          for (const id of these) dueAt.set(id, first + s);
        }
        wakeSweep(w, sequence.id, first);
      });
      return slice;
    };
    const sentCount = async () => Number((await selectIn(database.db, 'outbox_messages', org.scope).select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', 'in', ['sent', 'delivered']).executeTakeFirstOrThrow()).n);
    const allSent = () => until(async () => (await sentCount()) >= next, 120_000, 'the scheduler\'s sends');

    const cpuBefore = api.cpuSeconds();
    const alone = await fallDue(aloneSeconds);
    await allSent();
    const cpuAfter = api.cpuSeconds();
    // Each turn beside the scheduler: its steps fall due from its start; those due before its load ended are its figure.
    const turns: Array<{ ids: string[]; loadEnded: number }> = [];
    const [getAlone, getDuring] = await ctx.inTurn([
      { server: api, spec: { ...ctx.getOneSpec, roundSeconds } },
      {
        server: api, spec: { ...ctx.getOneSpec, roundSeconds },
        before: async () => void turns.push({ ids: await fallDue(turnSeconds), loadEnded: Infinity }),
        after: async () => {
          turns[turns.length - 1].loadEnded = Date.now();
          await allSent();
        },
      },
    ]);

    // A send job's success is committed (milliseconds) right after its message is recorded delivered,
    // whose own `sent_at` is whole seconds.
    const jobs = await database.db.selectFrom('jobs').select(['payload', 'updated_at']).where('org_id', '=', org.scope.orgId).where('mode', '=', org.scope.mode)
      .where('kind', '=', OUTBOX_SEND.name).where('status', '=', 'succeeded').execute();
    const doneAt = new Map(jobs.map((j) => [(JSON.parse(j.payload) as SendPayload).id, Number(j.updated_at)]));
    // The message's id carries the time (milliseconds) the scheduler's run queued it.
    const lagOf = new Map<string, { sent: number; queued: number }>();
    for (const m of await selectIn(database.db, 'outbox_messages', org.scope).select(['id', 'send_key']).execute()) {
      const enrollment = m.send_key?.split(':')[1] ?? '';
      const [due, done] = [dueAt.get(enrollment), doneAt.get(m.id)];
      if (due !== undefined && done !== undefined) lagOf.set(enrollment, { sent: done - due * 1000, queued: idMillis(m.id) - due * 1000 });
    }
    const measured = turns.flatMap((t) => t.ids.filter((id) => dueAt.get(id)! * 1000 < t.loadEnded));
    const lags = measured.map((id) => lagOf.get(id)).filter((l) => l !== undefined);
    const aloneLags = alone.map((id) => lagOf.get(id)).filter((l) => l !== undefined);
    const at = (xs: Array<{ sent: number; queued: number }>, p: number, of: 'sent' | 'queued' = 'sent') => round2(percentile(xs.map((l) => l[of]), p));
    return {
      steps: measured.length, duePerSecond: Math.round(measured.length / new Set(measured.map((id) => dueAt.get(id))).size),
      p50: at(lags, 50), p99: at(lags, 99), max: at(lags, 100), queued: { p50: at(lags, 50, 'queued'), p99: at(lags, 99, 'queued') },
      unsent: measured.length - lags.length + alone.length - aloneLags.length,
      alone: {
        steps: alone.length, p50: at(aloneLags, 50), p99: at(aloneLags, 99), queued: { p50: at(aloneLags, 50, 'queued'), p99: at(aloneLags, 99, 'queued') },
        cpuMsPerStep: cpuBefore === null || cpuAfter === null ? null : round2(((cpuAfter - cpuBefore) * 1000) / alone.length),
      },
      getAlone, getDuring,
    };
  } finally {
    await ctx.stop(api);
  }
}

/** Adds `count` enrollments to the sequence waiting for their first step, due over the next two weeks (their contacts are never read: none falls due). */
async function seedWaiting(database: Database, scope: Scope, sequenceId: string, count: number): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const perStatement = rowsPerStatement(database);
  for (let start = 0; start < count; start += ROWS_PER_TRANSACTION) {
    const end = Math.min(count, start + ROWS_PER_TRANSACTION);
    await database.db.transaction().execute(async (tx) => {
      for (let from = start; from < end; from += perStatement) {
        const rows = [];
        for (let i = from; i < Math.min(end, from + perStatement); i++) {
          rows.push({
            ...tenantOf(scope), id: newId('enr'), sequence_id: sequenceId, contact_id: newId('con'), status: 'active', reason: null, error: null, step_index: 0,
            due_at: now + 3600 + (i % (14 * 86_400)), mailbox_id: null, thread_message_ids: '[]', task_id: null, paused_until: null, last_sent_at: null, finished_at: null,
            created_at: now, updated_at: now,
          });
        }
        await tx.insertInto('sequence_enrollments').values(rows).execute();
      }
    });
  }
}

async function sweepCost(ctx: Context): Promise<SequenceResults['s24_sweep_cost']> {
  const { database, options } = ctx;
  const due = 100;
  const runs = options.quick ? 5 : 9;
  const sizes = [10_000, options.quick ? 100_000 : 1_000_000];
  ctx.log(`scenario 24, scheduler runs stepping ${due} due enrollments of ${sizes.map((n) => n.toLocaleString('en')).join(' and of ')}`);
  // One step: each enrollment stepped finishes, so the sequence keeps its size from run to run.
  const api = await ctx.start('bench/instrumented-server.ts', { ...ctx.env, WORKERS: 'off' });
  const subjects: Array<{ size: number; scope: Scope; contactIds: string[]; sequenceId: string }> = [];
  try {
    for (const size of sizes) {
      const org = await testModeWithContacts(database, `Sweep org ${size}`, due * (runs + 1));
      const sequence = await createSequence(`${api.url}/v1`, org.token, `Sweep ${size}`, { mailboxes: 1, steps: 1, firstWait: 0 });
      subjects.push({ size, scope: org.scope, contactIds: org.contactIds, sequenceId: sequence.id });
    }
  } finally {
    await ctx.stop(api);
  }
  for (const s of subjects) {
    // Live, as its scheduling state leaves it (it has no list to enrol), with its enrollments.
    await updateIn(database.db, 'sequences', s.scope).set({ status: 'live', launched_at: Math.floor(Date.now() / 1000) }).where('id', '=', s.sequenceId).execute();
    await seedWaiting(database, s.scope, s.sequenceId, s.size - due);
  }
  if (ctx.kind === 'postgres') await sql`analyze sequence_enrollments, sequences, contacts, outbox_messages, jobs, mailboxes`.execute(database.db);
  const times: number[][] = subjects.map(() => []);
  // Run by run in turn, the first of each untimed; each run's due enrollments are new ones (new contacts).
  for (let run = 0; run <= runs; run++) {
    for (const [i, s] of subjects.entries()) {
      const now = Math.floor(Date.now() / 1000);
      const rows = s.contactIds.slice(run * due, (run + 1) * due).map((contactId) => ({
        ...tenantOf(s.scope), id: newId('enr'), sequence_id: s.sequenceId, contact_id: contactId, status: 'active', reason: null, error: null, step_index: 0,
        due_at: now - 1, mailbox_id: null, thread_message_ids: '[]', task_id: null, paused_until: null, last_sent_at: null, finished_at: null, created_at: now, updated_at: now,
      }));
      await database.db.insertInto('sequence_enrollments').values(rows).execute();
      const started = performance.now();
      await runWrite(database, s.scope, (w) => sweep(w, s.sequenceId));
      const ms = performance.now() - started;
      const stepped = await selectIn(database.db, 'sequence_enrollments', s.scope).select((eb) => eb.fn.countAll<number>().as('n'))
        .where('id', 'in', rows.map((r) => r.id)).where('status', '=', 'finished').where('reason', '=', 'completed').executeTakeFirstOrThrow();
      const queued = await selectIn(database.db, 'outbox_messages', s.scope).select((eb) => eb.fn.countAll<number>().as('n'))
        .where('contact_id', 'in', rows.map((r) => r.contact_id)).where('status', '=', 'queued').executeTakeFirstOrThrow();
      if (Number(stepped.n) !== due || Number(queued.n) !== due) throw new Error(`scenario 24: a scheduler run stepped ${stepped.n} and queued ${queued.n} of ${due} due enrollments`);
      if (run > 0) times[i].push(ms);
    }
  }
  // Their messages were queued for no worker: none may send them later.
  await database.db.deleteFrom('jobs').where('org_id', 'in', subjects.map((s) => s.scope.orgId)).execute();
  const [small, large] = subjects.map((s, i) => ({ enrollments: s.size, ms: round2(median(times[i])) }));
  return { due, runs, small, large };
}

export async function sequenceScenarios(ctx: Context): Promise<SequenceResults> {
  return { s23_enrol_at_run: await enrolAtRun(ctx), s24_scheduler_lag: await schedulerLag(ctx), s24_sweep_cost: await sweepCost(ctx) };
}
