// Every table holding tenant data leads its primary key and every unique index with org_id, so the
// PostgreSQL schema can be distributed by organization (Citus) without changing a query. Read from
// the live catalog after the migrations, so a new table or index that breaks the rule fails here.
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { isPostgres, testApp } from '../helpers/app.ts';

/**
 * Tables with org_id that are looked up before any organization is known, kept whole on every node
 * (Citus reference tables): API keys are found by the hash of the presented token, public quote
 * links, unsubscribe links and e-mail connections' inbound URLs by the hash of their token.
 */
const REFERENCE_TABLES = new Set(['api_keys', 'quote_links', 'unsubscribe_links', 'inbound_links']);

describe.runIf(isPostgres())('tenant keys in the PostgreSQL catalog', () => {
  it('leads the primary key and every unique index of each tenant table with org_id', async () => {
    const app = await testApp();
    afterAll(() => app.close());
    const { rows } = await sql<{ table: string; index: string; primary: boolean; columns: string[] }>`
      select c.relname as table, i.relname as index, ix.indisprimary as primary,
        array(select a.attname from unnest(ix.indkey) with ordinality k(attnum, ord)
              join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum order by k.ord)::text[] as columns
      from pg_index ix
      join pg_class c on c.oid = ix.indrelid
      join pg_class i on i.oid = ix.indexrelid
      join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and (ix.indisprimary or ix.indisunique)
        and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'org_id')`.execute(app.services.database.db);
    const tenantTables = (await sql<{ table: string }>`select table_name as table from information_schema.columns
      where table_schema = current_schema() and column_name = 'org_id'`.execute(app.services.database.db)).rows.map((r) => r.table);
    expect(tenantTables.length).toBeGreaterThan(5);
    const checked = tenantTables.filter((t) => !REFERENCE_TABLES.has(t));
    const withoutKey = checked.filter((t) => !rows.some((r) => r.table === t && r.primary));
    const offending = rows.filter((r) => !REFERENCE_TABLES.has(r.table) && r.columns[0] !== 'org_id').map((r) => `${r.table}.${r.index} (${r.columns.join(', ')})`);
    expect(withoutKey).toEqual([]);
    expect(offending).toEqual([]);
  });
});
