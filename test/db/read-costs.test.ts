// What the stores learn of a read's cost: a slow run on a thread or the pool moves the read at once;
// on the event loop, where a run's CPU time also holds any garbage collection that fell in it, a
// run under 5 ms moves it only when the run before it was slow too.
import { describe, expect, it } from 'vitest';
import { isCheap, ran, ranOnLoop, ReadCosts } from '../../src/db/read-costs.ts';

const CHEAP_MS = 1;

/** A point read whose first runs took 0.02 ms. */
function cheapRead() {
  const read = new ReadCosts().of('select * from contacts where id = ?');
  if (read === false) throw new Error('a select is a read');
  for (let i = 0; i < 3; i++) ranOnLoop(read, 0.02, 1);
  expect(isCheap(read, CHEAP_MS)).toBe(true);
  return read;
}

describe('read costs', () => {
  it('keeps a cheap point read on the event loop through one slow run there, and moves it after two', () => {
    const read = cheapRead();
    ranOnLoop(read, 3, 1); // a collection during the read
    expect(isCheap(read, CHEAP_MS)).toBe(true);
    ranOnLoop(read, 0.02, 1);
    ranOnLoop(read, 3, 1);
    expect(isCheap(read, CHEAP_MS)).toBe(true);
    ranOnLoop(read, 2.5, 1);
    expect(isCheap(read, CHEAP_MS)).toBe(false);
    expect(read.cost).toBe(2.5);
  });

  it('moves a point read at once when one run on the event loop takes longer than a collection', () => {
    const read = cheapRead();
    ranOnLoop(read, 12, 1);
    expect(isCheap(read, CHEAP_MS)).toBe(false);
    expect(read.cost).toBe(12);
  });

  it('learns from a run elsewhere at once, and lets the cost fall slowly with quick runs', () => {
    const read = cheapRead();
    ran(read, 3, 1);
    expect(read.cost).toBe(3);
    for (let i = 0; i < 4; i++) ran(read, 0.02, 1);
    expect(read.cost).toBeGreaterThan(CHEAP_MS);
    for (let i = 0; i < 6; i++) ran(read, 0.02, 1);
    expect(isCheap(read, CHEAP_MS)).toBe(true);
  });

  it('is no point read once a run answered several rows, whatever it cost', () => {
    const read = cheapRead();
    ranOnLoop(read, 0.02, 2);
    expect(isCheap(read, CHEAP_MS)).toBe(false);
  });
});
