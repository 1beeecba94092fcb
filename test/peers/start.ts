// Makes sure the peers of a run are up: every `*.peer.ts` in this folder (peer.ts says what one is),
// installing the Debian packages of those missing when the run is root (TEST_PEERS_INSTALL=0: never).
//   npx node test/peers/start.ts            every peer (what `npm test` and .ci/run call)
//   npx node test/peers/start.ts redis      the peers named
// Vitest's global set-up calls `ensurePeers` too, for the peers its store needs: each is started
// once (the first run that finds it absent starts it, under a lock; later runs reuse it).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PEERS_DIR, PeerFailed, startPeer, type Peer } from './peer.ts';

export async function loadPeers(): Promise<Peer[]> {
  const files = readdirSync(import.meta.dirname).filter((f) => f.endsWith('.peer.ts')).sort();
  return Promise.all(files.map(async (f) => ((await import(join(import.meta.dirname, f))) as { default: Peer }).default));
}

export const peersRequired = () => process.env.TEST_PEERS_REQUIRED === '1';

/** Holds a lock (a directory: made atomically) while `work` runs, so two runs never start one peer twice. */
async function locked<T>(name: string, work: () => Promise<T>): Promise<T> {
  mkdirSync(PEERS_DIR, { recursive: true });
  const lock = join(PEERS_DIR, `${name}.lock`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another run is starting it; a lock older than the deadline was left by a run that died.
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

const APT = '/usr/bin/apt-get';
let aptUpdated = false;

/**
 * Installs a missing peer's Debian packages (its `install` command is `apt-get install -y <packages>`)
 * when this run may: as root, where apt-get is. So a fresh machine gets its peers from `npm test`
 * itself; elsewhere the run says what to install. False when it could not.
 */
function install(peer: Peer): boolean {
  const packages = /^apt-get install -y (.+)$/.exec(peer.install)?.[1].split(/\s+/);
  if (!packages || process.getuid?.() !== 0 || !existsSync(APT) || process.env.TEST_PEERS_INSTALL === '0') return false;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    console.log(`peer ${peer.name}: installing ${packages.join(' ')} (apt-get)`);
    if (!aptUpdated) execFileSync(APT, ['update', '-qq'], { stdio: 'inherit', env });
    aptUpdated = true;
    execFileSync(APT, ['install', '-y', '-qq', ...packages], { stdio: 'inherit', env });
  } catch (error) {
    console.warn(`peer ${peer.name}: apt-get failed: ${(error as Error).message}`);
  }
  return existsSync(peer.program);
}

/**
 * Makes `peers` ready and answers the address of each, or null for one that is not installed
 * (allowed only when peers are not required: its tests then skip, saying so). Throws, naming the
 * peer and showing its log, when one cannot start.
 */
export async function ensurePeers(peers: Peer[]): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {};
  const failures: string[] = [];
  for (const peer of peers) {
    try {
      out[peer.name] = await locked(peer.name, async () => {
        if (await peer.ready()) return peer.address;
        if (!existsSync(peer.program) && !install(peer)) {
          const missing = `peer ${peer.name} is not installed (${peer.program}); install it with \`${peer.install}\``;
          if (peersRequired()) throw new PeerFailed(missing);
          console.warn(`${missing}: ITS TESTS DO NOT RUN`);
          return null;
        }
        await startPeer(peer);
        return peer.address;
      });
    } catch (error) {
      failures.push(error instanceof Error ? error.message : String(error));
    }
  }
  if (failures.length > 0) throw new PeerFailed(failures.join('\n\n'));
  return out;
}

if (import.meta.main) {
  const names = process.argv.slice(2);
  const peers = (await loadPeers()).filter((p) => names.length === 0 || names.includes(p.name));
  try {
    const ready = await ensurePeers(peers);
    for (const [name, address] of Object.entries(ready)) console.log(`peer ${name}: ${address ?? 'not installed'}`);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
