// The check of a sending domain's records: the DNS lookups first, outside any transaction (they may
// take up to DNS_TIMEOUT_MS), then one write recording each record's outcome, the domain's status
// and `domain.verified` or `domain.verification_failed`.
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { parseJson } from '../../db/sql.ts';
import { previous } from '../../platform/resource/changes.ts';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { getRow, presentOne } from '../../platform/resource/store.ts';
import { updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { checkRecords } from './dns-check.ts';
import { statusOf, type DnsRecord } from './dns-records.ts';
import { sendingDomains } from './domains.resource.ts';

export interface Checked {
  id: string;
  records: DnsRecord[];
}

/** What DNS holds now for each record of the domain (404 when the domain does not exist). */
export async function lookUpRecords(database: Database, config: Config, scope: Scope, id: string): Promise<Checked> {
  const row = await getRow(sendingDomains, database.db, database.dialect, scope, id);
  return { id, records: await checkRecords(parseJson<DnsRecord[]>(row.records), String(row.dkim_public_key), config) };
}

/** Records the outcome of a check. A domain stays verified since its first passing check until one fails. */
export async function recordCheck(w: WriteContext, checked: Checked): Promise<ApiRecord> {
  const before = await getRow(sendingDomains, w.tx, w.dialect, w.scope, checked.id);
  const old = await presentOne(sendingDomains, w.tx, w.scope, before);
  const status = statusOf(checked.records);
  const changes = {
    status,
    records: JSON.stringify(checked.records),
    verified_at: status !== 'verified' ? null : before.status === 'verified' ? Number(before.verified_at) : w.now,
    last_checked_at: w.now,
    updated_at: w.now,
  };
  await updateIn(w.tx, 'sending_domains', w.scope).set(changes).where('id', '=', checked.id).execute();
  const record = await presentOne(sendingDomains, w.tx, w.scope, { ...before, ...changes } as Row);
  w.emit(status === 'verified' ? 'domain.verified' : 'domain.verification_failed', record, previous(old, record));
  return record;
}
