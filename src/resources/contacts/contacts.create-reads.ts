// What creating a contact reads before it writes, for one create or for a group commit's run of
// them in one statement (ReadAhead in platform/write.ts). Apart from the store's other statements,
// so that the resource definition can name it without an import cycle.
import type { Dialect } from '../../db/database.ts';
import { statement } from '../../db/prepared.ts';
import { textList } from '../../db/sql.ts';
import type { ReadAhead } from '../../platform/write.ts';
import { domainOf, suppressionProbes } from '../lists/suppression.ts';

/** What creating a contact reads: its list's type, the company with its work e-mail's domain, whether an address is suppressed. */
interface CreateKey {
  list: string;
  domain: string | null;
  probes: string[];
}

interface CreateFound {
  list_type: string | null;
  company_id: string | null;
  suppressed: boolean;
}

// Each set of values is one parameter (an array, JSON on SQLite), so the statement has one text
// whatever the number of creates; each value is looked up by equality on its index, one probe each
// whatever the planner knows of the tables (an `= any(…)` of many values can be planned as a scan of
// the tenant's rows when its statistics are stale).
const valuesOf = (dialect: Dialect) => (dialect === 'postgres' ? 'unnest(?::text[]) as k(value)' : 'json_each(?) as k');
const createReadsSql = (dialect: Dialect) => `select 'l' as kind, k.value as k, (select type from lists where org_id = ? and mode = ? and id = k.value) as v from ${valuesOf(dialect)}
  union all select 'c', k.value, (select id from companies where org_id = ? and mode = ? and domain = k.value) from ${valuesOf(dialect)}
  union all select 'e', k.value, (select 'hit' from list_entries where org_id = ? and mode = ? and value = k.value limit 1) from ${valuesOf(dialect)}`;
const CREATE_READS = statement<{ kind: 'l' | 'c' | 'e'; k: string; v: string | null }>({ sqlite: createReadsSql('sqlite'), postgres: createReadsSql('postgres') });

/**
 * What contact creates read, for one or for a group commit's run of them in one statement: no
 * contact write changes any of it (lists' types, companies, suppression entries).
 */
export const createReads: ReadAhead<CreateKey, CreateFound> = {
  key: (row) => {
    const emails = [row.work_email as string | null, row.personal_email as string | null];
    return { list: row.list_id as string, domain: domainOf(emails[0]), probes: suppressionProbes(emails) };
  },
  async read(tx, dialect, scope, keys) {
    const set = (values: string[]) => textList(dialect, [...new Set(values)]);
    const { orgId, mode } = scope;
    const rows = await CREATE_READS.all(tx, dialect, [
      orgId, mode, set(keys.map((k) => k.list)),
      orgId, mode, set(keys.flatMap((k) => (k.domain === null ? [] : [k.domain]))),
      orgId, mode, set(keys.flatMap((k) => k.probes)),
    ]);
    const types = new Map<string, string>();
    const companies = new Map<string, string>();
    const entries = new Set<string>();
    for (const { kind, k, v } of rows) {
      if (v === null) continue;
      if (kind === 'l') types.set(k, v);
      else if (kind === 'c') companies.set(k, v);
      else entries.add(k);
    }
    return keys.map((k) => ({
      list_type: types.get(k.list) ?? null,
      company_id: (k.domain !== null && companies.get(k.domain)) || null,
      suppressed: k.probes.some((p) => entries.has(p)),
    }));
  },
};
