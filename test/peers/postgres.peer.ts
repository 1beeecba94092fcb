// The PostgreSQL server of the PostgreSQL pass (a database per run is made on it: global-setup.ts).
import { readdirSync } from 'node:fs';
import pg from 'pg';
import type { Peer } from './peer.ts';

const url = process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const version = () => readdirSync('/etc/postgresql').sort().at(-1) ?? '';

export default {
  name: 'postgres',
  neededBy: 'postgres',
  program: '/usr/bin/pg_ctlcluster',
  install: 'apt-get install -y postgresql',
  address: url,
  async ready() {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      return (await client.query('select 1 as one')).rows[0]?.one === 1;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  },
  get start() {
    return { command: '/usr/bin/pg_ctlcluster', args: ['--skip-systemctl-redirect', version(), 'main', 'start'] };
  },
  get log() {
    return `/var/log/postgresql/postgresql-${version()}-main.log`;
  },
} satisfies Peer;
