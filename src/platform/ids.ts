// Prefixed, time-sortable, unguessable ids: a 48-bit millisecond timestamp and 80 random bits in
// Crockford base32 (the ULID layout), so keyset order is creation order and ids never repeat.
// Within one process they are monotonic (ULID's monotonic mode): an id made in the same millisecond
// as the previous one takes its random part plus one, so creation order holds within a millisecond.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function random10(): Buffer {
  if (offset + 10 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 10);
  offset += 10;
  return bytes;
}

let lastTime = -1;
const lastRandom = Buffer.alloc(10);

/** The random part of the next id at `now`: fresh, or the last one plus one in the same millisecond. */
function randomPart(now: number): { time: number; bytes: Buffer } {
  if (now <= lastTime) {
    for (let i = 9; i >= 0; i--) {
      lastRandom[i] = (lastRandom[i] + 1) & 0xff;
      if (lastRandom[i] !== 0) return { time: lastTime, bytes: lastRandom };
    }
    // 2^80 ids in one millisecond cannot happen; were it to, the next millisecond is borrowed.
    lastTime++;
    return { time: lastTime, bytes: lastRandom };
  }
  lastTime = now;
  random10().copy(lastRandom);
  return { time: now, bytes: lastRandom };
}

/** A new id; `at` (milliseconds) is for records made with a given creation time (seeding). */
export function newId(prefix: string, at?: number): string {
  const { time: now, bytes } = at === undefined ? randomPart(Date.now()) : { time: at, bytes: random10() };
  let out = '';
  let time = now;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[time % 32] + out;
    time = Math.floor(time / 32);
  }
  // 80 bits → 16 base32 characters, 5 bits at a time.
  let acc = 0;
  let bits = 0;
  for (const byte of bytes) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return `${prefix}_${out}`;
}

/** Unix seconds, the API's timestamp unit. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
