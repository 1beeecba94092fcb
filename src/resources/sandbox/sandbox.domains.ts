// The sandbox's sending domain: `example.com`, verified, so test mode shows a domain mail can be
// signed for. Its key pair is the sandbox's own and public by design: test-mode mail never leaves
// the service, and example.com's real DNS publishes no key of ours, so it signs nothing anyone
// trusts. The row keeps a marker instead of a sealed key (a seed has no service secret to seal
// with); dkim.ts answers this key for it. Domains are configuration, kept by a reset: the seed adds
// example.com only when the tenant's test mode does not have it.
import { sql } from 'kysely';
import { newId } from '../../platform/ids.ts';
import type { Row } from '../../platform/resource/define.ts';
import { present } from '../../platform/resource/store.ts';
import type { WriteContext } from '../../platform/write.ts';
import { DKIM_SELECTOR, recordsFor, type DnsRecord } from '../domains/dns-records.ts';
import { sendingDomains } from '../domains/domains.resource.ts';

export const SANDBOX_DOMAIN = 'example.com';
/** What `dkim_private_key` holds for the sandbox's domain: dkim.ts reads it as SANDBOX_DKIM_PRIVATE_KEY. */
export const SANDBOX_KEY_MARKER = 'sandbox';
const SANDBOX_DKIM_PUBLIC_KEY = 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvDdLhiLK5E4ss7zy9OXEEDHPOOicEXCBx0PkXkKYKRRYVxC44u+JpWmhkS7icn5eIUbFcpUgICbH8RCAzQ/vTjfoKKw9cFsinHKat+X+rnoJUSoi0mxYUBKjZqZ4R591KL9oefsbgK2oZvNSldWwJm4g5WH+TjA4vx2/MLOgeCfXkwPXXHHddTzm1HcV/c86wS0oQGerGHUZja3gco7Y9BsmSvGljp9ttkp61AURd/nVAYZvIh+22dRPeihPmWgCcyCfhN0Iia479Tmw5nDX6YdFrj4sl/pogO/DORJd8HMwkyvYIUNKKM0r0X8JrGkUIVdVILZEetsTs71YQ4qmEQIDAQAB';
export const SANDBOX_DKIM_PRIVATE_KEY = [
  '-----BEGIN PRIVATE KEY-----',
  'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC8N0uGIsrkTiyz',
  'vPL05cQQMc846JwRcIHHQ+ReQpgpFFhXELji74mlaaGRLuJyfl4hRsVylSAgJsfx',
  'EIDND+9ON+gorD1wWyKccpq35f6ueglRKiLSbFhQEqNmpnhHn3Uov2h5+xuArahm',
  '81KV1bAmbiDlYf5OMDi/Hb8ws6B4J9eTA9dccd11PObUdxX9zzrBLShAZ6sYdRmN',
  'reByjtj0GyZK8aWOn222SnrUBRF3+dUBhm8iH7bZ1E96KE+ZaAJzIJ+E3QiJrjv1',
  'ObDmcNfph0WuPiyX+miA78M5El3wczCTK9ghQ0oozSvRfwmsaRQhV1UgtkR62xOz',
  'vVhDiqYRAgMBAAECggEABSIPlzrqWaD1gHljZDZtSxvF+6wBsEq8igNZ/mVxN5Ls',
  'eINmPMTXoNaT/Mel5AV6P7dpucmYtLJvZYL+YEP8/MnINRkYG9urF/qFfwUbawVn',
  'rPpUih9A+/4QzW3g0ziQE2pqSQQGKKjpHNWp/O10/mH717BSeoNqKMbWPgJyxT6/',
  'jAm0v256ih9q4wZjmpSq6MhfVNF2V2rdNfZ37LyxZJxDrWlglIaITFatJU3mwPne',
  'lGAgNHsggSWDBDJQbpU7Y6+QXnOZlII1x25HqLxqssc8Nl6FsYnbZYs132jscnKt',
  'HINvaEU0h9E9srz3Gd4bDLthzvr47xw21mPuuwQ6uQKBgQD0h21dGf9vccRRM5tf',
  '54gvTarISNHCfKGgeWiNsiwsnWxYJ2HNpIrF20noG/SnXjcOyU9ec6ojL0v/TtYK',
  'JcUtEw+aFNCYX3wDMp/PynJCBNgJEzF2LDPsAsE3hY9x1y737ucQu+5Ewkrr0P5h',
  '0nLRAs4SUB/dyy7NGGQISChXIwKBgQDFC5lrrZkzlcNNL56CexKZnT6QHOcY5Py6',
  'j2Yv0lgON4H7EGix7LDBCOMkPlwIGdzPclxprwhLV+8hCmD7UisY2TK4YK3/SK++',
  '4ACob4jV/BaaPUWdG7nwZ3bpqrVDp5JkfZ0dkSsVS7Ww9z2loaSVyUzWAOMvSsUc',
  'H8YyoIi7OwKBgHHeFolCL/Z/bcG6XGH+eSY97ocxkawVSVZm8s745yUncWpjfGG8',
  'e3rDMNlLG1RMxSq3h6QeDF4yChurZHR5PiZNN/iyNKif3inHCzBBv48Knmcrbt7u',
  'mocOiVcHdNK4N4Dw2NysBroyF51URwDadOjre3Z/pTctBHAxKXPJ1i8tAoGACz0g',
  'IQ4jwNd37j0bE2Ilq3FWki2z2K2m5JUtROkAcL8lwMYs0okng7sYCYctBKFFAOgK',
  '8VQ0aue3EfFfmrYTEzXAONf61Ka2r3JjVzgVW+8m8uEvyUg9kMK1+5nrANLb/LNV',
  'dMxE4tAQqulPMNVJZ+m1YjdmvdnL6FC/oz+YzOUCgYEA6SjnpSyeY9pjsHsfpgm+',
  'iXWLAWGGgo+mQpjw1QSVZ+pctGD5sIUeU6i9p5xHGFjAFkrj1cv8pYxt3CNTQxjr',
  'LInnifUPu4wMsKUOn/oIs+PT6Ekbg3vkV6n99IlgOE0ZUJm3w7TLAZBVeM1WURpZ',
  'Pag+UgTgxCzal44k8bwWuf8=',
  '-----END PRIVATE KEY-----',
].join('\n');

