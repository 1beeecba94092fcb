// Weekly windows in a time zone across daylight-saving changes, both ways, in New York, Berlin and
// Sydney (whose summer is the northern winter): a window never opens in the skipped hour, is never
// lost because its start is skipped, and never opens a second time in the repeated hour. And the
// 422s of zone names and windows, naming the field at fault. Pure functions: no store, no route yet.
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/platform/errors.ts';
import { dateOverridesOf, isAllowed, nextAllowed, weeklyIntervalsOf, type WeeklyIntervals } from '../../src/platform/time/windows.ts';
import { ianaZone, timeZoneOf } from '../../src/platform/time/zones.ts';

const at = (iso: string) => Date.parse(iso) / 1000;
const iso = (seconds: number | undefined) => (seconds === undefined ? undefined : new Date(seconds * 1000).toISOString());
const NY = 'America/New_York';
const BERLIN = 'Europe/Berlin';
const SYDNEY = 'Australia/Sydney';

/** The minutes of real time from `from` for `hours` hours that fall in the windows. */
function minutesAllowed(zone: string, weekly: WeeklyIntervals, from: string, hours: number): number {
  let n = 0;
  for (let m = 0; m < hours * 60; m++) if (isAllowed(at(from) + m * 60, zone, weekly)) n++;
  return n;
}

describe('a window whose start the clock skips (spring forward)', () => {
  it('opens at the jump in New York, never in the missing hour, and is not lost', () => {
    // 2026-03-08: 02:00 EST becomes 03:00 EDT (07:00Z).
    expect(iso(nextAllowed(at('2026-03-07T17:00:00Z'), NY, { sun: [{ start: '02:30', end: '04:00' }] }))).toBe('2026-03-08T07:00:00.000Z');
    // A window the clock skips whole opens for the moment of the jump, then next week as usual.
    const skipped = { sun: [{ start: '02:00', end: '02:45' }] };
    expect(iso(nextAllowed(at('2026-03-07T17:00:00Z'), NY, skipped))).toBe('2026-03-08T07:00:00.000Z');
    expect(iso(nextAllowed(at('2026-03-08T07:00:01Z'), NY, skipped))).toBe('2026-03-15T06:00:00.000Z');
    // The day's other windows move with the clock: 09:00 is 14:00Z the week before, 13:00Z that day.
    const office = { sun: [{ start: '09:00', end: '17:00' }] };
    expect(iso(nextAllowed(at('2026-03-01T05:00:00Z'), NY, office))).toBe('2026-03-01T14:00:00.000Z');
    expect(iso(nextAllowed(at('2026-03-08T05:00:00Z'), NY, office))).toBe('2026-03-08T13:00:00.000Z');
    // 01:30–03:30 that night is one real hour: 01:30–02:00 EST and 03:00–03:30 EDT.
    expect(minutesAllowed(NY, { sun: [{ start: '01:30', end: '03:30' }] }, '2026-03-08T05:00:00Z', 4)).toBe(60);
  });

  it('opens at the jump in Berlin and in Sydney', () => {
    // 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00Z).
    expect(iso(nextAllowed(at('2026-03-28T12:00:00Z'), BERLIN, { sun: [{ start: '02:30', end: '09:00' }] }))).toBe('2026-03-29T01:00:00.000Z');
    expect(iso(nextAllowed(at('2026-03-28T12:00:00Z'), BERLIN, { sun: [{ start: '02:00', end: '02:30' }] }))).toBe('2026-03-29T01:00:00.000Z');
    expect(minutesAllowed(BERLIN, { sun: [{ start: '01:30', end: '03:30' }] }, '2026-03-28T23:00:00Z', 4)).toBe(60);
    // 2026-10-04: 02:00 AEST becomes 03:00 AEDT (16:00Z the day before).
    expect(iso(nextAllowed(at('2026-10-03T00:00:00Z'), SYDNEY, { sun: [{ start: '02:30', end: '03:30' }] }))).toBe('2026-10-03T16:00:00.000Z');
  });
});

describe('a window in the repeated hour (fall back)', () => {
  it('opens on the first pass only in New York', () => {
    // 2026-11-01: 02:00 EDT becomes 01:00 EST (06:00Z); 01:30 is 05:30Z, then again 06:30Z.
    const early = { sun: [{ start: '01:30', end: '01:45' }] };
    expect(iso(nextAllowed(at('2026-10-31T16:00:00Z'), NY, early))).toBe('2026-11-01T05:30:00.000Z');
    expect(iso(nextAllowed(at('2026-11-01T05:45:00Z'), NY, early))).toBe('2026-11-08T06:30:00.000Z');
    expect(isAllowed(at('2026-11-01T06:35:00Z'), NY, early)).toBe(false);
    expect(minutesAllowed(NY, early, '2026-11-01T04:00:00Z', 4)).toBe(15);
    // A window from before the change to after it is one stretch of real time, opened once.
    expect(minutesAllowed(NY, { sun: [{ start: '00:30', end: '03:00' }] }, '2026-11-01T04:00:00Z', 5)).toBe(210);
  });

  it('opens on the first pass only in Berlin and in Sydney', () => {
    // 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00Z); 02:15 is 00:15Z, then again 01:15Z.
    const night = { sun: [{ start: '02:15', end: '02:30' }] };
    expect(iso(nextAllowed(at('2026-10-24T12:00:00Z'), BERLIN, night))).toBe('2026-10-25T00:15:00.000Z');
    expect(iso(nextAllowed(at('2026-10-25T00:30:00Z'), BERLIN, night))).toBe('2026-11-01T01:15:00.000Z');
    expect(minutesAllowed(BERLIN, night, '2026-10-24T23:00:00Z', 4)).toBe(15);
    // 2026-04-05: 03:00 AEDT becomes 02:00 AEST (16:00Z the day before); 02:30 is 15:30Z, then 16:30Z.
    const sydney = { sun: [{ start: '02:30', end: '02:45' }] };
    expect(iso(nextAllowed(at('2026-04-04T00:00:00Z'), SYDNEY, sydney))).toBe('2026-04-04T15:30:00.000Z');
    expect(minutesAllowed(SYDNEY, sydney, '2026-04-04T14:00:00Z', 4)).toBe(15);
  });
});

