// A sending schedule: the days of the week and the hours of a day, in an IANA time zone, when steps
// may be sent (a campaign's, a sequence's). Its shapes, its defaults and the check of a written one;
// the windows it opens are computed by windows.ts.
import { Type, type Static } from 'typebox';
import { StringEnum } from '../schemas.ts';
import { WEEKDAYS, type WeeklyIntervals } from './windows.ts';
import { fieldError, timeZoneOf } from './zones.ts';

const Day = StringEnum(WEEKDAYS, { description: 'A day of the week', examples: ['mon'] });

export const DEFAULT_SCHEDULE: Schedule = { timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_hour: 9, end_hour: 17 };
const EXAMPLE = { timezone: 'Europe/London', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_hour: 9, end_hour: 17 };

const fields = {
  timezone: ['IANA time-zone name the hours are in', 'Europe/London'],
  days: ['Days of the week on which steps are sent', ['mon', 'tue', 'wed', 'thu', 'fri']],
  start_hour: ['First hour of the sending window, 0 to 23', 9],
  end_hour: ['End of the sending window (exclusive), 1 to 24, after start_hour', 17],
} as const;

export const ScheduleInputSchema = Type.Object({
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z][A-Za-z0-9_+/-]*$', default: 'UTC', description: fields.timezone[0], examples: [fields.timezone[1]] })),
  days: Type.Optional(Type.Array(Day, { minItems: 1, maxItems: 7, uniqueItems: true, default: ['mon', 'tue', 'wed', 'thu', 'fri'], description: fields.days[0], examples: [fields.days[1]] })),
  start_hour: Type.Optional(Type.Integer({ minimum: 0, maximum: 23, default: 9, description: fields.start_hour[0], examples: [fields.start_hour[1]] })),
  end_hour: Type.Optional(Type.Integer({ minimum: 1, maximum: 24, default: 17, description: fields.end_hour[0], examples: [fields.end_hour[1]] })),
}, { additionalProperties: false, description: 'When steps may be sent; omitted fields take their defaults (UTC, weekdays, 9 to 17)', examples: [EXAMPLE] });
export type ScheduleInput = Static<typeof ScheduleInputSchema>;

export const ScheduleSchema = Type.Object({
  timezone: Type.String({ description: fields.timezone[0], examples: [fields.timezone[1]] }),
  days: Type.Array(Day, { description: fields.days[0], examples: [fields.days[1]] }),
  start_hour: Type.Integer({ description: fields.start_hour[0], examples: [fields.start_hour[1]] }),
  end_hour: Type.Integer({ description: fields.end_hour[0], examples: [fields.end_hour[1]] }),
}, { description: 'When steps may be sent', examples: [EXAMPLE] });
export type Schedule = Static<typeof ScheduleSchema>;

/** The schedule a write gives, with its defaults and the zone's canonical name; 422 naming `schedule.timezone` or `schedule.end_hour`. */
export function scheduleOf(input: ScheduleInput): Schedule {
  const schedule = { ...DEFAULT_SCHEDULE, ...input };
  schedule.timezone = timeZoneOf(schedule.timezone, 'schedule.timezone');
  if (schedule.start_hour >= schedule.end_hour) throw fieldError('schedule.end_hour', 'must be after start_hour', 'value_error.hour_range');
  return schedule;
}

const hhmm = (hour: number) => `${String(hour).padStart(2, '0')}:00`;

/** The weekly windows of a schedule, as windows.ts reads them. */
export const weeklyOf = (s: Schedule): WeeklyIntervals =>
  Object.fromEntries(s.days.map((d) => [d, [{ start: hhmm(s.start_hour), end: hhmm(s.end_hour) }]]));
