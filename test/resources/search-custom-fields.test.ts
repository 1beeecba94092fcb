// Search on custom fields through the catalog interface of search-fields.ts: a catalog of this test
// stands in for the custom-fields module, over a `field_values` table of the agreed shape (one row per
// record and set field), so filters become `exists` over value rows and sorts read the value row.
// Once the custom-fields module provides the catalog, its own tests run this path for real.
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCustomFieldCatalog, type CustomFieldDefinition } from '../../src/platform/resource/search-fields.ts';
import { databaseUrl, isPostgres, tenant, testApp } from '../helpers/app.ts';

let app: FastifyInstance;
const definitions: CustomFieldDefinition[] = [
  { id: 'fld_plan', name: 'plan', data_type: 'enum', options: { values: ['free', 'pro', 'enterprise'] } },
  { id: 'fld_regions', name: 'regions', data_type: 'multi_enum', options: { values: ['emea', 'amer', 'apac'] } },
  { id: 'fld_seats', name: 'seats', data_type: 'number' },
  { id: 'fld_note', name: 'note', data_type: 'text' },
  { id: 'fld_blob', name: 'blob', data_type: 'file' },
];

let dropDatabase = async () => {};

/**
 * On PostgreSQL a database of this file's own (the run's is shared by every test file, and one of
 * them checks that every tenant table of the catalog is known to the registry).
 */
async function ownDatabase(): Promise<string> {
  if (!isPostgres()) return databaseUrl();
  const url = new URL(databaseUrl());
  const name = `${url.pathname.slice(1)}_custom_search`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };
  await admin(`create database ${name}`);
  dropDatabase = () => admin(`drop database if exists ${name} with (force)`);
  url.pathname = `/${name}`;
  return url.toString();
}

