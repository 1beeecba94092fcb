// The suppression rule, in one place: a contact is suppressed when one of its e-mail addresses, or
// that address's domain (what follows its last '@'), is an entry of a suppression list of its tenant.
// One JS form (for values at hand) and one SQL form (for rows in a statement).
import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';

/** The domain of an address: what follows its last '@'. */
export const domainOf = (email: string | null | undefined): string | null => (email ? email.slice(email.lastIndexOf('@') + 1) : null);

/** The same, in each store's SQL, for the column expression `c`. */
export const DOMAIN_SQL: Record<Dialect, (c: string) => string> = {
  sqlite: (c) => `replace(${c}, rtrim(${c}, replace(${c}, '@', '')), '')`,
  postgres: (c) => `split_part(${c}, '@', -1)`,
};

/** What a suppression entry must equal to suppress these addresses: each address and its domain. */
export function suppressionProbes(emails: Array<string | null | undefined>): string[] {
  const probes = new Set<string>();
  for (const email of emails) {
    if (email) {
      probes.add(email);
      probes.add(domainOf(email)!);
    }
  }
  return [...probes];
}

/** Which of `probes` are suppression entries of the tenant. */
export async function suppressedAmong(db: Kysely<DB>, scope: Scope, probes: string[]): Promise<Set<string>> {
  if (probes.length === 0) return new Set();
  const rows = await selectIn(db, 'list_entries', scope).select('value').where('value', 'in', probes).execute();
  return new Set(rows.map((e) => e.value));
}

/** True when an address is suppressed, given the entries found among its probes. */
export const isSuppressed = (hits: Set<string>, email: string | null) => email !== null && (hits.has(email) || hits.has(domainOf(email)!));

/**
 * The rule as a SQL condition on the contact row aliased `c` (its work e-mail's domain is stored as
 * email_domain). One index probe per value; an absent address costs none.
 */
export function suppressedSql(dialect: Dialect, c = 'c'): string {
  const hit = (value: string) => `exists (select 1 from list_entries e where e.org_id = ${c}.org_id and e.mode = ${c}.mode and e.value = ${value})`;
  const address = (a: string, d: string) => `(${a} is not null and (${hit(a)} or ${hit(d)}))`;
  return `(${address(`${c}.work_email`, `${c}.email_domain`)} or ${address(`${c}.personal_email`, DOMAIN_SQL[dialect](`${c}.personal_email`))})`;
}
