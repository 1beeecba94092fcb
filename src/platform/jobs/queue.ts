// The jobs table as a queue: claim due jobs under a lease, record outcomes, extend and release
// leases. A claim is one statement; on PostgreSQL `FOR UPDATE SKIP LOCKED` lets many workers claim
// at once without waiting for or taking each other's jobs. A job whose lease ended (its worker died)
// is due again, so it is claimed like a queued one. Outcomes are recorded only under the lease
// token of the claim, so a worker that lost its lease can never overwrite a newer attempt.
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { Database } from '../../db/database.ts';
import { nowMillis } from '../clock.ts';
import type { DB } from '../../db/schema.ts';
import type { SettleBatch } from './kinds.ts';

export type JobRow = Selectable<DB['jobs']>;
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'dead'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Statuses of jobs that will run: never tried, waiting to retry, or running (due when the lease ends). */
const PENDING = ['queued', 'failed', 'running'] as const;

/**
 * A job's `schedule_key` as it goes back to waiting (a retry, a release, an operator's retry): its
 * own, unless the key was given to a newer job meanwhile (`w.schedule` while it ran), which is then
 * the record's next run; this one runs on without a key. At most one waiting job holds a key.
 */
const keyKept = sql<string | null>`case when schedule_key is not null and exists (select 1 from jobs newer
  where newer.org_id = jobs.org_id and newer.mode = jobs.mode and newer.schedule_key = jobs.schedule_key
  and newer.status in ('queued', 'failed') and newer.id <> jobs.id) then null else schedule_key end`;
const ERROR_MAX = 2000;

/**
 * How many more jobs a worker may start of each concurrency key and of each organization: `keys` and
 * `orgs` for those it runs (0 or less: none), `perKey` and `perOrg` for the others.
 */
export interface ClaimRoom {
  perKey: number;
  keys: ReadonlyMap<string, number>;
  perOrg: number;
  orgs: ReadonlyMap<string, number>;
}

/** `case <column> when … then <room> … else <fallback> end`: the room of each row's key or organization. */
function roomOf(column: 'concurrency_key' | 'org_id', room: ReadonlyMap<string, number>, fallback: number) {
  if (room.size === 0) return sql`cast(${fallback} as integer)`;
  const cases = [...room].map(([value, n]) => sql`when ${value} then cast(${Math.max(0, n)} as integer)`);
  return sql`case ${sql.ref(column)} ${sql.join(cases, sql` `)} else cast(${fallback} as integer) end`;
}

/**
 * The stretches of organization ids between those at their share (`lo < org_id < hi`, open at the
 * ends): every organization with room is in one of them.
 */
function stretchesBetween(full: string[]): Array<[lo: string | undefined, hi: string | undefined]> {
  const bounds = [undefined, ...[...full].sort(), undefined];
  return bounds.slice(1).map((hi, i) => [bounds[i], hi]);
}

/**
 * Claims up to `limit` due jobs of `kinds` (a worker never takes a kind it has no handler for), and
 * of each concurrency key and each organization no more than the worker has room for, shared fairly:
 * candidates are ranked by how many jobs their organization would then be running here, then by due
 * time, so an organization with nothing running goes first and one with a backlog takes turns with
 * the others instead of every slot. Keys without room are left out of the candidates. Organizations
 * at their share are left out of the ranking; so that the others' jobs are found behind their
 * backlog, the first due jobs of each stretch of organizations between them are read as well, each
 * a range of the (status, org_id, run_at) index, rather than skipping the backlog row by row.
 */
export async function claimJobs(database: Database, kinds: readonly string[], room: ClaimRoom, limit: number, token: string, leaseMs: number): Promise<JobRow[]> {
  const result = await claimStatement(database, kinds, room, limit, token, leaseMs).execute(database.db);
  return result.rows;
}

