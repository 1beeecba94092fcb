// rowsByIds, the read of a tenant's rows by a list of ids: exactly the rows of the credential's
// organization and mode, each once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { newId } from '../../src/platform/ids.ts';
import { rowsByIds, tenantOf } from '../../src/platform/resource/tenancy.ts';
import type { Scope } from '../../src/platform/scope.ts';
import { newOrg, testApp } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp();
});
afterAll(() => app.close());

async function listIn(scope: Scope, name: string): Promise<string> {
  const id = newId('lst');
  await app.services.database.db.insertInto('lists').values({ ...tenantOf(scope), id, name, type: 'contacts', description: null, member_count: 0, created_at: 1, updated_at: 1 }).execute();
  return id;
}

describe('rowsByIds', () => {
  it('reads only the rows of the scope, each once, and nothing for unknown or no ids', async () => {
    const a = (await newOrg(app)).org_id;
    const b = (await newOrg(app)).org_id;
    const live: Scope = { orgId: a, mode: 'live' };
    const mine = [await listIn(live, 'one'), await listIn(live, 'two')];
    const otherMode = await listIn({ orgId: a, mode: 'test' }, 'test mode');
    const otherOrg = await listIn({ orgId: b, mode: 'live' }, 'other org');
    const { db } = app.services.database;

    const rows = await rowsByIds(db, 'lists', live, [mine[1], otherMode, mine[0], otherOrg, 'lst_unknown', mine[1]]);
    expect(rows.map((r) => r.id).sort()).toEqual([...mine].sort());
    expect(rows.every((r) => r.org_id === a && r.mode === 'live')).toBe(true);
    expect(rows.find((r) => r.id === mine[0])).toMatchObject({ name: 'one', type: 'contacts', member_count: 0 });
    expect(await rowsByIds(db, 'lists', live, [])).toEqual([]);
    expect(await rowsByIds(db, 'lists', { orgId: b, mode: 'test' }, [...mine, otherMode, otherOrg])).toEqual([]);
  });
});
