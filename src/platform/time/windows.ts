// Weekly windows in a time zone: when a sequence may send, a host may be booked. A window is given
// in wall-clock time (`{mon: [{start: '09:00', end: '17:00'}]}`, with dates whose windows differ,
// `{'2026-12-25': []}`), and `nextAllowed` finds the first moment at or after a given one that
// falls in a window, in that zone's time, across daylight-saving changes:
// - each window is the stretch of real time from the first moment the zone's clock reads its start
//   to the first moment it reads its end; a time the clock skips (spring forward) stands for the
//   moment of the jump. So a window never opens inside the missing hour, is never skipped because
//   its start is missing (02:30–17:00 opens at 03:00), and never opens twice in a repeated hour
//   (fall back: 01:30–01:45 is its first pass only);
// - a window the clock skips whole (02:00–02:45 on the day of the jump) opens for that one moment.
import { Temporal } from 'temporal-polyfill';
import { fieldError } from './zones.ts';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** `start` and `end` as `HH:MM`, `end` later (it may be `24:00`, the end of the day). */
export interface Interval {
  start: string;
  end: string;
}

export type WeeklyIntervals = Partial<Record<Weekday, readonly Interval[]>>;
/** Windows of given dates (`YYYY-MM-DD`), in place of their weekday's; `[]` closes the date. */
export type DateOverrides = Readonly<Record<string, readonly Interval[]>>;

/** How far ahead a window is looked for: a year and a little (overrides may close many dates). */
const HORIZON_DAYS = 400;
const TIME = /^(?:([01]\d|2[0-3]):([0-5]\d)|(24):(00))$/;

const minuteOf = (hhmm: string): number => {
  const m = TIME.exec(hhmm)!;
  return Number(m[1] ?? m[3]) * 60 + Number(m[2] ?? m[4]);
};

/**
 * Readings already found, by zone, date and minute: a sequence's scheduler asks the same few for
 * every enrollment it steps, and each costs a zone's rules. Emptied when full (they never change).
 */
const readings = new Map<string, number>();
const READINGS_KEPT = 10_000;

/** Epoch milliseconds of the first moment the clock of `zone` reads `minute` of `date`, or the jump past it. */
function firstReading(date: Temporal.PlainDate, minute: number, zone: string): number {
  const key = `${zone} ${date.toString()} ${minute}`;
  let found = readings.get(key);
  if (found === undefined) {
    if (readings.size >= READINGS_KEPT) readings.clear();
    found = readingOf(date, minute, zone);
    readings.set(key, found);
  }
  return found;
}

function readingOf(date: Temporal.PlainDate, minute: number, zone: string): number {
  const day = minute === 24 * 60 ? date.add({ days: 1 }) : date;
  const wall = day.toPlainDateTime({ hour: Math.floor(minute / 60) % 24, minute: minute % 60 });
  const earlier = wall.toZonedDateTime(zone, { disambiguation: 'earlier' });
  if (Temporal.PlainDateTime.compare(earlier.toPlainDateTime(), wall) === 0) return earlier.epochMilliseconds;
  // The clock skips `wall`: 'earlier' is as far before the jump as `wall` is into it.
  return earlier.getTimeZoneTransition('next')!.epochMilliseconds;
}

const hasAny = (weekly: WeeklyIntervals) => WEEKDAYS.some((d) => (weekly[d]?.length ?? 0) > 0);

/**
 * The first moment (unix seconds) at or after `at` within the windows, in `zone` (an IANA name; see
 * zones.ts); undefined when none opens within a year.
 */
export function nextAllowed(at: number, zone: string, weekly: WeeklyIntervals, overrides: DateOverrides = {}): number | undefined {
  const atMs = at * 1000;
  let date = Temporal.Instant.fromEpochMilliseconds(atMs).toZonedDateTimeISO(zone).toPlainDate();
  const lastOverride = Object.keys(overrides).sort().at(-1);
  for (let i = 0; i < HORIZON_DAYS; i++, date = date.add({ days: 1 })) {
    const key = date.toString();
    if (!hasAny(weekly) && (lastOverride === undefined || key > lastOverride)) return undefined;
    let best: number | undefined;
    for (const { start, end } of overrides[key] ?? weekly[WEEKDAYS[date.dayOfWeek - 1]] ?? []) {
      const opens = firstReading(date, minuteOf(start), zone);
      const closes = firstReading(date, minuteOf(end), zone);
      const open = closes > opens ? atMs < closes : atMs <= opens;
      if (open) best = Math.min(best ?? Infinity, Math.max(opens, atMs));
    }
    if (best !== undefined) return Math.ceil(best / 1000);
  }
  return undefined;
}

/** Whether `at` (unix seconds) falls in the windows. */
export const isAllowed = (at: number, zone: string, weekly: WeeklyIntervals, overrides?: DateOverrides): boolean =>
  nextAllowed(at, zone, weekly, overrides) === at;

function intervalsOf(value: unknown, field: string): Interval[] {
  if (!Array.isArray(value)) throw fieldError(field, 'must be a list of {start, end} intervals');
  return value.map((item: unknown, i) => {
    const where = `${field}.${i}`;
    const { start, end } = (item ?? {}) as Record<string, unknown>;
    if (typeof start !== 'string' || !TIME.test(start) || start === '24:00') throw fieldError(`${where}.start`, 'must be a time of day as HH:MM, from 00:00 to 23:59');
    if (typeof end !== 'string' || !TIME.test(end)) throw fieldError(`${where}.end`, 'must be a time of day as HH:MM, from 00:01 to 24:00');
    if (minuteOf(end) <= minuteOf(start)) throw fieldError(`${where}.end`, 'must be later than start (a window ends on the day it starts; 24:00 is its end)');
    return { start, end };
  });
}

/** `value` as weekly windows (`{mon: [{start, end}], …}`), or a 422 naming the field at fault under `field`. */
export function weeklyIntervalsOf(value: unknown, field: string): WeeklyIntervals {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fieldError(field, `must be an object of weekdays (${WEEKDAYS.join(', ')})`);
  const out: WeeklyIntervals = {};
  for (const [day, intervals] of Object.entries(value)) {
    if (!(WEEKDAYS as readonly string[]).includes(day)) throw fieldError(`${field}.${day}`, `is not a weekday: use ${WEEKDAYS.join(', ')}`);
    out[day as Weekday] = intervalsOf(intervals, `${field}.${day}`);
  }
  return out;
}

/** `value` as windows by date (`{'2026-12-24': [{start, end}], '2026-12-25': []}`), or a 422 naming the field at fault. */
export function dateOverridesOf(value: unknown, field: string): DateOverrides {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fieldError(field, 'must be an object of dates (YYYY-MM-DD)');
  const out: Record<string, Interval[]> = {};
  for (const [date, intervals] of Object.entries(value)) {
    let valid = /^\d{4}-\d{2}-\d{2}$/.test(date);
    try {
      if (valid) Temporal.PlainDate.from(date, { overflow: 'reject' });
    } catch {
      valid = false;
    }
    if (!valid) throw fieldError(`${field}.${date}`, 'is not a date as YYYY-MM-DD');
    out[date] = intervalsOf(intervals, `${field}.${date}`);
  }
  return out;
}
