// A peer is a real server the tests talk to (a store, a browser, later a mail or DNS server): each
// is one file in test/peers/ (`<name>.peer.ts`) that says how to tell it is ready, how to start it
// when it is not, and where it logs. `ensurePeers` (start.ts, run by `npm test`, `.ci/run` and the
// Vitest global set-up) reuses a peer that is ready and starts one that is not, waiting on its
// readiness check; a peer that cannot start fails the run with its name and the tail of its log.
// A peer whose program is not installed fails the run too when peers are required (CI sets
// TEST_PEERS_REQUIRED=1); otherwise its tests are skipped and the run says so.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Peer {
  name: string;
  /** Which runs need it: every run, or only the PostgreSQL pass (`postgres`). */
  neededBy: 'all' | 'postgres';
  /** The program that runs it; when absent, the peer is not installed (how to install it: `install`). */
  program: string;
  install: string;
  /** Resolves true once the peer answers (a real request, not an open port). */
  ready(): Promise<boolean>;
  /** The command that starts it, its output going to its log; it may daemonize itself. */
  start: { command: string; args: string[] };
  /** Where tests reach it, handed to them as `inject('peers')[name]`. */
  address: string;
  /** How long it may take to become ready once started (generous: the machine may be busy). */
  startSeconds?: number;
  /** Its own log, when it writes one elsewhere than the output of its start command. */
  log?: string;
}

export const PEERS_DIR = join(tmpdir(), 'rds-peers');
export const logOf = (peer: Peer) => join(PEERS_DIR, `${peer.name}.log`);

/** True once something at host:port accepts a connection and answers `send` as `expected`. */
export function answers(host: string, port: number, send: string | Buffer, expected: RegExp, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let seen = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write(send));
    socket.on('data', (chunk) => {
      seen += String(chunk);
      if (expected.test(seen)) done(true);
    });
    socket.on('end', () => done(expected.test(seen)));
  });
}

/** True once `url` answers 200. */
export async function httpOk(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** The last lines of the peer's log, for a failure message. */
export function logTail(peer: Peer, lines = 30): string {
  const tails = [...new Set([logOf(peer), peer.log ?? logOf(peer)])].filter((file) => existsSync(file))
    .map((file) => `${file}:\n${readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')}`);
  return tails.join('\n') || '(no log written)';
}

export class PeerFailed extends Error {}

/** Starts `peer` (detached: it outlives the run and is reused by the next) and waits until it is ready. */
export async function startPeer(peer: Peer): Promise<void> {
  mkdirSync(PEERS_DIR, { recursive: true });
  const log = openSync(logOf(peer), 'a');
  const child = spawn(peer.start.command, peer.start.args, { detached: true, stdio: ['ignore', log, log] });
  closeSync(log);
  let exited: string | undefined;
  child.on('exit', (code, signal) => (exited = `exited with ${signal ?? code}`));
  child.on('error', (error) => (exited = error.message));
  child.unref();
  const deadline = Date.now() + (peer.startSeconds ?? 60) * 1000;
  while (Date.now() < deadline) {
    if (await peer.ready()) return;
    // A command that daemonizes exits at once, successfully: keep waiting on readiness then.
    if (exited && !/with 0$/.test(exited)) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new PeerFailed(`peer ${peer.name} did not become ready (${peer.start.command} ${exited ?? `still running after ${peer.startSeconds ?? 60} s`}); the tail of its log:\n${logTail(peer)}`);
}