/** The statement of `claimJobs` (exported so that a test can read its plan). */
export function claimStatement(database: Database, kinds: readonly string[], room: ClaimRoom, limit: number, token: string, leaseMs: number): RawBuilder<JobRow> {
  // Jobs fall due on the service's clock (a test moves it to make them due); leases run on the
  // real one: they are kept between processes, each with its own clock (see clock.ts).
  const now = nowMillis();
  const real = Date.now();
  const until = real + leaseMs;
  const lock = database.dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const fullKeys = [...room.keys].filter(([, n]) => n <= 0).map(([key]) => key);
  const fullOrgs = [...room.orgs].filter(([, n]) => n <= 0).map(([org]) => org);
  const keyFilter = fullKeys.length > 0 ? sql`and (concurrency_key is null or concurrency_key not in (${sql.join(fullKeys)}))` : sql``;
  const due = (status: string, where: RawBuilder<unknown>, order: RawBuilder<unknown>) => sql`select * from (
    select org_id, mode, id, run_at, concurrency_key from jobs
    where status = ${status} and run_at <= ${status === 'running' ? real : now} and kind in (${sql.join(kinds)}) ${keyFilter} ${where}
    order by ${order} limit ${limit * 4} ${lock}) as due`;
  const stretches = fullOrgs.length === 0 ? [] : stretchesBetween(fullOrgs).map(([lo, hi]) =>
    sql`${lo === undefined ? sql`` : sql`and org_id > ${lo}`} ${hi === undefined ? sql`` : sql`and org_id < ${hi}`}`);
  // One ordered read of the (status, run_at) index per status: `status in (…) order by run_at`
  // would read and sort every due job, 15 ms a claim behind a backlog of 20,000.
  const candidates = PENDING.flatMap((status) => [
    due(status, sql``, sql`run_at`),
    ...stretches.map((stretch) => due(status, stretch, sql`org_id, run_at`)),
  ]);
  // A job both among the oldest and first in its stretch is one candidate (`union`).
  const union = stretches.length > 0 ? sql` union ` : sql` union all `;
  // First the jobs each key has room for, then of those the ones each organization has room for:
  // ranking both over all candidates at once would count, against an organization's room, jobs its
  // full keys cannot take, and with ties in due time ranked differently by key and by organization
  // no candidate might pass both (a queue full of due jobs and nothing claimed). One total order
  // (due time, then the job's key) serves both rankings. `org_n - org_room` is what the
  // organization would run here with this job, less its share.
  const orgRoom = roomOf('org_id', room.orgs, room.perOrg);
  return sql<JobRow>`update jobs
    set status = 'running', attempts = attempts + 1, lease_token = ${token}, lease_until = ${until}, run_at = ${until}, updated_at = ${now}
    where (org_id, mode, id) in (
      select org_id, mode, id from (
        select org_id, mode, id, run_at, ${orgRoom} as org_room,
          row_number() over (partition by org_id order by run_at, mode, id) as org_n
        from (
          select org_id, mode, id, run_at, concurrency_key,
            row_number() over (partition by concurrency_key order by run_at, org_id, mode, id) as key_n
          from (${sql.join(candidates, union)}) as candidates) as keyed
        where concurrency_key is null or key_n <= ${roomOf('concurrency_key', room.keys, room.perKey)}) as ranked
      where org_n <= org_room
      order by org_n - org_room, run_at, org_id, mode, id limit ${limit})
    returning *`;
}

/**
 * When the next job of `kinds` not yet due falls due (the service's clock, milliseconds), or
 * undefined: a runner with nothing to claim sleeps until then rather than finding it by polling
 * (up to a second late). One probe of the (status, run_at) index per status a job waits in.
 */
export async function nextDueAt(database: Database, kinds: readonly string[]): Promise<number | undefined> {
  const now = nowMillis();
  const probe = (status: string) => database.db.selectFrom('jobs').select('run_at')
    .where('status', '=', status).where('run_at', '>', now).where('kind', 'in', kinds).orderBy('run_at').limit(1).executeTakeFirst();
  const found = (await Promise.all((['queued', 'failed'] as const).map(probe))).flatMap((row) => (row ? [Number(row.run_at)] : []));
  return found.length === 0 ? undefined : Math.min(...found);
}

