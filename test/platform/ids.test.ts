// Ids carry the millisecond they were minted in; lists filtered by creation time rely on how a
// record's `created_at` relates to it (see CREATION_LAG_SECONDS).
import { describe, expect, it } from 'vitest';
import { CREATION_LAG_SECONDS, creationTime, firstIdAt, idMillis, newId } from '../../src/platform/ids.ts';

describe('ids and creation times', () => {
  it('orders every id of a millisecond between its first id and the next one', () => {
    for (const ms of [0, 1, 31, 32, Date.UTC(2025, 0, 1), Date.now(), 2 ** 40 + 12_345]) {
      const id = newId('con', ms);
      expect(idMillis(id)).toBe(ms);
      expect(id >= firstIdAt('con', ms)).toBe(true);
      expect(id < firstIdAt('con', ms + 1)).toBe(true);
      expect(firstIdAt('con', ms) < firstIdAt('con', ms + 1)).toBe(true);
    }
    expect(idMillis(newId('con')) - Date.now()).toBeLessThanOrEqual(0);
  });

  it('records the write\'s time unless the id was minted too late or before it', () => {
    const minted = Date.UTC(2026, 0, 1, 12, 0, 0, 500);
    const second = Math.floor(minted / 1000);
    const id = newId('con', minted);
    expect(creationTime(id, second)).toBe(second);
    expect(creationTime(id, second - CREATION_LAG_SECONDS)).toBe(second - CREATION_LAG_SECONDS);
    // A write that ran longer than the lag before minting records when the record was really made.
    expect(creationTime(id, second - CREATION_LAG_SECONDS - 1)).toBe(second);
    // A clock set back between the write's start and the id: never a created_at after its id.
    expect(creationTime(id, second + 3)).toBe(second);
  });
});
