// Prepares the store the suite runs on and the peers it talks to (test/peers/: started once, reused
// by later runs). On PostgreSQL each run gets its own fresh database (created here, migrated once,
// dropped at the end), so runs never see each other's rows. An unreachable store or a peer that
// cannot start fails the run: nothing is skipped.
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { ensurePeers, loadPeers } from '../peers/start.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const url = process.env.DATABASE_URL ?? 'sqlite::memory:';
  const peers = (await loadPeers()).filter((p) => p.neededBy === 'all' || url.startsWith(p.neededBy));
  project.provide('peers', await ensurePeers(peers));
  if (!url.startsWith('postgres')) {
    project.provide('databaseUrl', url);
    return async () => {};
  }
  const name = `rds_test_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const testUrl = new URL(url);
  testUrl.pathname = `/${name}`;
  const database = openDatabase(testUrl.toString());
  await migrateToLatest(database);
  await database.close();
  project.provide('databaseUrl', testUrl.toString());
  return async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`drop database if exists ${name} with (force)`);
    await client.end();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    /** Where each peer of the run answers; null for one not installed (allowed outside CI only). */
    peers: Record<string, string | null>;
  }
}
