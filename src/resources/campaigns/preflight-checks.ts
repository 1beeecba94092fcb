// The checks of the launch preflight that need no reads of their own: each takes what preflight.ts
// gathered and answers `{name, status, detail}`. A `fail` blocks the launch (unless forced), a
// `warn` never does.
import { Temporal } from 'temporal-polyfill';
import { weeklyOf, type Schedule } from '../../platform/time/schedule.ts';
import { nextAllowed } from '../../platform/time/windows.ts';
import type { Step } from './campaigns.schemas.ts';
import type { AudienceFacts } from './preflight-audience.ts';
import { showsUnsubscribe, type StepVariables } from './template-variables.ts';

export const CHECK_NAMES = ['steps', 'audience', 'mailboxes', 'domains', 'unsubscribe', 'schedule', 'credits'] as const;
export const CHECK_STATUSES = ['pass', 'warn', 'fail'] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];
export interface Check {
  name: (typeof CHECK_NAMES)[number];
  status: CheckStatus;
  detail: string;
}

/** How far ahead the sending window must open. */
export const WINDOW_DAYS = 7;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const hh = (hour: number) => `${String(hour).padStart(2, '0')}:00`;

/** Steps present, each with what its channel needs, and every variable renderable for every contact enrolled. */
export function stepsCheck(steps: readonly Step[], variables: StepVariables, audience: AudienceFacts | undefined): Check {
  const name = 'steps';
  if (steps.length === 0) return { name, status: 'fail', detail: 'The campaign has no steps: add at least one' };
  const problems: string[] = [];
  steps.forEach((step, i) => {
    if (step.channel === 'email' && !step.subject?.trim()) problems.push(`Step ${i + 1} (email) has no subject`);
    if (!step.body?.trim() && step.channel !== 'linkedin') problems.push(`Step ${i + 1} (${step.channel}) has no body`);
  });
  problems.push(...variables.problems);
  for (const m of audience?.missing ?? []) {
    const more = m.count > m.ids.length ? `, and ${m.count - m.ids.length} more` : '';
    problems.push(`${plural(m.count, 'contact')} ${m.count === 1 ? 'has' : 'have'} no ${m.variable}: ${m.ids.join(', ')}${more} (set it, or write {{ ${m.variable} | default: "…" }})`);
  }
  if (problems.length > 0) return { name, status: 'fail', detail: problems.join('; ') };
  const used = variables.needed.length > 0 ? `; ${variables.needed.join(', ')} set for every contact` : '';
  return { name, status: 'pass', detail: `${plural(steps.length, 'step')}, each renderable${used}` };
}

/** The audience list's size, and how much of it cannot be sent to. */
export function audienceCheck(listId: string | null, audience: AudienceFacts | undefined, emailing: boolean): Check {
  const name = 'audience';
  if (!listId || !audience) return { name, status: 'fail', detail: 'The campaign has no audience: set list_id to a list of type contacts or leads' };
  const { total, suppressed, noAddress, enrolled, reachable } = audience;
  if (total === 0) return { name, status: 'fail', detail: `The audience list ${listId} has no contacts` };
  const parts = [`${plural(suppressed, 'contact')} suppressed`, ...(emailing ? [`${noAddress} without an e-mail address`] : [])];
  const left = emailing ? reachable : enrolled;
  const summary = `${plural(total, 'contact')}: ${parts.join(', ')}; ${left} to send to`;
  if (left === 0) return { name, status: 'fail', detail: `${summary}: nobody is left` };
  return { name, status: suppressed > 0 || (emailing && noAddress > 0) ? 'warn' : 'pass', detail: summary };
}

/**
 * Campaign e-mail is marketing mail: the outbox gives each message its recipient's one-click
 * unsubscribe (List-Unsubscribe and List-Unsubscribe-Post, RFC 8058). A body without a visible way
 * out is still a warning: Gmail and Yahoo ask for one in the message too.
 */
export function unsubscribeCheck(steps: readonly Step[]): Check {
  const name = 'unsubscribe';
  const email = steps.map((s, i) => ({ s, n: i + 1 })).filter(({ s }) => s.channel === 'email');
  if (email.length === 0) return { name, status: 'pass', detail: 'The campaign has no e-mail steps' };
  const header = 'every e-mail carries a one-click unsubscribe (List-Unsubscribe, RFC 8058)';
  const bare = email.filter(({ s }) => !showsUnsubscribe(s.body)).map(({ n }) => n);
  if (bare.length === 0) return { name, status: 'pass', detail: `Campaign e-mail is marketing mail: ${header}, and every body shows an unsubscribe` };
  const which = bare.length === 1 ? `Step ${bare[0]} shows` : `Steps ${bare.join(', ')} show`;
  return { name, status: 'warn', detail: `${which} no unsubscribe link or text in the body (add {{ unsubscribe_url }}); ${header}` };
}

/** The sending window opens at least once within WINDOW_DAYS. */
export function scheduleCheck(schedule: Schedule | null, now: number): Check {
  const name = 'schedule';
  if (!schedule) return { name, status: 'pass', detail: 'No schedule: steps may be sent at any time' };
  const window = `${schedule.days.join(', ') || 'no day'}, ${hh(schedule.start_hour)}–${hh(schedule.end_hour)} ${schedule.timezone}`;
  let next: number | undefined;
  try {
    next = nextAllowed(now, schedule.timezone, weeklyOf(schedule));
  } catch {
    return { name, status: 'fail', detail: `The schedule's time zone ${schedule.timezone} is not known` };
  }
  if (next === undefined || next > now + WINDOW_DAYS * 86_400) {
    return { name, status: 'fail', detail: `The sending window (${window}) does not open within the next ${WINDOW_DAYS} days` };
  }
  const local = Temporal.Instant.fromEpochMilliseconds(next * 1000).toZonedDateTimeISO(schedule.timezone).toPlainDateTime().toString({ smallestUnit: 'minute' }).replace('T', ' ');
  return { name, status: 'pass', detail: `Sends ${window}; the window next opens at ${local} (${schedule.timezone})` };
}

/** Each message sent costs a credit, debited when it is sent; the launch needs a balance covering them all. */
export function creditsCheck(messages: number, balance: number): Check {
  const name = 'credits';
  const cost = `The campaign may send ${plural(messages, 'message')}, one credit each, debited as they are sent`;
  if (balance < messages) return { name, status: 'fail', detail: `${cost}, and the balance is ${balance}` };
  return { name, status: 'pass', detail: `${cost}; the balance is ${balance}` };
}
