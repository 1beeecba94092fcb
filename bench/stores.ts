// A fresh store per run: a SQLite file in a temporary directory, or a new PostgreSQL database on
// the server that BENCH_PG_URL (or DATABASE_URL) names; both are removed at the end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export type StoreKind = 'sqlite' | 'postgres';

export interface BenchStore {
  kind: StoreKind;
  /** DATABASE_URL for the service, the baselines and the seeder. */
  url: string;
  /** Resolves once the store runs no statement (up to 30 s): at once for SQLite, whose work is the service's own. */
  idle(): Promise<void>;
  drop(): Promise<void>;
}

/** The PostgreSQL server to use, if any. */
export function postgresServerUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = env.BENCH_PG_URL || env.DATABASE_URL;
  return url && /^postgres(ql)?:\/\//.test(url) ? url : undefined;
}

export async function createStore(kind: StoreKind, serverUrl?: string): Promise<BenchStore> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'rds-bench-'));
    return { kind, url: `sqlite:${join(dir, 'bench.db')}`, idle: async () => {}, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (!serverUrl) throw new Error('no PostgreSQL server given');
  const name = `rds_bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    kind,
    url: url.toString(),
    idle: async () => {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
          const { rows } = await client.query<{ n: string }>("select count(*) as n from pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid()");
          if (Number(rows[0].n) === 0) return;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        await client.end();
      }
    },
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