/** A job's identity across tenants. */
export const jobKey = (job: { org_id: string; mode: string; id: string }): string => `${job.org_id}/${job.mode}/${job.id}`;

/** How an attempt ended: succeeded, retried at `runAt` (`failed`), or given up (`dead`). */
export type JobOutcome = { status: 'succeeded' } | { status: 'failed' | 'dead'; error: string; runAt: number };

export interface SettledJob {
  job: JobRow;
  outcome: JobOutcome;
  /** Writes the handler asked to commit with the outcome (see `JobContext.settle`); a lone write is a batch of its own. */
  writes: Array<{ batch: SettleBatch<unknown>; value: unknown }>;
}

/**
 * Records the outcomes of `jobs` (in one transaction the caller opened), each only while its job
 * still holds the lease of its claim, and then runs the writes of the jobs whose outcome was
 * recorded: a worker that lost its lease neither overwrites the newer attempt nor records its own
 * side of it. Successes take one statement together; failures (rarer, each its own time and error)
 * one each. The writes run in the order they were first asked for, each batch once with the
 * values of all the jobs that gave it one.
 */
export async function settleJobs(tx: Kysely<DB>, jobs: readonly SettledJob[]): Promise<void> {
  const now = nowMillis();
  const held = new Set<string>(); // `org/mode/id` of the jobs whose lease held
  const leased = (q = tx.updateTable('jobs')) => q.where('status', '=', 'running');
  const succeeded = jobs.filter((s) => s.outcome.status === 'succeeded');
  if (succeeded.length > 0) {
    const rows = await leased()
      .where((eb) => eb(eb.refTuple('org_id', 'mode', 'id', 'lease_token'), 'in', succeeded.map(({ job }) => eb.tuple(job.org_id, job.mode, job.id, job.lease_token!))))
      .set({ status: 'succeeded', lease_token: null, lease_until: null, last_error: null, run_at: now, updated_at: now })
      .returning(['org_id', 'mode', 'id']).execute();
    for (const r of rows) held.add(jobKey(r));
  }
  for (const { job, outcome } of jobs) {
    if (outcome.status === 'succeeded') continue;
    const row = await leased().where('org_id', '=', job.org_id).where('mode', '=', job.mode).where('id', '=', job.id).where('lease_token', '=', job.lease_token)
      .set({ status: outcome.status, run_at: outcome.runAt, lease_token: null, lease_until: null, last_error: outcome.error.slice(0, ERROR_MAX), updated_at: now, schedule_key: keyKept })
      .returning(['org_id', 'mode', 'id']).executeTakeFirst();
    if (row) held.add(jobKey(row));
  }
  const batches = new Map<SettleBatch<unknown>, unknown[]>();
  for (const s of jobs) {
    if (!held.has(jobKey(s.job))) continue;
    for (const { batch, value } of s.writes) {
      if (batches.has(batch)) batches.get(batch)!.push(value);
      else batches.set(batch, [value]);
    }
  }
  for (const [batch, values] of batches) await batch.write(tx, values);
}

/** Hands unfinished jobs back (graceful shutdown): due at once, the interrupted attempt not counted. */
export async function releaseJobs(db: Kysely<DB>, tokens: string[]): Promise<void> {
  if (tokens.length === 0) return;
  const now = nowMillis();
  await db.updateTable('jobs').where('status', '=', 'running').where('lease_token', 'in', tokens)
    .set((eb) => ({ status: 'queued', attempts: eb('attempts', '-', 1), lease_token: null, lease_until: null, run_at: now, updated_at: now, schedule_key: keyKept }))
    .execute();
}

/** Extends the leases of the jobs a live worker is running, so no other worker takes them. */
export async function extendLeases(db: Kysely<DB>, tokens: string[], leaseMs: number): Promise<void> {
  if (tokens.length === 0) return;
  const until = Date.now() + leaseMs; // real time, like the claim's lease
  await db.updateTable('jobs').where('status', '=', 'running').where('lease_token', 'in', tokens)
    .set({ lease_until: until, run_at: until }).execute();
}

