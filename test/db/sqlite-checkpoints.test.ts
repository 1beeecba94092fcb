// Checkpoints of a SQLite file off the event loop: the writer never checkpoints on its own
// (wal_autocheckpoint 0), yet what requests commit reaches the database file while the service
// runs, the WAL starts over instead of growing, and a closed store reopens with every write.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { client, isPostgres, newOrg, testApp } from '../helpers/app.ts';

const size = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

describe.skipIf(isPostgres())('SQLite checkpoints', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rds-checkpoints-'));
  const file = join(dir, 'store.db');
  const env = { DATABASE_URL: `sqlite:${file}`, RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' };
  const apps: FastifyInstance[] = [];

  afterAll(async () => {
    for (const app of apps) await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function creates(app: FastifyInstance, token: string, listId: string, from: number, count: number) {
    const api = client(app, token);
    for (let i = from; i < from + count; i += 50) {
      const batch = Array.from({ length: Math.min(50, from + count - i) }, (_, k) =>
        api.post('/v1/contacts', { list_id: listId, name: `Person ${i + k}`, work_email: `person${i + k}@checkpoints.example`, title: 'x'.repeat(200) }));
      for (const response of await Promise.all(batch)) expect(response.statusCode).toBe(201);
    }
  }

  it('copies commits into the file from its own thread, starts the WAL over, and keeps every write', async () => {
    const app = await testApp({ env });
    apps.push(app);
    // The writer leaves checkpoints to the thread.
    const { rows } = await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(app.services.database.db);
    expect(rows[0].wal_autocheckpoint).toBe(0);

    const org = await newOrg(app, undefined, { sandbox: false });
    const listId = (await client(app, org.live_token).post('/v1/lists', { name: 'People', type: 'contacts' })).json().data.id;
    const before = size(file);
    await creates(app, org.live_token, listId, 0, 1500);
    // The file grows while the service runs: only a checkpoint writes to it.
    const deadline = Date.now() + 10_000;
    while (size(file) <= before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(size(file)).toBeGreaterThan(before);
    // 1,500 creates appended well over 16 MiB of pages to the WAL; it started over instead of holding them.
    const wal = size(`${file}-wal`);
    expect(wal).toBeGreaterThan(0);
    expect(wal).toBeLessThan(16 * 1024 * 1024);

    await creates(app, org.live_token, listId, 1500, 500);
    await app.close();
    apps.pop();
    // The store closed checkpoints the rest; reopened, it has every contact.
    expect(size(`${file}-wal`)).toBe(0);
    const reopened = await testApp({ env });
    apps.push(reopened);
    const page = (await client(reopened, org.live_token).get(`/v1/contacts?list_id=${listId}&limit=1`)).json();
    expect(page.pagination.total).toBe(2000);
  });
});
