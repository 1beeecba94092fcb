// Prepares the store the suite runs on. On PostgreSQL each run gets its own fresh database (created
// here, migrated once, dropped at the end), so runs never see each other's rows. An unreachable
// store fails the run: nothing is skipped.
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const url = process.env.DATABASE_URL ?? 'sqlite::memory:';
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
  }
}
