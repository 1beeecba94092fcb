// Debian's dnsmasq (package dnsmasq-base), the DNS server the sending-domain checks query over real
// UDP and TCP. This peer answers one fixed TXT record: it shows that dnsmasq is installed and
// serves. Tests publish records of their own with servers of their own (test/helpers/dns.ts): dnsmasq
// reads TXT and CNAME records only when it starts, so each test file runs one on a free port and
// restarts it with the records it publishes.
import { Resolver } from 'node:dns/promises';
import type { Peer } from './peer.ts';

const port = Number(process.env.TEST_DNSMASQ_PORT ?? 5354);
export const DNSMASQ = '/usr/sbin/dnsmasq';
export const PEER_CHECK_NAME = 'peer-check.rds.test';

/** The arguments of a dnsmasq that answers only what it is given, on 127.0.0.1:`port`, logging to its output. */
export const dnsmasqArgs = (listen: number, confFile = '/dev/null') => [
  '--keep-in-foreground', '--no-resolv', '--no-hosts', '--no-poll', `--conf-file=${confFile}`, '--listen-address=127.0.0.1', '--bind-interfaces',
  `--port=${listen}`, '--pid-file=', '--user=', '--log-facility=-', '--local=/test/',
];

/** True once `server` answers `name`'s TXT record with `text`. */
export async function answersTxt(server: string, name: string, text: string): Promise<boolean> {
  const resolver = new Resolver({ timeout: 1_000, tries: 1 });
  resolver.setServers([server]);
  try {
    return (await resolver.resolveTxt(name)).some((strings) => strings.join('') === text);
  } catch {
    return false;
  }
}

export default {
  name: 'dnsmasq',
  neededBy: 'all',
  program: DNSMASQ,
  install: 'apt-get install -y dnsmasq-base',
  address: `127.0.0.1:${port}`,
  ready: () => answersTxt(`127.0.0.1:${port}`, PEER_CHECK_NAME, 'ready'),
  start: { command: DNSMASQ, args: [...dnsmasqArgs(port), `--txt-record=${PEER_CHECK_NAME},ready`] },
} satisfies Peer;