beforeAll(async () => {
  app = await testApp({ env: { DATABASE_URL: await ownDatabase(), RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
  const { db, dialect } = app.services.database;
  await sql`create table if not exists field_values (org_id text not null, mode text not null, field_id text not null, record_id text not null,
    value_text text, value_num ${dialect === 'postgres' ? sql`double precision` : sql`real`}, primary key (org_id, mode, field_id, record_id))`.execute(db);
  useCustomFieldCatalog({ definitions: async (_db, resource) => (resource.plural === 'contacts' ? definitions : []) });
});
afterAll(async () => {
  useCustomFieldCatalog(undefined);
  await app.close();
  await dropDatabase();
});

describe('custom fields', () => {
  let t: Awaited<ReturnType<typeof tenant>>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await tenant(app, { sandbox: false });
    const list = (await t.live.post('/v1/lists', { name: 'People', type: 'contacts' })).json().data.id;
    const values: Record<string, { plan?: string; seats?: number; note?: string; regions?: string }> = {
      Ada: { plan: 'pro', seats: 12, note: 'Renews in May', regions: '|amer|emea|' }, Bob: { plan: 'free', seats: 1, regions: '|apac|' }, Cy: { plan: 'enterprise', seats: 250, note: '' }, Dee: {},
    };
    const { db } = app.services.database;
    for (const [name, v] of Object.entries(values)) {
      const id = (await t.live.post('/v1/contacts', { list_id: list, name })).json().data.id as string;
      ids[name] = id;
      const rows = [
        v.plan === undefined ? null : { field_id: 'fld_plan', value_text: v.plan, value_num: null },
        v.seats === undefined ? null : { field_id: 'fld_seats', value_text: null, value_num: v.seats },
        v.note === undefined ? null : { field_id: 'fld_note', value_text: v.note, value_num: null },
        v.regions === undefined ? null : { field_id: 'fld_regions', value_text: v.regions, value_num: null },
      ].filter((r) => r !== null);
      for (const r of rows) await sql`insert into field_values (org_id, mode, field_id, record_id, value_text, value_num) values (${t.org_id}, 'live', ${r.field_id}, ${id}, ${r.value_text}, ${r.value_num})`.execute(db);
    }
  });

  const names = async (body: Record<string, unknown>) => {
    const res = await t.live.post('/v1/search/contacts', body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.map((r: { name: string }) => r.name);
  };

  it.each<[string, { field: string; operator: string; value?: unknown }, string[]]>([
    ['eq', { field: 'custom_fields.plan', operator: 'eq', value: 'pro' }, ['Ada']],
    ['any_of', { field: 'custom_fields.plan', operator: 'any_of', value: ['pro', 'free'] }, ['Ada', 'Bob']],
    ['neq includes records without the field', { field: 'custom_fields.plan', operator: 'neq', value: 'pro' }, ['Bob', 'Cy', 'Dee']],
    ['none_of', { field: 'custom_fields.plan', operator: 'none_of', value: ['free'] }, ['Ada', 'Cy', 'Dee']],
    ['gt', { field: 'custom_fields.seats', operator: 'gt', value: 5 }, ['Ada', 'Cy']],
    ['between', { field: 'custom_fields.seats', operator: 'between', value: [1, 12] }, ['Ada', 'Bob']],
    ['is_empty', { field: 'custom_fields.note', operator: 'is_empty' }, ['Bob', 'Cy', 'Dee']],
    ['contains', { field: 'custom_fields.note', operator: 'contains', value: 'MAY' }, ['Ada']],
    ['exists false', { field: 'custom_fields.seats', operator: 'exists', value: false }, ['Dee']],
    ['multi_enum any_of', { field: 'custom_fields.regions', operator: 'any_of', value: ['emea', 'apac'] }, ['Ada', 'Bob']],
    ['multi_enum all_of', { field: 'custom_fields.regions', operator: 'all_of', value: ['emea', 'amer'] }, ['Ada']],
    ['multi_enum none_of', { field: 'custom_fields.regions', operator: 'none_of', value: ['emea'] }, ['Bob', 'Cy', 'Dee']],
    ['multi_enum is_empty', { field: 'custom_fields.regions', operator: 'is_empty' }, ['Cy', 'Dee']],
  ])('%s', async (_name, filter, expected) => {
    expect((await names({ filters: [filter], sort: [{ field: 'name' }] }))).toEqual(expected);
  });

  it('sorts by a custom field, values first, walking cursors', async () => {
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.live.post('/v1/search/contacts', { sort: [{ field: 'custom_fields.seats', direction: 'desc' }], limit: 1, ...(cursor ? { cursor } : {}) });
      expect(res.statusCode, res.body).toBe(200);
      walked.push(...res.json().data.map((r: { name: string }) => r.name));
      cursor = res.json().next_cursor;
    } while (cursor);
    expect(walked).toEqual(['Cy', 'Ada', 'Bob', 'Dee']);
  });

  it('refuses values and operators that do not fit, and unknown custom fields', async () => {
    const option = await t.live.post('/v1/search/contacts', { filters: [{ field: 'custom_fields.plan', operator: 'eq', value: 'gold' }] });
    expect([option.statusCode, option.json().detail[0].msg]).toEqual([422, 'custom_fields.plan is one of: free, pro, enterprise']);
    const region = await t.live.post('/v1/search/contacts', { filters: [{ field: 'custom_fields.regions', operator: 'any_of', value: ['mars'] }] });
    expect(region.statusCode).toBe(422);
    const unfit = await t.live.post('/v1/search/contacts', { filters: [{ field: 'custom_fields.plan', operator: 'gt', value: 'a' }] });
    expect(unfit.statusCode).toBe(400);
    for (const field of ['custom_fields.nope', 'custom_fields.blob']) {
      const res = await t.live.post('/v1/search/contacts', { filters: [{ field, operator: 'exists' }] });
      expect([res.statusCode, res.json().detail]).toEqual([400, `Unknown field ${field}: not a field of this object`]);
    }
    const companies = await t.live.post('/v1/search/companies', { filters: [{ field: 'custom_fields.plan', operator: 'exists' }] });
    expect(companies.statusCode).toBe(400);
  });
});
