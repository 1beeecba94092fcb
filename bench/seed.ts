// Fills a store through its store layer (Kysely, the service's own migrations and counters), never
// through HTTP: multi-row inserts, many per transaction, with the maintained totals (the tenant's
// 'contacts' and 'deals' counters, each list's member_count, the deals' per-stage totals) moved in
// the same transactions.
import { sql } from 'kysely';
import type { Database } from '../src/db/database.ts';
import type { DB } from '../src/db/schema.ts';
import { createOrganization } from '../src/orgs/orgs.ts';
import { newId } from '../src/platform/ids.ts';
import type { Scope } from '../src/platform/scope.ts';
import { tenantOf } from '../src/platform/resource/tenancy.ts';
import { bumpCounter, runWrite } from '../src/platform/write.ts';
import { defaultPipeline, stagesOf, type StageRow } from '../src/resources/deals/pipelines.store.ts';
import { addEntries, createList } from '../src/resources/lists/lists.store.ts';
import { contacts } from '../src/resources/contacts/contacts.resource.ts';
import { deals } from '../src/resources/deals/deals.resource.ts';
import { writeMissingJson } from '../src/platform/resource/stored-json.ts';
import { createField } from '../src/resources/fields/fields.store.ts';
import { contactFields, dealFields } from './fixtures.ts';

export interface SeededOrg {
  scope: Scope;
  token: string;
  /** Lists of type contacts and leads; contacts alternate between them. */
  listIds: string[];
  /** Contacts seeded so far. */
  contacts: number;
  /** The `score` number custom field every contact of the organization carries, when it has one. */
  scoreFieldId?: string;
}

export const ROWS_PER_TRANSACTION = 25_000;
// Parameters per statement stay under SQLite's 32,766 and PostgreSQL's 65,535.
export const rowsPerStatement = (database: Database) => (database.dialect === 'sqlite' ? 1000 : 2500);
// Contact i of an organization was created i milliseconds after this instant, so ids (time-ordered)
// follow i and the newest contacts are the last seeded.
/** When the seeded records were created: record i at EPOCH_MS + i milliseconds. */
export const EPOCH_MS = Date.UTC(2025, 0, 1);

/** Contact i's `score`: distinct for every i below a million, in an order unrelated to i's. */
export const scoreOf = (i: number): number => (i * 7919) % 1_000_003;

export async function createSeededOrg(database: Database, name: string, defaultCredits = 1000, options: { scoreField?: boolean } = {}): Promise<SeededOrg> {
  const org = await createOrganization(database, { defaultCredits }, name);
  const scope: Scope = { orgId: org.org_id, mode: 'live' };
  const listIds = await runWrite(database, scope, async (w) => [
    (await createList(w, { name: 'Customers', type: 'contacts' })).id,
    (await createList(w, { name: 'Inbound leads', type: 'leads' })).id,
  ]);
  // A suppression list, so reading contacts exercises the suppression lookup for real.
  await runWrite(database, scope, async (w) => {
    const list = await createList(w, { name: 'Do not contact', type: 'suppressions' });
    await w.flush(); // the list's insert is queued; adding entries reads it
    await addEntries(w, list.id, Array.from({ length: 20 }, (_, i) => `analyticalengines${i}.example`));
  });
  const scoreFieldId = options.scoreField
    ? (await runWrite(database, scope, (w) => createField(w, contacts, { object: 'contacts', name: 'score', data_type: 'number' }))).id
    : undefined;
  return { scope, token: org.live_token, listIds, contacts: 0, scoreFieldId };
}

/**
 * Adds contacts up to `total` for the organization. `onId` sees every new id (to sample them).
 */
export async function seedContacts(database: Database, org: SeededOrg, total: number, onId?: (id: string, i: number) => void): Promise<void> {
  const perStatement = rowsPerStatement(database);
  while (org.contacts < total) {
    const end = Math.min(total, org.contacts + ROWS_PER_TRANSACTION);
    const start = org.contacts;
    await database.db.transaction().execute(async (tx) => {
      const members = new Map<string, number>();
      for (let from = start; from < end; from += perStatement) {
        const rows: Array<DB['contacts']> = [];
        const values: Array<DB['field_values']> = [];
        for (let i = from; i < Math.min(end, from + perStatement); i++) {
          const f = contactFields(i);
          const ms = EPOCH_MS + i;
          const id = newId('con', ms);
          const listId = org.listIds[i % org.listIds.length];
          members.set(listId, (members.get(listId) ?? 0) + 1);
          rows.push({
            id, org_id: org.scope.orgId, mode: org.scope.mode, list_id: listId, name: f.name, first_name: f.first_name, last_name: f.last_name,
            title: f.title, company: f.company, company_id: null, work_email: f.work_email, email_domain: f.work_email.split('@')[1],
            personal_email: null, phone: f.phone, linkedin_url: null, city: f.city, country: f.country, seniority: f.seniority,
            department: f.department, tags: JSON.stringify(f.tags), created_at: Math.floor(ms / 1000), updated_at: Math.floor(ms / 1000),
            timezone: null, custom_fields: org.scoreFieldId ? JSON.stringify({ score: scoreOf(i) }) : null,
          });
          if (org.scoreFieldId) {
            values.push({ org_id: org.scope.orgId, mode: org.scope.mode, field_id: org.scoreFieldId, record_id: id, value_num: scoreOf(i), value_text: null, unique_value: null });
          }
          onId?.(id, i);
        }
        await tx.insertInto('contacts').values(rows).execute();
        if (values.length > 0) await tx.insertInto('field_values').values(values).execute();
      }
      await bumpCounter(tx, database.dialect, org.scope, 'contacts', end - start);
      for (const [listId, n] of members) {
        await tx.updateTable('lists').set((eb) => ({ member_count: eb('member_count', '+', n) }))
          .where('org_id', '=', org.scope.orgId).where('mode', '=', org.scope.mode).where('id', '=', listId).execute();
      }
    });
    org.contacts = end;
  }
}

