// A migration released under one name and renamed since (RENAMED_MIGRATIONS): a store that recorded
// the released name starts on the new version, runs nothing again, and records the name it has now.
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrateToLatest, migrations, RENAMED_MIGRATIONS } from '../../src/db/migrate.ts';
import { freshStore } from '../security/support/stores.ts';

/** The migrations' names depend on nothing but the code. */
const sqlite = { dialect: 'sqlite' } as Database;

const recordedNames = async (url: string) => {
  const database = openDatabase(url);
  try {
    return (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db)).rows.map((r) => r.name);
  } finally {
    await database.close();
  }
};

describe('migrations renamed after their release', () => {
  it('a store migrated under the released names migrates on, each migration run once', async () => {
    const store = await freshStore('renamed_migrations');
    try {
      // The store as the versions that released them left it: the renamed migrations recorded under their old names.
      const before = openDatabase(store.url);
      try {
        const released = Object.fromEntries(Object.entries(migrations(before))
          .map(([name, migration]) => [RENAMED_MIGRATIONS.find(([, now]) => now === name)?.[0] ?? name, migration]));
        const { error } = await new Migrator({ db: before.db, provider: { getMigrations: async () => released }, allowUnorderedMigrations: true }).migrateToLatest();
        expect(error).toBeUndefined();
      } finally {
        await before.close();
      }
      expect(await recordedNames(store.url)).toContain('0006-idempotency-lease');

      const after = openDatabase(store.url);
      try {
        // Nothing runs again (a renamed migration run twice would fail: its column exists).
        expect(await migrateToLatest(after)).toEqual([]);
        expect(await migrateToLatest(after)).toEqual([]);
      } finally {
        await after.close();
      }
      const names = Object.keys(migrations(sqlite)).sort();
      expect(names).toContain('0009-idempotency-lease');
      expect(await recordedNames(store.url)).toEqual(names);
    } finally {
      await store.drop();
    }
  });

  it('no two migrations share a number', () => {
    const numbers = Object.keys(migrations(sqlite)).map((name) => name.slice(0, 4));
    expect(numbers.filter((n, i) => numbers.indexOf(n) !== i)).toEqual([]);
  });
});
