// Checks a sending domain's records through DNS (node:dns, against DNS_SERVERS or the system's
// resolvers), each lookup bounded by DNS_TIMEOUT_MS: a server that never answers is a finding, not
// a hang. The TXT records are parsed here, by the rules of their RFCs, since what we need is the
// records' content (an include, a key, a policy), not the evaluation of a message that mail
// authentication libraries offer: SPF (RFC 7208: one `v=spf1` record, terms separated by spaces),
// DKIM (RFC 6376: `tag=value` pairs, white space inside values ignored) and DMARC (RFC 7489).
import { getServers } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import type { Config } from '../../config.ts';
import type { DnsRecord } from './dns-records.ts';

type Outcome = Pick<DnsRecord, 'status' | 'finding'>;
const verified = (finding: string): Outcome => ({ status: 'verified', finding });
const failed = (finding: string): Outcome => ({ status: 'failed', finding });

/** Why a lookup found nothing, in words; undefined for "no such record" (each check words that itself). */
function lookupFailure(error: unknown, name: string, type: string, timeoutMs: number): string | undefined {
  const code = (error as { code?: string }).code;
  if (code === 'ENOTFOUND' || code === 'ENODATA') return undefined;
  if (code === 'ETIMEOUT' || code === 'ECANCELLED') return `The DNS servers did not answer the ${type} query for ${name} within ${timeoutMs / 1000} s`;
  if (code === 'ESERVFAIL') return `The DNS servers failed to answer the ${type} query for ${name} (SERVFAIL)`;
  if (code === 'EREFUSED' || code === 'ECONNREFUSED') return `The DNS servers refused the ${type} query for ${name}`;
  return `The ${type} query for ${name} failed (${code ?? 'unknown error'})`;
}

/** The TXT records at `name`, each with its strings joined (a long record is split into strings of 255). */
async function txt(resolver: Resolver, name: string, timeoutMs: number): Promise<string[] | Outcome> {
  try {
    return (await resolver.resolveTxt(name)).map((strings) => strings.join(''));
  } catch (error) {
    const why = lookupFailure(error, name, 'TXT', timeoutMs);
    return why ? failed(why) : [];
  }
}

/** `tag=value` pairs of a DKIM or DMARC record, tags lower-cased. */
function tags(record: string, squeeze: boolean): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of record.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const value = part.slice(at + 1);
    out.set(part.slice(0, at).trim().toLowerCase(), squeeze ? value.replace(/\s+/g, '') : value.trim());
  }
  return out;
}

function checkSpf(records: string[], name: string, include: string): Outcome {
  const spf = records.filter((r) => /^v=spf1(\s|$)/i.test(r.trim()));
  if (spf.length === 0) return failed(records.length === 0 ? `No TXT record at ${name}` : `No SPF record (v=spf1) among the TXT records at ${name}`);
  if (spf.length > 1) return failed(`${spf.length} SPF records at ${name}: a domain may publish only one (receivers treat more as an error); merge them into one`);
  const terms = spf[0].trim().split(/\s+/).slice(1).map((t) => t.toLowerCase());
  if (!terms.some((t) => t.replace(/^\+/, '') === `include:${include}`)) return failed(`SPF record does not include ${include}: add include:${include} before its all term`);
  return verified(`SPF record includes ${include}`);
}

function checkDkim(records: string[], name: string, publicKey: string): Outcome {
  const dkim = records.map((r) => tags(r, true)).filter((t) => (t.get('v') ?? 'DKIM1') === 'DKIM1' && t.has('p'));
  if (dkim.length === 0) return failed(records.length === 0 ? `No TXT record at ${name}` : `No DKIM key record (p=) among the TXT records at ${name}`);
  if (dkim.length > 1) return failed(`${dkim.length} DKIM key records at ${name}; publish only this domain's`);
  const [record] = dkim;
  if ((record.get('k') ?? 'rsa').toLowerCase() !== 'rsa') return failed(`The DKIM record at ${name} is for a ${record.get('k')} key, not rsa`);
  if (record.get('p') === '') return failed(`The DKIM record at ${name} revokes its key (empty p=)`);
  if (record.get('p') !== publicKey) return failed(`The DKIM record at ${name} holds another public key than this domain's`);
  return verified(`DKIM record holds this domain's public key`);
}

function checkDmarc(records: string[], name: string): Outcome {
  const dmarc = records.filter((r) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(r.trim()));
  if (dmarc.length === 0) return failed(records.length === 0 ? `No TXT record at ${name}` : `No DMARC record (v=DMARC1) among the TXT records at ${name}`);
  if (dmarc.length > 1) return failed(`${dmarc.length} DMARC records at ${name}: receivers ignore them all; keep one`);
  const policy = tags(dmarc[0], false).get('p')?.toLowerCase();
  if (policy !== 'none' && policy !== 'quarantine' && policy !== 'reject') return failed(`The DMARC record at ${name} has no valid policy: p= must be none, quarantine or reject`);
  return verified(`DMARC record found with p=${policy}`);
}

async function checkCname(resolver: Resolver, name: string, target: string, timeoutMs: number): Promise<Outcome> {
  let found: string[];
  try {
    found = await resolver.resolveCname(name);
  } catch (error) {
    return failed(lookupFailure(error, name, 'CNAME', timeoutMs) ?? `No CNAME record at ${name}`);
  }
  const host = (found[0] ?? '').toLowerCase().replace(/\.$/, '');
  if (host === '') return failed(`No CNAME record at ${name}`);
  return host === target ? verified(`CNAME points to ${target}`) : failed(`The CNAME at ${name} points to ${host}, not ${target}`);
}

async function checkOne(resolver: Resolver, record: DnsRecord, publicKey: string, timeoutMs: number): Promise<Outcome> {
  if (record.purpose === 'return_path') return checkCname(resolver, record.name, record.value, timeoutMs);
  const found = await txt(resolver, record.name, timeoutMs);
  if (!Array.isArray(found)) return found;
  if (record.purpose === 'spf') return checkSpf(found, record.name, /include:(\S+)/.exec(record.value)![1]);
  if (record.purpose === 'dkim') return checkDkim(found, record.name, publicKey);
  return checkDmarc(found, record.name);
}

/**
 * Each record with what DNS holds for it now. The lookups run at once; whatever has not been
 * answered when DNS_TIMEOUT_MS has passed is cancelled and reported so.
 */
export async function checkRecords(records: readonly DnsRecord[], publicKey: string, config: Pick<Config, 'dnsServers' | 'dnsTimeoutMs'>): Promise<DnsRecord[]> {
  // Each server is asked once, in turn, within its share of the time: a dead first server leaves the
  // others time to answer.
  const servers = config.dnsServers.length > 0 ? config.dnsServers : getServers();
  const resolver = new Resolver({ timeout: Math.max(100, Math.floor(config.dnsTimeoutMs / Math.max(1, servers.length))), tries: 1 });
  if (config.dnsServers.length > 0) resolver.setServers([...config.dnsServers]);
  const deadline = setTimeout(() => resolver.cancel(), config.dnsTimeoutMs);
  try {
    return await Promise.all(records.map(async (record) => ({ ...record, ...(await checkOne(resolver, record, publicKey, config.dnsTimeoutMs)) })));
  } finally {
    clearTimeout(deadline);
  }
}