export interface SeededDeals {
  pipelineId: string;
  /** The default pipeline's stages in order; deal i is in stage i mod their number. */
  stages: StageRow[];
  deals: number;
}

/** Adds each stage's share of a deal to `totals` as totals.ts does: own probabilities weighted now, others when read. */
function addToTotals(totals: Map<string, DB['deal_stage_totals']>, row: DB['deals']): void {
  const key = `${row.stage_id}|${row.currency}`;
  const t = totals.get(key) ?? { org_id: row.org_id, mode: row.mode, stage_id: row.stage_id, currency: row.currency, deal_count: 0, amount: 0, weighted_own: 0, amount_following: 0 };
  const amount = row.amount ?? 0;
  t.deal_count += 1;
  t.amount += amount;
  if (row.probability === null) t.amount_following += amount;
  else t.weighted_own += amount * row.probability;
  totals.set(key, t);
}

/**
 * Adds `total` deals (dealFields) to the organization's default pipeline, spread evenly over its
 * stages, with what creating each through the API leaves beside it: its open stage-history row, its
 * share of the per-stage totals and the 'deals' counter (not its event, as for contacts).
 */
export async function seedDeals(database: Database, org: SeededOrg, total: number): Promise<SeededDeals> {
  const { db } = database;
  const pipelineId = (await defaultPipeline(db, org.scope)).id;
  const stages = await stagesOf(db, org.scope, pipelineId);
  const perStatement = rowsPerStatement(database);
  for (let start = 0; start < total; start += ROWS_PER_TRANSACTION) {
    const end = Math.min(total, start + ROWS_PER_TRANSACTION);
    await db.transaction().execute(async (tx) => {
      const totals = new Map<string, DB['deal_stage_totals']>();
      for (let from = start; from < end; from += perStatement) {
        const rows: Array<DB['deals']> = [];
        const history: Array<DB['deal_stage_history']> = [];
        for (let i = from; i < Math.min(end, from + perStatement); i++) {
          const f = dealFields(i);
          const stage = stages[i % stages.length];
          const ms = EPOCH_MS + i;
          const at = Math.floor(ms / 1000);
          const id = newId('dea', ms);
          rows.push({
            id, ...tenantOf(org.scope), name: f.name, amount: f.amount, currency: f.currency, pipeline_id: pipelineId, stage_id: stage.id,
            status: stage.stage_type, probability: f.probability, expected_close_date: null, closed_at: stage.stage_type === 'open' ? null : at,
            company_id: null, owner: f.owner, source: f.source, tags: JSON.stringify([]), custom_fields: null, doc: null, created_at: at, updated_at: at,
          });
          history.push({ id: newId('dsh', ms), ...tenantOf(org.scope), deal_id: id, pipeline_id: pipelineId, stage_id: stage.id, entered_at: at, left_at: null, stage_name: null, created_at: at, updated_at: at });
          addToTotals(totals, rows[rows.length - 1]);
        }
        await tx.insertInto('deals').values(rows).execute();
        await tx.insertInto('deal_stage_history').values(history).execute();
      }
      const added = (column: 'deal_count' | 'amount' | 'weighted_own' | 'amount_following') => sql<number>`deal_stage_totals.${sql.ref(column)} + excluded.${sql.ref(column)}`;
      await tx.insertInto('deal_stage_totals').values([...totals.values()]).onConflict((oc) => oc.columns(['org_id', 'mode', 'stage_id', 'currency']).doUpdateSet({
        deal_count: added('deal_count'), amount: added('amount'), weighted_own: added('weighted_own'), amount_following: added('amount_following'),
      })).execute();
      await bumpCounter(tx, database.dialect, org.scope, 'deals', end - start);
    });
  }
  // Rows inserted here carry no stored text: the service's job writes them, as after a migration.
  await writeMissingJson(database, org.scope, deals);
  return { pipelineId, stages, deals: total };
}
