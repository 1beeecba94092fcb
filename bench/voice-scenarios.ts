// Scenarios 25 and 26: voice.
// 25: Twilio's signed status callbacks of calls placed through a Twilio telephony connection
//     (`POST /public/voice/twilio/…`, form-encoded, `X-Twilio-Signature`), every one but one in ten a
//     state its call has not reached (ringing, in-progress, completed with CallDuration: a real,
//     uncached update of the call, `call.completed` recorded at the end), the tenth a duplicate or a
//     late one answered `unchanged`, by the API process on the server core, in turn with GET one.
// 26: the dialer's pick (src/resources/voice/dialer.ts): one run of `dial` in its write (`runWrite`)
//     filling 4 free lines of a running session over a list of 100,000 contacts (10,000 quick), at
//     the start, the middle and the end of the list, run by run in turn, timed in the runner's
//     process; beside it baseline (j), the run's keyset read of the list alone at the same cursors.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Database } from '../src/db/database.ts';
import { createOrganization } from '../src/orgs/orgs.ts';
import { newId } from '../src/platform/ids.ts';
import { callbackPath } from '../src/platform/public/callback-tokens.ts';
import { selectIn, tenantOf, updateIn } from '../src/platform/resource/tenancy.ts';
import type { Scope } from '../src/platform/scope.ts';
import { runWrite } from '../src/platform/write.ts';
import { createList } from '../src/resources/lists/lists.store.ts';
import { dial } from '../src/resources/voice/dialer.ts';
import { BENCH_ACCOUNT_SID, signedCallback, type LoadSpec } from './load.ts';
import type { BenchOptions } from './options.ts';
import type { Server } from './processes.ts';
import type { Figure, InTurnRun } from './scenarios.ts';
import { rowsPerStatement, seedContacts } from './seed.ts';

interface Percentiles { p50: number; p99: number; max: number }

export interface VoiceResults {
  /**
   * The callbacks answered per second (`rps`) and their latency, in turn with GET one (`getOne`).
   * `calls`: calls seeded `queued` for the load; `recorded`: the calls' state moves found in the
   * store after the turns (warm-ups included; about nine in ten callbacks); `completed`/`events`:
   * calls completed with their duration and their `call.completed` events (unequal: unexpected);
   * `ranOut`: rounds whose slice of calls ran out (its sequence started over: unexpected).
   */
  s25_call_callbacks: Figure & { calls: number; recorded: number; completed: number; events: number; ranOut: number; getOne: Figure };
  /**
   * Milliseconds of one dialer run filling `lines` free lines (`pick`: its write, from `runWrite`
   * until committed; `dial`: its own statements, `dial` inside the write, without the write's end
   * and commit), at each position of the list (its first contact, the middle, the last `runs` ×
   * `lines`), and baseline (j), the run's read of the list's next page alone at the same cursors;
   * `misplaced`: runs that did not place `lines` calls or moved the cursor elsewhere.
   */
  s26_dialer_pick: {
    contacts: number; lines: number; runs: number; misplaced: number;
    positions: Record<'start' | 'middle' | 'end', { at: number; pick: Percentiles; dial: Percentiles; bare: Percentiles }>;
  };
}

interface Context {
  kind: 'sqlite' | 'postgres';
  database: Database;
  options: BenchOptions;
  workDir: string;
  log: (message: string) => void;
  start: (script: string, env: Record<string, string>) => Promise<Server>;
  stop: (server: Server) => Promise<void>;
  inTurn: (runs: Array<Omit<InTurnRun, 'spec'> & { spec: Pick<LoadSpec, 'kind' | 'path'> & Partial<LoadSpec> }>) => Promise<Figure[]>;
  env: Record<string, string>;
  getOneSpec: Pick<LoadSpec, 'kind' | 'path'> & Partial<LoadSpec>;
}

