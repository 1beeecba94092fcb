// The node:sqlite dialect on its own: what Kysely relies on (reads, writes, affected rows,
// transactions that commit or roll back), WAL and full sync, and two connections on one file
// waiting for each other's writes instead of failing (BEGIN IMMEDIATE with a busy timeout); with
// reader threads, reads that neither wait for a transaction nor see its rows, and writes that do wait;
// cheap reads marked bounded run on the connection instead.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { NodeSqliteDialect } from '../../src/db/node-sqlite-dialect.ts';
import { BOUNDED } from '../../src/db/read-costs.ts';

interface T {
  items: { id: number; name: string };
}

const dir = mkdtempSync(join(tmpdir(), 'rds-dialect-'));
const opened: Array<Kysely<T>> = [];
const open = (path = join(dir, 'one.db'), readers = 0) => {
  const db = new Kysely<T>({ dialect: new NodeSqliteDialect({ path, readers }) });
  opened.push(db);
  return db;
};

afterAll(async () => {
  for (const db of opened) await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('node:sqlite dialect', () => {
  it('reads, writes and reports affected rows', async () => {
    const db = open(':memory:');
    await db.schema.createTable('items').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text').execute();
    const inserted = await db.insertInto('items').values([{ id: 1, name: 'a' }, { id: 2, name: 'b' }]).executeTakeFirst();
    expect(inserted.numInsertedOrUpdatedRows).toBe(2n);
    const updated = await db.updateTable('items').set({ name: 'c' }).where('id', '=', 2).executeTakeFirst();
    expect(updated.numUpdatedRows).toBe(1n);
    expect(await db.selectFrom('items').selectAll().orderBy('id').execute()).toEqual([{ id: 1, name: 'a' }, { id: 2, name: 'c' }]);
    const returned = await db.deleteFrom('items').where('id', '=', 1).returning('name').execute();
    expect(returned).toEqual([{ name: 'a' }]);
  });

  it('commits a transaction, and rolls back one that throws', async () => {
    const db = open(':memory:');
    await db.schema.createTable('items').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text').execute();
    await db.transaction().execute(async (tx) => {
      await tx.insertInto('items').values({ id: 1, name: 'kept' }).execute();
    });
    await expect(db.transaction().execute(async (tx) => {
      await tx.insertInto('items').values({ id: 2, name: 'lost' }).execute();
      throw new Error('abort');
    })).rejects.toThrow('abort');
    expect((await db.selectFrom('items').select('name').execute()).map((r) => r.name)).toEqual(['kept']);
  });

  it('runs a file in WAL mode with full sync', async () => {
    const db = open(join(dir, 'pragmas.db'));
    const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
    const sync = await sql<{ synchronous: number }>`pragma synchronous`.execute(db);
    expect(mode.rows[0].journal_mode).toBe('wal');
    expect(sync.rows[0].synchronous).toBe(2);
  });

  it('waits for another process holding the write lock instead of failing', async () => {
    const path = join(dir, 'shared.db');
    const db = open(path);
    await db.schema.createTable('items').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text').execute();
    // Another process takes the write lock, signals, and holds it for 400 ms before committing.
    const holder = spawn(process.execPath, ['-e', `
      const { DatabaseSync } = require('node:sqlite');
      const db = new DatabaseSync(${JSON.stringify(path)});
      db.exec('begin immediate');
      db.exec("insert into items (id, name) values (1, 'other process')");
      process.stdout.write('locked\\n');
      const until = Date.now() + 400; while (Date.now() < until) {}
      db.exec('commit');
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    await once(holder.stdout!, 'data');
    const started = Date.now();
    await db.transaction().execute(async (tx) => {
      await tx.insertInto('items').values({ id: 2, name: 'this process' }).execute();
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    await once(holder, 'exit');
    expect((await db.selectFrom('items').select('id').orderBy('id').execute()).map((r) => r.id)).toEqual([1, 2]);
  });
});

describe('node:sqlite dialect with reader threads', () => {
  const items = async (db: Kysely<T>) => (await db.selectFrom('items').select('id').orderBy('id').execute()).map((r) => r.id);
  async function withItems(path: string) {
    const db = open(path, 2);
    await db.schema.createTable('items').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text').execute();
    return db;
  }

  /** A transaction that has inserted item `id` and stays open until `commit()`; resolves once the row is in. */
  async function openWithRow(db: Kysely<T>, id: number) {
    let commit!: () => void;
    const held = new Promise<void>((resolve) => { commit = resolve; });
    let inserted!: () => void;
    const insertedInside = new Promise<void>((resolve) => { inserted = resolve; });
    const transaction = db.transaction().execute(async (tx) => {
      await tx.insertInto('items').values({ id, name: 'inside' }).execute();
      inserted();
      await held;
    });
    await insertedInside;
    return { commit, transaction };
  }

  it('reads outside an open transaction at once, without its rows; writes wait for its end', async () => {
    const db = await withItems(join(dir, 'readers.db'));
    const { commit, transaction } = await openWithRow(db, 1);
    expect(await items(db)).toEqual([]);
    let outsideDone = false;
    const outside = db.insertInto('items').values({ id: 2, name: 'outside' }).execute().then(() => { outsideDone = true; });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(outsideDone).toBe(false);
    commit();
    await transaction;
    await outside;
    expect(await items(db)).toEqual([1, 2]);
  });

  it('runs a cheap read marked bounded on the connection, which waits for an open transaction, and other reads of many rows on a thread', async () => {
    const db = await withItems(join(dir, 'bounded.db'));
    await db.insertInto('items').values([{ id: 1, name: 'a' }, { id: 2, name: 'b' }]).execute();
    const ids = async (text: string) => (await sql<{ id: number }>`${sql.raw(text)}`.execute(db)).rows.map((r) => r.id);
    const bounded = `${BOUNDED}select id from items order by id`;
    const unmarked = 'select id from items order by id';
    // The first runs learn what each costs.
    for (let i = 0; i < 3; i++) {
      expect(await ids(bounded)).toEqual([1, 2]);
      expect(await ids(unmarked)).toEqual([1, 2]);
    }
    const { commit, transaction } = await openWithRow(db, 3);
    expect(await ids(unmarked)).toEqual([1, 2]);
    let boundedRows: number[] | undefined;
    const waiting = ids(bounded).then((rows) => { boundedRows = rows; });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(boundedRows).toBeUndefined();
    commit();
    await transaction;
    await waiting;
    expect(boundedRows).toEqual([1, 2, 3]);
  });

  it('sees every commit in the next read', async () => {
    const db = await withItems(join(dir, 'read-your-writes.db'));
    for (let i = 1; i <= 50; i++) {
      await db.insertInto('items').values({ id: i, name: `n${i}` }).execute();
      const { n } = await db.selectFrom('items').select((e) => e.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      expect(n).toBe(i);
    }
  });

  it("fails a read with node:sqlite's error, and fails reads still running at close", async () => {
    const db = await withItems(join(dir, 'errors.db'));
    await expect(sql`select * from missing`.execute(db)).rejects.toMatchObject({ message: 'no such table: missing', errcode: 1 });
    const slow = expect(sql`with recursive r(i) as (select 1 union all select i + 1 from r where i < 5000000) select count(*) as n from r`.execute(db))
      .rejects.toThrow('The SQLite store is closed');
    await new Promise((resolve) => setTimeout(resolve, 50));
    await db.destroy();
    await slow;
  });

  it('keeps a memory database in a temporary file of the process, removed at close', async () => {
    const ours = () => readdirSync(tmpdir()).filter((f) => f.startsWith(`revenue-data-${process.pid}-`));
    const before = ours();
    const db = await withItems(':memory:');
    await db.insertInto('items').values({ id: 1, name: 'kept' }).execute();
    expect(await items(db)).toEqual([1]);
    expect(ours().length).toBeGreaterThan(before.length);
    await db.destroy();
    expect(ours()).toEqual(before);
  });
});
