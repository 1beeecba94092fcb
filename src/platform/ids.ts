// Prefixed, time-sortable, unguessable ids: a 48-bit millisecond timestamp and 80 random bits in
// Crockford base32 (the ULID layout), so keyset order is creation order and ids never repeat.
// Within one process they are monotonic (ULID's monotonic mode): an id made in the same millisecond
// as the previous one takes its random part plus one, so creation order holds within a millisecond.
import { randomBytes } from 'node:crypto';
import { nowMillis } from './clock.ts';

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

/** The 10 characters of an id that give its time: milliseconds, most significant first. */
function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/** A new id; `at` (milliseconds) is for records made with a given creation time (seeding). */
export function newId(prefix: string, at?: number): string {
  const { time, bytes } = at === undefined ? randomPart(nowMillis()) : { time: at, bytes: random10() };
  let out = encodeTime(time);
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

/** Unix seconds on the service's clock (clock.ts), the API's timestamp unit. */
export { nowSeconds } from './clock.ts';

/** The millisecond an id was minted in. */
export function idMillis(id: string): number {
  const time = id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11);
  let ms = 0;
  for (const c of time) ms = ms * 32 + ALPHABET.indexOf(c);
  return ms;
}

/** The smallest id of `prefix` minted at `ms` or later: ids below it were all minted before. */
export const firstIdAt = (prefix: string, ms: number): string => `${prefix}_${encodeTime(Math.max(0, ms))}${'0'.repeat(16)}`;

/**
 * How many seconds a record's `created_at` may fall before the second its id was minted in. A write
 * reads its clock when it starts and mints ids as it goes, so an id is minted in the second of
 * `created_at` or shortly after; the kernel's create keeps it within this (`creationTime`), and a
 * list filtered by creation time walks only the ids such records can have: a page whose range ends
 * at second B reads at most this many seconds of later records beyond it.
 */
export const CREATION_LAG_SECONDS = 5;

/**
 * The `created_at` of a record whose write started at `now` (unix seconds) and whose id is `id`:
 * `now`, unless the id was minted more than CREATION_LAG_SECONDS later (a long write) or before
 * `now` (a clock set back), when the id's own second is the truer creation time.
 */
export function creationTime(id: string, now: number): number {
  const minted = Math.floor(idMillis(id) / 1000);
  return minted >= now && minted - now <= CREATION_LAG_SECONDS ? now : minted;
}