/** Adds a system job (no organization) unless one with this id exists: how a schedule fires once. */
export async function enqueueOnce(db: Kysely<DB>, id: string, kind: string, maxAttempts: number, payload: unknown = {}): Promise<boolean> {
  const now = nowMillis();
  const result = await db.insertInto('jobs').values({
    org_id: '', mode: 'live', id, kind, payload: JSON.stringify(payload), status: 'queued', run_at: now,
    attempts: 0, max_attempts: maxAttempts, lease_until: null, lease_token: null, last_error: null, created_at: now, updated_at: now,
  }).onConflict((oc) => oc.columns(['org_id', 'mode', 'id']).doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** A job as operators see it (`cli jobs list`): times as ISO strings. */
export function describeJob(r: JobRow) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
  return {
    id: r.id, org_id: r.org_id || null, mode: r.mode, kind: r.kind, key: r.schedule_key, status: r.status, attempts: Number(r.attempts), max_attempts: Number(r.max_attempts),
    run_at: iso(r.run_at), last_error: r.last_error, payload: JSON.parse(r.payload) as unknown, created_at: iso(r.created_at), updated_at: iso(r.updated_at),
  };
}

export async function listJobs(db: Kysely<DB>, filter: { status?: string; kind?: string; limit: number }) {
  let q = db.selectFrom('jobs').selectAll();
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.kind) q = q.where('kind', '=', filter.kind);
  const rows = await q.orderBy('updated_at', 'desc').limit(filter.limit).execute();
  return rows.map(describeJob);
}

/** A failed or dead job, due again at once with all its attempts (by id alone: an operator's tool). */
export async function retryJob(db: Kysely<DB>, id: string) {
  const now = nowMillis();
  const row = await db.updateTable('jobs').where('id', '=', id).where('status', 'in', ['failed', 'dead'])
    .set({ status: 'queued', attempts: 0, run_at: now, updated_at: now, schedule_key: keyKept }).returningAll().executeTakeFirst();
  return row && describeJob(row);
}

export interface QueueStats {
  /** Jobs by status; `succeeded` counts those of the last hour (older ones are history, pruned later). */
  counts: Record<JobStatus, number>;
  /** Seconds since the oldest job that is due and not running became due; 0 when none waits. */
  oldest_due_age_seconds: number;
}

export async function queueStats(db: Kysely<DB>): Promise<QueueStats> {
  const now = nowMillis();
  const [rows, succeeded, oldest] = await Promise.all([
    db.selectFrom('jobs').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).where('status', 'in', ['queued', 'running', 'failed', 'dead']).groupBy('status').execute(),
    db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'succeeded').where('updated_at', '>=', now - 3_600_000).executeTakeFirstOrThrow(),
    db.selectFrom('jobs').select((eb) => eb.fn.min('run_at').as('run_at')).where('status', 'in', ['queued', 'failed']).where('run_at', '<=', now).executeTakeFirst(),
  ]);
  const counts = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
  for (const r of rows) if (r.status in counts) counts[r.status as JobStatus] = Number(r.n);
  counts.succeeded = Number(succeeded.n);
  const due = oldest?.run_at == null ? undefined : Number(oldest.run_at);
  return { counts, oldest_due_age_seconds: due === undefined ? 0 : Math.max(0, Math.floor((now - due) / 1000)) };
}

/** Deletes succeeded jobs finished before `before` (milliseconds), in bounded batches. */
export async function pruneSucceeded(database: Database, before: number, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await sql`delete from jobs where (org_id, mode, id) in (
      select org_id, mode, id from jobs where status = 'succeeded' and updated_at < ${before} limit ${batch})`.execute(database.db);
    const n = Number(result.numAffectedRows ?? 0);
    total += n;
    if (n < batch) return total;
  }
}