describe('weekly windows', () => {
  const office: WeeklyIntervals = { mon: [{ start: '09:00', end: '12:00' }, { start: '13:00', end: '17:00' }], fri: [{ start: '09:00', end: '24:00' }] };

  it('answers the moment itself inside a window, else the next opening, across days and weeks', () => {
    // 2026-06-15 is a Monday; Berlin is UTC+2 in June.
    expect(iso(nextAllowed(at('2026-06-15T08:00:00Z'), BERLIN, office))).toBe('2026-06-15T08:00:00.000Z');
    expect(iso(nextAllowed(at('2026-06-15T10:30:00Z'), BERLIN, office))).toBe('2026-06-15T11:00:00.000Z');
    expect(iso(nextAllowed(at('2026-06-15T15:00:00Z'), BERLIN, office))).toBe('2026-06-19T07:00:00.000Z');
    expect(isAllowed(at('2026-06-19T21:59:59Z'), BERLIN, office)).toBe(true);
    expect(iso(nextAllowed(at('2026-06-19T22:00:00Z'), BERLIN, office))).toBe('2026-06-22T07:00:00.000Z');
  });

  it('takes a date\'s own windows over its weekday\'s, closed when empty', () => {
    const overrides = { '2026-06-15': [], '2026-06-16': [{ start: '20:00', end: '21:00' }] };
    expect(iso(nextAllowed(at('2026-06-15T06:00:00Z'), BERLIN, office, overrides))).toBe('2026-06-16T18:00:00.000Z');
    expect(iso(nextAllowed(at('2026-06-15T06:00:00Z'), BERLIN, {}, { '2026-07-01': [{ start: '10:00', end: '11:00' }] }))).toBe('2026-07-01T08:00:00.000Z');
  });

  it('has no next moment without windows', () => {
    expect(nextAllowed(at('2026-06-15T06:00:00Z'), BERLIN, {})).toBeUndefined();
    expect(nextAllowed(at('2026-06-15T06:00:00Z'), BERLIN, { mon: [] }, { '2026-06-01': [{ start: '09:00', end: '10:00' }] })).toBeUndefined();
  });
});

/** The body of the 422 that `fn` throws. */
function refusal(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(422);
    return (error as AppError).body();
  }
  throw new Error('not refused');
}

describe('checking zones and windows', () => {
  it('takes IANA zone names and refuses anything else with a 422 naming the field', () => {
    expect(timeZoneOf('Europe/Berlin', 'timezone')).toBe('Europe/Berlin');
    expect(timeZoneOf('UTC', 'timezone')).toBe('UTC');
    for (const bad of ['Mars/Olympus', '+02:00', '', 'x'.repeat(80), 42, null]) expect(ianaZone(bad)).toBeUndefined();
    expect(refusal(() => timeZoneOf('Mars/Olympus', 'sending_window.timezone'))).toEqual({
      type: 'validation_error', param: 'sending_window.timezone',
      detail: [{ loc: ['body', 'sending_window', 'timezone'], msg: 'must be an IANA time zone name, like Europe/Berlin or America/New_York', type: 'value_error.timezone' }],
    });
  });

  it('takes windows as HH:MM by weekday and date, and names the interval at fault', () => {
    expect(weeklyIntervalsOf({ mon: [{ start: '09:00', end: '24:00' }], sun: [] }, 'window')).toEqual({ mon: [{ start: '09:00', end: '24:00' }], sun: [] });
    expect(refusal(() => weeklyIntervalsOf({ mon: [{ start: '17:00', end: '09:00' }] }, 'window')).param).toBe('window.mon.0.end');
    expect(refusal(() => weeklyIntervalsOf({ mon: [{ start: '9:00', end: '10:00' }] }, 'window')).param).toBe('window.mon.0.start');
    expect(refusal(() => weeklyIntervalsOf({ mon: [{ start: '24:00', end: '24:00' }] }, 'window')).param).toBe('window.mon.0.start');
    expect(refusal(() => weeklyIntervalsOf({ monday: [] }, 'window')).param).toBe('window.monday');
    expect(refusal(() => weeklyIntervalsOf([], 'window')).param).toBe('window');
    expect(dateOverridesOf({ '2026-12-25': [] }, 'closed')).toEqual({ '2026-12-25': [] });
    expect(refusal(() => dateOverridesOf({ '2026-02-30': [] }, 'closed')).param).toBe('closed.2026-02-30');
  });
});