const RAISED_PUBLIC = { PUBLIC_RATE_LIMIT_PER_SECOND: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000000', OUTBOUND_ALLOW_PRIVATE: 'true' };
const AUTH_TOKEN = 'bench-twilio-auth-token-0123456789';

async function post<T = { id: string }>(url: string, token: string, body?: unknown): Promise<T> {
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
  if (res.status >= 300) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const round3 = (x: number) => Math.round(x * 1000) / 1000;
const percentiles = (xs: number[]): Percentiles => ({ p50: round3(percentile(xs, 50)), p99: round3(percentile(xs, 99)), max: round3(percentile(xs, 100)) });
const count = async (query: { executeTakeFirstOrThrow(): Promise<{ n: unknown }> }) => Number((await query.executeTakeFirstOrThrow()).n);

/** `count` calls of the connection, `queued` as a placed call is once Twilio took it (its CallSid), in no session. */
async function seedCalls(database: Database, scope: Scope, connectionId: string, total: number): Promise<Array<{ id: string; sid: string; to: string }>> {
  const now = Math.floor(Date.now() / 1000);
  const perStatement = Math.floor(rowsPerStatement(database) / 3);
  const calls = Array.from({ length: total }, (_, i) => ({ id: newId('call'), sid: `CA${i.toString(16).padStart(32, '0')}`, to: `+4420794${String(i % 100_000).padStart(5, '0')}` }));
  await database.db.transaction().execute(async (tx) => {
    for (let from = 0; from < total; from += perStatement) {
      await tx.insertInto('calls').values(calls.slice(from, from + perStatement).map((c) => ({
        ...tenantOf(scope), id: c.id, session_id: null, contact_id: null, agent_id: null, number_id: null, direction: 'outbound', from_number: '+14155550100', to_number: c.to,
        status: 'queued', provider: 'twilio', connection_id: connectionId, provider_call_id: c.sid, answered_by: null, disposition: null, notes: null, transcript: null, error: null,
        pass: 1, attempt: 1, placing_at: now, ringing_at: null, answered_at: null, ended_at: null, duration: null, last_update_at: now, dispositioned_at: null, created_at: now, updated_at: now,
      }))).execute();
    }
  });
  return calls;
}

async function callbacks(ctx: Context): Promise<VoiceResults['s25_call_callbacks']> {
  const { database, options } = ctx;
  // Enough calls that no turn runs out at 6,000 callbacks a second (each call takes three, and one
  // callback in ten is a replay): a slice per round, the first round's warm-up included.
  const turnSeconds = options.warmupSeconds + options.roundSeconds;
  const perSlice = Math.ceil((6000 * turnSeconds * 0.9) / 3 / 500) * 500;
  const total = perSlice * options.rounds + 1;
  ctx.log(`scenario 25, Twilio's signed status callbacks of ${(total - 1).toLocaleString('en')} calls, in turn with GET one`);
  const org = await createOrganization(database, { defaultCredits: 1000 }, 'Voice callbacks org', { sandbox: false });
  const scope: Scope = { orgId: org.org_id, mode: 'live' };
  const env = { ...ctx.env, WORKERS: 'off', ...RAISED_PUBLIC };
  const api = await ctx.start('bench/instrumented-server.ts', env);
  try {
    const connection = await post(`${api.url}/v1/connections`, org.live_token, {
      kind: 'telephony', provider: 'twilio', name: 'Twilio voice', settings: { account_sid: BENCH_ACCOUNT_SID, api_url: 'http://127.0.0.1:9' }, credentials: { auth_token: AUTH_TOKEN },
    });
    const calls = await seedCalls(database, scope, connection.id, total);
    if (ctx.kind === 'postgres') await sql`analyze calls, connections, jobs, events`.execute(database.db);
    // Signed by the service with its secret (SECRET_KEY), as the adapter gives each call its StatusCallback;
    // the last call is the check's.
    const callsFile = join(ctx.workDir, `calls-${ctx.kind}.txt`);
    writeFileSync(callsFile, calls.slice(0, -1).map((c) => `${callbackPath(ctx.env.SECRET_KEY, '/public/voice/twilio', [scope.orgId, scope.mode, connection.id, c.id])} ${c.sid} ${c.to}`).join('\n'));
    await checkCallbacks(api.url, calls.at(-1)!, callbackPath(ctx.env.SECRET_KEY, '/public/voice/twilio', [scope.orgId, scope.mode, connection.id, calls.at(-1)!.id]));
    const [figure, getOne] = await ctx.inTurn([
      { server: api, spec: { kind: 'twilio-callbacks', path: '/', callsFile, slices: options.rounds, authToken: AUTH_TOKEN } },
      { server: api, spec: ctx.getOneSpec },
    ]);
    const ofCalls = () => selectIn(database.db, 'calls', scope).select((eb) => eb.fn.countAll<number>().as('n'));
    const recorded = (await count(ofCalls().where('ringing_at', 'is not', null))) + (await count(ofCalls().where('answered_at', 'is not', null))) + (await count(ofCalls().where('ended_at', 'is not', null)));
    const completed = await count(ofCalls().where('status', '=', 'completed').where('duration', 'is not', null));
    const events = await count(selectIn(database.db, 'events', scope).select((eb) => eb.fn.countAll<number>().as('n')).where('type', '=', 'call.completed'));
    // A slice whose last call completed ran out of calls: its sequence started over, answered `unchanged`.
    const lasts = Array.from({ length: options.rounds }, (_, k) => calls[(k + 1) * perSlice - 1].id);
    const ranOut = await count(ofCalls().where('id', 'in', lasts).where('status', '=', 'completed'));
    return { ...figure, unexpected: figure.unexpected + ranOut + Math.abs(events - completed), calls: total - 1, recorded, completed, events, ranOut, getOne };
  } finally {
    await ctx.stop(api);
    await database.db.deleteFrom('jobs').where('org_id', '=', scope.orgId).execute();
  }
}

/** One call's callbacks by hand, before the load: recorded, a duplicate unchanged, a wrong signature 401. */
async function checkCallbacks(url: string, call: { sid: string; to: string }, path: string): Promise<void> {
  const line = [path, call.sid, call.to];
  const send = async (state: string, tamper = false) => {
    const { body, headers } = signedCallback(url, AUTH_TOKEN, line, state);
    const res = await fetch(`${url}${path}`, { method: 'POST', body: tamper ? body.replace('ringing', 'completed') : body, headers });
    return `${res.status} ${res.status === 200 ? ((await res.json()) as { data: { status: string } }).data.status : ''}`.trim();
  };
  const answers = [await send('ringing'), await send('ringing'), await send('ringing', true), await send('in-progress'), await send('completed')];
  if (answers.join() !== '200 recorded,200 unchanged,401,200 recorded,200 recorded') throw new Error(`scenario 25: a call's callbacks by hand were answered ${answers.join(', ')}`);
}

/** A test-mode organization (the local driver) with a list of `contacts` contacts, their ids in list order. */
async function dialerOrg(ctx: Context, contacts: number) {
  const org = await createOrganization(ctx.database, { defaultCredits: 1000 }, 'Dialer org', { sandbox: false });
  const scope: Scope = { orgId: org.org_id, mode: 'test' };
  const listId = await runWrite(ctx.database, scope, async (w) => (await createList(w, { name: 'To call', type: 'contacts' })).id);
  const ids: string[] = [];
  await seedContacts(ctx.database, { scope, token: org.test_token, listIds: [listId], contacts: 0 }, contacts, (id) => ids.push(id));
  return { scope, token: org.test_token, listId, ids };
}

async function dialerPick(ctx: Context): Promise<VoiceResults['s26_dialer_pick']> {
  const { database, options } = ctx;
  const contacts = options.quick ? 10_000 : 100_000;
  const [lines, runs, warmup] = [4, options.quick ? 60 : 200, 5];
  ctx.log(`scenario 26, the dialer's pick of ${lines} lines in a session over ${contacts.toLocaleString('en')} contacts, ${runs} runs at each of three places`);
  const org = await dialerOrg(ctx, contacts);
  // The session through the API (a service with no workers: the dialer runs here only), at any hour.
  const api = await ctx.start('bench/instrumented-server.ts', { ...ctx.env, WORKERS: 'off' });
  let sessionId: string;
  try {
    const v1 = `${api.url}/v1`;
    const member = await post(`${v1}/members`, org.token, { name: 'Ada Agent', email: 'ada@bench-voice.example', timezone: 'Europe/London' });
    const agent = await post(`${v1}/voice/agents`, org.token, { member_id: member.id, status: 'available', phone: '+44 20 7946 0555' });
    const number = await post(`${v1}/voice/numbers`, org.token, { phone_number: '+14155550100' });
    const session = await post(`${v1}/voice/dialer/sessions`, org.token, {
      list_id: org.listId, agent_id: agent.id, number_id: number.id, parallel_lines: lines, calling_window: { start_hour: 0, end_hour: 24, timezone: 'UTC' },
    });
    await post(`${v1}/voice/dialer/sessions/${session.id}/resume`, org.token);
    sessionId = session.id;
  } finally {
    await ctx.stop(api);
  }
  if (ctx.kind === 'postgres') await sql`analyze`.execute(database.db);
  const starts = { start: 0, middle: Math.floor(contacts / 2), end: contacts - (warmup + runs) * lines } as const;
  const cursors = Object.fromEntries(Object.entries(starts).map(([k, at]) => [k, at === 0 ? null : org.ids[at - 1]])) as Record<keyof typeof starts, string | null>;
  const picks: Record<string, number[]> = { start: [], middle: [], end: [] };
  const bare: Record<string, number[]> = { start: [], middle: [], end: [] };
  const own: Record<string, number[]> = { start: [], middle: [], end: [] };
  let misplaced = 0;
  const session = () => updateIn(database.db, 'dialer_sessions', org.scope);
  for (let run = 0; run < warmup + runs; run++) {
    for (const position of Object.keys(starts) as Array<keyof typeof starts>) {
      // The lines are free again: the calls before ended, the session is where this place left it.
      await updateIn(database.db, 'calls', org.scope).set({ status: 'completed', ended_at: Math.floor(Date.now() / 1000), duration: 0 })
        .where('session_id', '=', sessionId).where('status', 'in', ['queued', 'ringing', 'in-progress']).execute();
      await session().set({ cursor: cursors[position], exhausted: 0 }).where('id', '=', sessionId).execute();
      let started = performance.now();
      let page = selectIn(database.db, 'contacts', org.scope).selectAll().where('list_id', '=', org.listId);
      if (cursors[position]) page = page.where('id', '>', cursors[position]);
      await page.orderBy('id').limit(50).execute();
      const bareMs = performance.now() - started;
      let ownMs = 0;
      started = performance.now();
      await runWrite(database, org.scope, async (w) => {
        const begun = performance.now();
        await dial(w, sessionId);
        ownMs = performance.now() - begun;
      });
      const ms = performance.now() - started;
      const after = await selectIn(database.db, 'dialer_sessions', org.scope).select(['cursor', 'status']).where('id', '=', sessionId).executeTakeFirstOrThrow();
      const placed = await count(selectIn(database.db, 'calls', org.scope).select((eb) => eb.fn.countAll<number>().as('n')).where('session_id', '=', sessionId).where('status', '=', 'queued'));
      const expectedCursor = org.ids[starts[position] + (run + 1) * lines - 1];
      if (placed !== lines || after.cursor !== expectedCursor || after.status !== 'running') misplaced++;
      cursors[position] = after.cursor;
      if (run >= warmup) {
        picks[position].push(ms);
        own[position].push(ownMs);
        bare[position].push(bareMs);
      }
    }
  }
  // Their placing was queued for no worker: none may place them later.
  await database.db.deleteFrom('jobs').where('org_id', '=', org.scope.orgId).execute();
  const positions = Object.fromEntries(Object.entries(starts).map(([k, at]) => [k, { at, pick: percentiles(picks[k]), dial: percentiles(own[k]), bare: percentiles(bare[k]) }])) as VoiceResults['s26_dialer_pick']['positions'];
  return { contacts, lines, runs, misplaced, positions };
}

export async function voiceScenarios(ctx: Context): Promise<VoiceResults> {
  return { s25_call_callbacks: await callbacks(ctx), s26_dialer_pick: await dialerPick(ctx) };
}
