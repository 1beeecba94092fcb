// When an out-of-office answer says its writer is back: the first date in its text (read with
// chrono-node, relative to when it arrived, dates taken forward) that follows a word of returning or
// absence ("back on 14 December", "until Monday, January 4th", "returning 2027-01-04", "away from the
// 1st to the 14th": the end of a range). A date alone is read at noon; one in the past, or more than
// 90 days ahead (a misread year, a signature's date), or within 12 hours, is not a return date.
import * as chrono from 'chrono-node';

const CUE = /\b(back|return(?:s|ing)?|until|till|through|thru|away|out of (?:the )?office|on (?:vacation|leave|holiday))\b[^.\n]{0,30}$/i;
const LONGEST = 90 * 86_400;
/** A return within hours ("back on Monday" sent on a Monday) is the notice's own day, not a return date. */
const SOONEST = 12 * 3600;
/** Enough of the text to hold the notice, not the thread it quotes. */
const READ = 4000;

/** The unix second the notice in `text`, received at `receivedAt`, says its writer returns; undefined when it says none. */
export function returnDate(text: string | null | undefined, receivedAt: number): number | undefined {
  if (!text) return undefined;
  const body = text.slice(0, READ);
  for (const found of chrono.parse(body, new Date(receivedAt * 1000), { forwardDate: true })) {
    if (!CUE.test(body.slice(Math.max(0, found.index - 40), found.index))) continue;
    const at = Math.floor((found.end ?? found.start).date().getTime() / 1000);
    if (at >= receivedAt + SOONEST && at <= receivedAt + LONGEST) return at;
  }
  return undefined;
}
