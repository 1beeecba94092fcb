// Stores for the tests that run real service processes: a fresh database of this run's kind (a new
// PostgreSQL database, or a new SQLite file), and organizations made directly in a store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../../../src/db/database.ts';
import { createOrganization, type CreatedOrganization } from '../../../src/orgs/orgs.ts';
import { databaseUrl, isPostgres } from '../../helpers/app.ts';
import { rememberToken } from './secrets.ts';

export interface FreshStore {
  url: string;
  /** The SQLite file, on the SQLite pass. */
  file?: string;
  drop(): Promise<void>;
}

let created = 0;

export async function freshStore(label: string): Promise<FreshStore> {
  if (!isPostgres()) {
    const dir = mkdtempSync(join(tmpdir(), `rds-${label}-`));
    const file = join(dir, 'store.db');
    return { url: `sqlite:${file}`, file, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const admin = new URL(databaseUrl());
  const name = `${admin.pathname.slice(1)}_${label}_${++created}`.replace(/\W/g, '_').slice(0, 63);
  admin.pathname = '/postgres';
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`create database ${name}`);
  const url = new URL(databaseUrl());
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}

/** A new organization in the store at `url` (already migrated), its tokens remembered as secrets. */
export async function orgIn(url: string, name = 'Process test org'): Promise<CreatedOrganization> {
  const database = openDatabase(url);
  try {
    const org = await createOrganization(database, { defaultCredits: 1000 }, name);
    rememberToken(org.live_token);
    rememberToken(org.test_token);
    return org;
  } finally {
    await database.close();
  }
}
