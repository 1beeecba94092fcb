// What the launch preflight knows of a campaign's audience, read in one statement whatever its size:
// how many contacts the list holds, how many are suppressed (the rule of suppressionOf, as SQL over
// the rows: a suppression of an address of theirs, or a suppression-list entry equal to the address
// or its domain), how many have no e-mail address, and how many lack a value for each variable the
// steps use; then, for each variable some lack, a few of those contacts by id.
import { sql, type Kysely } from 'kysely';
import { dialectOf, type Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import type { Scope } from '../../platform/scope.ts';
import { suppressedSql } from '../lists/suppression.ts';
import { CONTACT_VARIABLES } from './template-variables.ts';

/** How many contacts lacking a variable's value a check names. */
export const NAMED_CONTACTS = 5;

/**
 * The contact row `c` may not be sent e-mail: an address of its own, or that address's domain, is a
 * suppression-list entry, or an address is suppressed on the e-mail channel (unsubscribed, bounced,
 * complained, suppressed by hand). The launch enrolls no such contact.
 */
export const audienceSuppressedSql = (dialect: Dialect, c = 'c') =>
  `(${suppressedSql(dialect, c)} or exists (select 1 from suppressions s where s.org_id = ${c}.org_id and s.mode = ${c}.mode and s.channel = 'email' and s.address in (${c}.work_email, ${c}.personal_email)))`;

const blank = (expression: string) => `(${expression} is null or trim(${expression}) = '')`;

export interface MissingVariable {
  variable: string;
  count: number;
  /** Up to NAMED_CONTACTS of them, oldest first. */
  ids: string[];
}

export interface AudienceFacts {
  total: number;
  suppressed: number;
  /** Contacts not suppressed: the launch enrolls them (and pays one credit each). */
  enrolled: number;
  /** Enrolled contacts without an e-mail address. */
  noAddress: number;
  /** Enrolled contacts with an e-mail address: the recipients of the e-mail steps. */
  reachable: number;
  missing: MissingVariable[];
}

/** The facts of the contacts of list `listId`, and which of `variables` some enrolled ones lack. */
export async function audienceFacts(db: Kysely<DB>, scope: Scope, listId: string, variables: readonly string[]): Promise<AudienceFacts> {
  const dialect = dialectOf(db);
  const suppressed = audienceSuppressedSql(dialect);
  const values = variables.map((v, i) => `${CONTACT_VARIABLES[v]} as v${i}`);
  const lacking = variables.map((_, i) => `sum(case when s = 0 and ${blank(`v${i}`)} then 1 else 0 end) as m${i}`);
  // The rule is evaluated once per contact in the inner select; the outer one only adds up.
  const { rows } = await sql<Record<string, unknown>>`select count(*) as total, coalesce(sum(s), 0) as suppressed,
    coalesce(sum(case when s = 0 and address is null then 1 else 0 end), 0) as no_address${sql.raw(lacking.map((l) => `, ${l}`).join(''))}
    from (select case when ${sql.raw(suppressed)} then 1 else 0 end as s, coalesce(c.work_email, c.personal_email) as address${sql.raw(values.map((v) => `, ${v}`).join(''))}
      from contacts c where c.org_id = ${scope.orgId} and c.mode = ${scope.mode} and c.list_id = ${listId}) a`.execute(db);
  const row = rows[0];
  const total = Number(row.total);
  const suppressedCount = Number(row.suppressed);
  const noAddress = Number(row.no_address);
  const missing: MissingVariable[] = [];
  for (const [i, variable] of variables.entries()) {
    const count = Number(row[`m${i}`] ?? 0);
    if (count === 0) continue;
    const named = await sql<{ id: string }>`select c.id from contacts c
      where c.org_id = ${scope.orgId} and c.mode = ${scope.mode} and c.list_id = ${listId}
      and not ${sql.raw(suppressed)} and ${sql.raw(blank(CONTACT_VARIABLES[variable]))} order by c.id limit ${NAMED_CONTACTS}`.execute(db);
    missing.push({ variable, count, ids: named.rows.map((r) => r.id) });
  }
  const enrolled = total - suppressedCount;
  return { total, suppressed: suppressedCount, enrolled, noAddress, reachable: enrolled - noAddress, missing };
}
