// A mailbox's limits: how many messages it may hand to its server in a rolling day and hour, the
// daily one raised step by step by a warm-up. Sends are counted from the outbox: a message counts
// from the moment its attempt is recorded (`attempted_at`, committed before the provider call) for
// the 24 hours and the hour after; one refused for a while (4xx, no connection) has its attempt
// undone and does not count, one taken, refused for good or interrupted does (the server saw it).
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';

export const DAY = 86_400;
export const HOUR = 3_600;

export interface Warmup { enabled: boolean; start: number; increment_per_day: number }
export const WARMUP_DEFAULTS: Warmup = { enabled: false, start: 10, increment_per_day: 5 };

export interface MailboxLimits {
  daily_limit: unknown;
  hourly_limit: unknown;
  warmup: unknown;
  warmup_started_at: unknown;
}

export interface Sent { day: number; hour: number }

export interface Allowance {
  today: number;
  this_hour: number;
  remaining_today: number;
  remaining_this_hour: number;
}

export const warmupOf = (value: unknown): Warmup => ({ ...WARMUP_DEFAULTS, ...(typeof value === 'string' ? parseJson<Partial<Warmup>>(value) : value as Partial<Warmup> | null) });

/**
 * The daily allowance at `now`: the daily limit, or during a warm-up the smaller of it and
 * `start + increment_per_day × d`, d the whole days since the warm-up started (0 on its first day).
 */
export function dailyAllowance(m: MailboxLimits, now: number): number {
  const limit = Number(m.daily_limit);
  const warmup = warmupOf(m.warmup);
  if (!warmup.enabled || m.warmup_started_at === null || m.warmup_started_at === undefined) return limit;
  const days = Math.max(0, Math.floor((now - Number(m.warmup_started_at)) / DAY));
  return Math.min(limit, warmup.start + warmup.increment_per_day * days);
}

/** What the mailbox may send now, given what it sent in the last 24 hours and the last hour. */
export function allowanceOf(m: MailboxLimits, sent: Sent, now: number): Allowance {
  const today = dailyAllowance(m, now);
  const thisHour = m.hourly_limit === null || m.hourly_limit === undefined ? today : Math.min(today, Number(m.hourly_limit));
  const remainingToday = Math.max(0, today - sent.day);
  return { today, this_hour: thisHour, remaining_today: remainingToday, remaining_this_hour: Math.min(remainingToday, Math.max(0, thisHour - sent.hour)) };
}

/** The sends of each mailbox of `ids` in the last 24 hours and the last hour (one statement). */
export async function sentBy(db: Kysely<DB>, scope: Scope, ids: readonly string[], now: number): Promise<Map<string, Sent>> {
  const found = new Map<string, Sent>(ids.map((id) => [id, { day: 0, hour: 0 }]));
  if (ids.length === 0) return found;
  const rows = await selectIn(db, 'outbox_messages', scope)
    .select(['mailbox_id', (eb) => eb.fn.countAll<number>().as('day'), sql<number>`sum(case when attempted_at > ${now - HOUR} then 1 else 0 end)`.as('hour')])
    .where('mailbox_id', 'in', ids).where('attempted_at', '>', now - DAY).groupBy('mailbox_id').execute();
  for (const r of rows) found.set(r.mailbox_id!, { day: Number(r.day), hour: Number(r.hour ?? 0) });
  return found;
}

/**
 * When the mailbox, at its limit, next has room (unix seconds): when enough of the sends counted
 * against the full window leave it. A warm-up step may make room sooner; waiting for the window is
 * never wrong, only later.
 */
export async function nextFreeSlot(db: Kysely<DB>, scope: Scope, mailboxId: string, allowance: Allowance, sent: Sent, now: number): Promise<number> {
  let at = now + 1;
  const windows: Array<[seconds: number, count: number, limit: number]> = [[DAY, sent.day, allowance.today], [HOUR, sent.hour, allowance.this_hour]];
  for (const [seconds, count, limit] of windows) {
    if (count < limit) continue;
    // The send whose leaving the window makes the count fall below the limit.
    const leaving = await selectIn(db, 'outbox_messages', scope).select('attempted_at')
      .where('mailbox_id', '=', mailboxId).where('attempted_at', '>', now - seconds)
      .orderBy('attempted_at').offset(count - limit).limit(1).executeTakeFirst();
    at = Math.max(at, leaving?.attempted_at === null || leaving === undefined ? now + seconds : Number(leaving.attempted_at) + seconds);
  }
  return at;
}
