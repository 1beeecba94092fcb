// Time zones are IANA names (`Europe/Berlin`), checked against the zone data of the runtime (Node's
// ICU, through temporal-polyfill: see docs/architecture.md, Time). Offsets (`+02:00`) are refused:
// they do not follow daylight saving, so a window given in one would drift by an hour twice a year.
import { Temporal } from 'temporal-polyfill';
import { validationError } from '../errors.ts';

const LONGEST_NAME = 64;

/** The zone's canonical name for `value`, or undefined when it names no IANA zone. */
export function ianaZone(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > LONGEST_NAME || !/^[A-Za-z]/.test(value)) return undefined;
  try {
    return new Temporal.ZonedDateTime(0n, value).timeZoneId;
  } catch {
    return undefined;
  }
}

/** The schema format of a time zone field (validation.ts checks it with `ianaZone`), and what its 422 says. */
export const TIME_ZONE = 'iana-time-zone';
export const NOT_A_TIME_ZONE = 'must be an IANA time zone name, like Europe/Berlin or America/New_York';

/** A 422 about the body field `field` (dotted: `window.zone`), in the shape of the other field errors. */
export const fieldError = (field: string, msg: string, type = 'value_error') =>
  validationError([{ loc: ['body', ...field.split('.')], msg, type }]);

/** `value` as an IANA zone name, or a 422 naming `field` (e.g. `timezone`). */
export function timeZoneOf(value: unknown, field: string): string {
  const zone = ianaZone(value);
  if (zone === undefined) throw fieldError(field, NOT_A_TIME_ZONE, 'value_error.timezone');
  return zone;
}
