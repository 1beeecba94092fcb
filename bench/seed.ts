// Fills a store through its store layer (Kysely, the service's own migrations and counters), never
// through HTTP: multi-row inserts, many per transaction, with the maintained totals (the tenant's
// 'contacts' counter and each list's member_count) moved in the same transactions.
import type { Database } from '../src/db/database.ts';
import type { DB } from '../src/db/schema.ts';
import { createOrganization } from '../src/orgs/orgs.ts';
import { newId } from '../src/platform/ids.ts';
import type { Scope } from '../src/platform/scope.ts';
import { bumpCounter, runWrite } from '../src/platform/write.ts';
import { addEntries, createList } from '../src/resources/lists/lists.store.ts';
import { contacts } from '../src/resources/contacts/contacts.resource.ts';
import { createField } from '../src/resources/fields/fields.store.ts';
import { contactFields } from './fixtures.ts';

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

const ROWS_PER_TRANSACTION = 25_000;
// Parameters per statement stay under SQLite's 32,766 and PostgreSQL's 65,535.
const rowsPerStatement = (database: Database) => (database.dialect === 'sqlite' ? 1000 : 2500);
// Contact i of an organization was created i milliseconds after this instant, so ids (time-ordered)
// follow i and the newest contacts are the last seeded.
const EPOCH_MS = Date.UTC(2025, 0, 1);

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
            custom_fields: org.scoreFieldId ? JSON.stringify({ score: scoreOf(i) }) : null,
          });
          if (org.scoreFieldId) {
            values.push({ org_id: org.scope.orgId, mode: org.scope.mode, field_id: org.scoreFieldId, record_id: id, value_num: scoreOf(i), value_text: null, unique_value: null });
          }
          onId?.(id, i);
        }
        await tx.insertInto('contacts').values(rows).execute();
        if (values.length > 0) await tx.insertInto('field_values').values(values).execute();
      }
      await bumpCounter(tx, org.scope, 'contacts', end - start);
      for (const [listId, n] of members) {
        await tx.updateTable('lists').set((eb) => ({ member_count: eb('member_count', '+', n) }))
          .where('org_id', '=', org.scope.orgId).where('mode', '=', org.scope.mode).where('id', '=', listId).execute();
      }
    });
    org.contacts = end;
  }
}
