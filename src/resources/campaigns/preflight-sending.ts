// The sending side of the launch preflight: the mailboxes a campaign sends its e-mail steps from,
// whether their limits can reach the audience in reasonable time, and whether the domains they send
// from authenticate their mail (SPF, DKIM and DMARC, as Gmail and Yahoo require of bulk senders).
import type { Kysely } from 'kysely';
import { parseJson } from '../../db/sql.ts';
import type { DB } from '../../db/schema.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { DnsRecord } from '../domains/dns-records.ts';
import { dailyAllowance, DAY, type MailboxLimits } from '../mailboxes/limits.ts';
import type { Check } from './preflight-checks.ts';

/** Above this many sending days the audience takes, the mailboxes check warns. */
export const SLOW_DAYS = 14;
const AUTHENTICATING = ['spf', 'dkim', 'dmarc'] as const;

export interface SendingMailbox {
  id: string;
  email: string;
  /** Messages it may send on the `d`th sending day from now (its warm-up raises it day by day). */
  perDay(d: number): number;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/** What a mailbox may send in one sending day: its daily allowance (limits.ts), and no more than its hourly limit over the window's hours. */
const sendingDay = (row: MailboxLimits, now: number, windowHours: number) => (d: number): number => {
  const daily = dailyAllowance(row, now + d * DAY);
  return row.hourly_limit === null ? daily : Math.min(daily, Number(row.hourly_limit) * windowHours);
};

/** The campaign's mailboxes that exist (in the order named), and the ids named that no longer do. */
export async function campaignMailboxes(db: Kysely<DB>, scope: Scope, ids: readonly string[], windowHours: number, now: number): Promise<{ found: SendingMailbox[]; gone: string[] }> {
  if (ids.length === 0) return { found: [], gone: [] };
  const rows = await selectIn(db, 'mailboxes', scope).select(['id', 'email', 'daily_limit', 'hourly_limit', 'warmup', 'warmup_started_at']).where('id', 'in', [...ids]).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return {
    found: ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [{ id, email: row.email, perDay: sendingDay(row, now, windowHours) }] : [];
    }),
    gone: ids.filter((id) => !byId.has(id)),
  };
}

/** The sending days `sends` messages take from these mailboxes, warm-ups growing; undefined beyond a year. */
function daysFor(mailboxes: readonly SendingMailbox[], sends: number): number | undefined {
  let sent = 0;
  for (let d = 0; d < 366; d++) {
    if (sent >= sends) return d;
    sent += mailboxes.reduce((n, m) => n + m.perDay(d), 0);
  }
  return sent >= sends ? 366 : undefined;
}

/** Whether the mailboxes can send `sends` messages, and in how many sending days. */
export function mailboxesCheck(emailing: boolean, mailboxes: { found: SendingMailbox[]; gone: string[] }, sends: number): Check {
  const name = 'mailboxes';
  if (!emailing) return { name, status: 'pass', detail: 'The campaign has no e-mail steps: it needs no mailbox' };
  const { found, gone } = mailboxes;
  const goneNote = gone.length > 0 ? ` (${plural(gone.length, 'mailbox', 'mailboxes')} named no longer exist: ${gone.join(', ')})` : '';
  if (found.length === 0) return { name, status: 'fail', detail: `No mailbox to send the e-mail steps from: set mailbox_ids${goneNote}` };
  const today = found.reduce((n, m) => n + m.perDay(0), 0);
  const days = daysFor(found, sends);
  const pace = `${plural(found.length, 'mailbox', 'mailboxes')} sending up to ${today} a day now`;
  if (days === undefined) return { name, status: 'fail', detail: `${pace}: ${plural(sends, 'e-mail')} would take more than a year${goneNote}` };
  const estimate = `${pace}: ${plural(sends, 'e-mail')} take${sends === 1 ? 's' : ''} about ${plural(days, 'sending day')}`;
  if (days > SLOW_DAYS) return { name, status: 'warn', detail: `${estimate}, more than ${SLOW_DAYS}; add mailboxes or raise their limits${goneNote}` };
  return { name, status: gone.length > 0 ? 'warn' : 'pass', detail: `${estimate}${goneNote}` };
}

/** The records of a domain that do not authenticate its mail now, as `DMARC (No TXT record at …)`. */
function failing(records: readonly DnsRecord[]): string[] {
  return records.filter((r) => (AUTHENTICATING as readonly string[]).includes(r.purpose) && r.status !== 'verified')
    .map((r) => `${r.purpose.toUpperCase()} (${r.finding ?? 'not checked yet'})`);
}

/** Whether every domain the mailboxes send from is a verified sending domain of the tenant. */
export async function domainsCheck(db: Kysely<DB>, scope: Scope, emailing: boolean, mailboxes: readonly SendingMailbox[]): Promise<Check> {
  const name = 'domains';
  if (!emailing) return { name, status: 'pass', detail: 'The campaign has no e-mail steps: no sending domain is needed' };
  if (mailboxes.length === 0) return { name, status: 'fail', detail: 'No mailbox, so no sending domain to check: set mailbox_ids' };
  const domains = [...new Set(mailboxes.map((m) => domainOf(m.email)))];
  const rows = await selectIn(db, 'sending_domains', scope).select(['id', 'domain', 'status', 'records']).where('domain', 'in', domains).execute();
  const byDomain = new Map(rows.map((r) => [r.domain, r]));
  const problems: string[] = [];
  const notes: string[] = [];
  for (const domain of domains) {
    const row = byDomain.get(domain);
    if (!row) {
      problems.push(`${domain} is not a sending domain: add it (POST /v1/domains) and publish its records`);
      continue;
    }
    const records = parseJson<DnsRecord[]>(row.records);
    const unverified = failing(records);
    if (unverified.length > 0) problems.push(`${domain} is not verified${row.status === 'pending' ? ' yet' : ''}: ${unverified.join(', ')}`);
    else if (row.status !== 'verified') notes.push(`${domain} authenticates its mail, but its return path is not found: bounces will not reach the service`);
  }
  if (problems.length > 0) return { name, status: 'fail', detail: problems.join('; ') };
  if (notes.length > 0) return { name, status: 'warn', detail: notes.join('; ') };
  return { name, status: 'pass', detail: `${domains.join(', ')} ${domains.length === 1 ? 'is' : 'are'} verified: SPF, DKIM and DMARC found` };
}
