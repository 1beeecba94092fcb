// The DNS records a sending domain publishes, as the service tells them and later checks them:
// SPF (the sending servers may send for the domain), DKIM (the public half of the key the service
// signs with), DMARC (what receivers do with mail that fails both, and where they report) and the
// return path (bounces reach the service). Each record carries the outcome of its last check.
import { Type, type Static } from 'typebox';
import type { Config } from '../../config.ts';
import { Nullable, StringEnum } from '../../platform/schemas.ts';

export const DOMAIN_STATUSES = ['pending', 'verified', 'failed'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];
export const PURPOSES = ['spf', 'dkim', 'dmarc', 'return_path'] as const;

/** The selector of every key the service makes: its record is `rds1._domainkey.<domain>`. */
export const DKIM_SELECTOR = 'rds1';

export const DnsRecordSchema = Type.Object({
  type: StringEnum(['TXT', 'CNAME'] as const, { description: 'The record type to publish', examples: ['TXT'] }),
  name: Type.String({ description: 'The name to publish it at (fully qualified)', examples: ['rds1._domainkey.example.com'] }),
  value: Type.String({ description: 'The value to publish: the text of a TXT record, the target of a CNAME', examples: ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA…'] }),
  purpose: StringEnum(PURPOSES, { description: '`spf`, `dkim`, `dmarc` or `return_path`', examples: ['dkim'] }),
  status: StringEnum(DOMAIN_STATUSES, { description: '`pending` until checked, then `verified` or `failed` as the last check found it', examples: ['verified'] }),
  finding: Nullable(Type.String({ description: 'What the last check found at the name, in words; null until checked', examples: ['No TXT record at _dmarc.example.com'] })),
}, { title: 'DomainDnsRecord', description: 'A DNS record to publish for a sending domain, with what its last check found' });

export type DnsRecord = Static<typeof DnsRecordSchema>;

/** The records of a new domain whose DKIM public key is `publicKey` (base64 of its DER form), none checked yet. */
export function recordsFor(domain: string, publicKey: string, config: Pick<Config, 'spfInclude' | 'returnPathTarget'>): DnsRecord[] {
  const pending = { status: 'pending', finding: null } as const;
  return [
    { type: 'TXT', name: domain, value: `v=spf1 include:${config.spfInclude} ~all`, purpose: 'spf', ...pending },
    { type: 'TXT', name: `${DKIM_SELECTOR}._domainkey.${domain}`, value: `v=DKIM1; k=rsa; p=${publicKey}`, purpose: 'dkim', ...pending },
    // Monitoring first (p=none): the owner tightens the policy once the reports show only its own mail.
    { type: 'TXT', name: `_dmarc.${domain}`, value: `v=DMARC1; p=none; rua=mailto:dmarc-reports@${domain}`, purpose: 'dmarc', ...pending },
    { type: 'CNAME', name: `bounces.${domain}`, value: config.returnPathTarget, purpose: 'return_path', ...pending },
  ];
}

/** The domain's status from its records' outcomes: verified when all pass, failed when one fails. */
export function statusOf(records: readonly DnsRecord[]): DomainStatus {
  if (records.some((r) => r.status === 'failed')) return 'failed';
  return records.every((r) => r.status === 'verified') ? 'verified' : 'pending';
}