/** The names of the default configuration: the sandbox shows what a customer would publish. */
const SANDBOX_HOSTS = { spfInclude: '_spf.mail.revenue-data.example', returnPathTarget: 'bounces.mail.revenue-data.example' };

/** Adds the verified example.com (created `age` seconds ago) unless the tenant has it, with the events of its creation and check. */
export async function seedSandboxDomain(w: WriteContext, age: number): Promise<void> {
  const at = w.now - age;
  const pending = recordsFor(SANDBOX_DOMAIN, SANDBOX_DKIM_PUBLIC_KEY, SANDBOX_HOSTS);
  const checked: DnsRecord[] = pending.map((r) => ({ ...r, status: 'verified', finding: 'Found as published (sandbox)' }));
  const row = {
    id: newId('dom', at * 1000), org_id: w.scope.orgId, mode: w.scope.mode, domain: SANDBOX_DOMAIN, description: 'The sandbox\'s sending domain (test mode only)',
    status: 'verified', dkim_selector: DKIM_SELECTOR, dkim_public_key: SANDBOX_DKIM_PUBLIC_KEY, dkim_private_key: SANDBOX_KEY_MARKER,
    records: JSON.stringify(checked), verified_at: at, last_checked_at: at, created_at: at, updated_at: at,
  };
  const inserted = await w.tx.insertInto('sending_domains').values(row)
    .onConflict((oc) => oc.columns(['org_id', 'mode', 'domain']).where(sql.ref('domain'), 'is not', null).doNothing()).returning('id').execute();
  if (inserted.length === 0) return;
  const [created, verified] = await present(sendingDomains, w.tx, w.scope, [
    { ...row, status: 'pending', records: JSON.stringify(pending), verified_at: null, last_checked_at: null } as unknown as Row,
    row as unknown as Row,
  ]);
  w.emit(sendingDomains.events.created, created);
  w.emit('domain.verified', verified, { status: 'pending', records: created.records, verified_at: null, last_checked_at: null });
}
