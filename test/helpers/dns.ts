// A DNS server of a test file's own: Debian's dnsmasq (test/peers/dnsmasq.peer.ts) on a free port of
// 127.0.0.1, answering the TXT and CNAME records the test publishes and NXDOMAIN for any other name
// under `.test`. dnsmasq reads such records only when it starts, so publishing restarts it on the
// same port with a new configuration file. Real DNS over UDP (and TCP for long answers).
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { answersTxt, DNSMASQ, dnsmasqArgs } from '../peers/dnsmasq.peer.ts';

/** False when dnsmasq is not installed (allowed outside CI only): the DNS tests are skipped. */
export const dnsAvailable = inject('peers').dnsmasq != null;

/** A name's TXT records (each one text), or its CNAME target. */
export type Published = { txt: string[] } | { cname: string };

/** A port free for both UDP and TCP on 127.0.0.1. */
async function freePort(): Promise<number> {
  for (;;) {
    const udp = createSocket('udp4');
    const port = await new Promise<number>((resolve) => udp.bind(0, '127.0.0.1', () => resolve(udp.address().port)));
    const tcp = createServer();
    const free = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    if (free) await new Promise<void>((resolve) => tcp.close(() => resolve()));
    if (free) return port;
  }
}

/** A TXT text as dnsmasq's configuration takes it: strings of at most 255 characters, quoted. */
const quoted = (text: string) => (text.match(/.{1,255}/g) ?? ['']).map((s) => `"${s}"`).join(',');

export class DnsServer {
  readonly #dir = mkdtempSync(join(tmpdir(), 'rds-dns-'));
  readonly #records = new Map<string, Published>();
  #process: ChildProcess | undefined;
  #generation = 0;
  readonly port: number;

  private constructor(port: number) {
    this.port = port;
  }

  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  static async start(): Promise<DnsServer> {
    const server = new DnsServer(await freePort());
    await server.#restart();
    return server;
  }

  /** Publishes records (a name's TXT strings, or its CNAME target), replacing what `name` had; `undefined` removes it. */
  async publish(records: Record<string, Published | undefined>): Promise<void> {
    for (const [name, record] of Object.entries(records)) {
      if (record) this.#records.set(name, record);
      else this.#records.delete(name);
    }
    await this.#restart();
  }

  async #restart(): Promise<void> {
    await this.stop();
    const ready = `ready-${++this.#generation}.rds.test`;
    const lines = [`txt-record=${ready},ok`];
    for (const [name, record] of this.#records) {
      // One line per record: a record's text is split into strings of 255, which a resolver joins.
      if ('txt' in record) lines.push(...record.txt.map((text) => `txt-record=${name},${quoted(text)}`));
      // dnsmasq serves a CNAME only to a name it knows an address of.
      else lines.push(`host-record=${record.cname},127.0.0.1`, `cname=${name},${record.cname}`);
    }
    const conf = join(this.#dir, 'dnsmasq.conf');
    writeFileSync(conf, `${lines.join('\n')}\n`);
    let log = '';
    const child = spawn(DNSMASQ, dnsmasqArgs(this.port, conf), { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (chunk) => (log += chunk));
    child.stderr!.on('data', (chunk) => (log += chunk));
    this.#process = child;
    const deadline = Date.now() + 20_000;
    while (!(await answersTxt(this.address, ready, 'ok'))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`dnsmasq did not start on port ${this.port}: ${log}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

/** A UDP socket that reads DNS queries and never answers: a DNS server that hangs. */
export async function silentDnsServer(): Promise<{ address: string; close: () => Promise<void> }> {
  const socket = createSocket('udp4');
  socket.on('message', () => {});
  const port = await new Promise<number>((resolve) => socket.bind(0, '127.0.0.1', () => resolve(socket.address().port)));
  return { address: `127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}
