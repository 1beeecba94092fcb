// Seeds and resets the sandbox data set of a test-mode tenant. Seeding writes each table with one
// multi-row insert (it runs inside every organization's creation), moves the maintained counters and
// records the events the same changes made through the API would have recorded.
import type { Insertable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { newId } from '../../platform/ids.ts';
import type { WriteContext } from '../../platform/write.ts';
import { toCampaign } from '../campaigns/campaigns.store.ts';
import type { Company } from '../companies/companies.schemas.ts';
import type { Contact } from '../contacts/contacts.schemas.ts';
import { EVENTS_REMOVED } from '../events/events.store.ts';
import type { List } from '../lists/lists.schemas.ts';
import { grantCredits } from '../usage/usage.store.ts';
import { sandboxData, type ListKey } from './sandbox.data.ts';
import type { SandboxReset } from './sandbox.schemas.ts';

export interface SandboxSummary {
  lists: number;
  contacts: number;
  companies: number;
  campaigns: number;
}

export function sandboxSummary(): SandboxSummary {
  const data = sandboxData();
  return { lists: data.lists.length, contacts: data.contacts.length, companies: data.companies.length, campaigns: data.campaigns.length };
}

/** Fills the tenant's (test) data set with the sandbox data; the caller's write commits it. */
export async function seedSandbox(w: WriteContext): Promise<SandboxSummary> {
  const data = sandboxData();
  const { orgId, mode } = w.scope;
  const at = (age: number) => w.now - age;
  // Ids carry their record's creation time, so keyset order stays creation order.
  const idAt = (prefix: string, age: number) => newId(prefix, at(age) * 1000);

  const companies = data.companies.map((c) => ({
    id: idAt('cmp', c.age), org_id: orgId, mode, name: c.name, domain: c.domain, industry: c.industry, employee_count: c.employee_count,
    annual_revenue: c.annual_revenue, city: c.city, country: c.country, linkedin_url: c.linkedin_url, description: c.description,
    tags: JSON.stringify(c.tags), created_at: at(c.age), updated_at: at(c.age),
  }));

  const lists = data.lists.map((l) => ({
    id: idAt('lst', l.age), org_id: orgId, mode, name: l.name, type: l.type, description: l.description,
    member_count: l.type === 'suppressions' ? data.suppressions.length : data.contacts.filter((c) => c.list === l.key).length,
    created_at: at(l.age), updated_at: at(l.age),
  }));
  const listId = new Map(data.lists.map((l, i) => [l.key, lists[i].id] as [ListKey, string]));
  const suppressionList = lists[data.lists.findIndex((l) => l.type === 'suppressions')];

  const entries = data.suppressions.map((s) => ({
    id: idAt('ent', s.age), org_id: orgId, mode, list_id: suppressionList.id, value: s.value, kind: s.kind, created_at: at(s.age),
  }));

  const contacts = data.contacts.map((c) => ({
    id: idAt('con', c.age), org_id: orgId, mode, list_id: listId.get(c.list)!, name: c.name, first_name: c.first_name, last_name: c.last_name,
    title: c.title, company: c.company_name, company_id: companies[c.company].id, work_email: c.work_email, email_domain: c.email_domain,
    personal_email: c.personal_email, phone: c.phone, linkedin_url: c.linkedin_url, city: c.city, country: c.country,
    seniority: c.seniority, department: c.department, tags: JSON.stringify(c.tags), created_at: at(c.age), updated_at: at(c.age),
  }));

  const enrollments: Insertable<DB['campaign_enrollments']>[] = [];
  const campaigns = data.campaigns.map((c) => {
    const id = idAt('cpg', c.age);
    const launchedAt = c.launched_age === null ? null : at(c.launched_age);
    if (launchedAt !== null) {
      data.contacts.forEach((contact, i) => {
        if (contact.list === c.list && !contact.suppressed) enrollments.push({ org_id: orgId, mode, campaign_id: id, contact_id: contacts[i].id, created_at: launchedAt });
      });
    }
    return {
      id, org_id: orgId, mode, name: c.name, status: c.status, channels: JSON.stringify(c.channels), list_id: listId.get(c.list)!,
      steps: JSON.stringify(c.steps), schedule: JSON.stringify(c.schedule), audience_count: launchedAt === null ? 0 : enrollments.length,
      launched_at: launchedAt, created_at: at(c.age), updated_at: launchedAt ?? at(c.age),
    };
  });

  await w.tx.insertInto('companies').values(companies).execute();
  await w.tx.insertInto('lists').values(lists).execute();
  await w.tx.insertInto('list_entries').values(entries).execute();
  await w.tx.insertInto('contacts').values(contacts).execute();
  await w.tx.insertInto('campaigns').values(campaigns).execute();
  if (enrollments.length > 0) await w.tx.insertInto('campaign_enrollments').values(enrollments).execute();
  w.count('companies', companies.length);
  w.count('lists', lists.length);
  w.count('contacts', contacts.length);
  w.count('campaigns', campaigns.length);

  // The events, in the order the API would have recorded them: accounts, lists, the suppression
  // entries, the people (suppressed as they read now), the campaigns (created as drafts), the launch.
  companies.forEach((c, i) => {
    const company: Company = {
      id: c.id, name: c.name, domain: c.domain, industry: c.industry, employee_count: c.employee_count, annual_revenue: c.annual_revenue,
      city: c.city, country: c.country, linkedin_url: c.linkedin_url, description: c.description, tags: data.companies[i].tags,
      contact_count: 0, created_at: c.created_at, updated_at: c.updated_at,
    };
    w.emit('company.created', company);
  });
  const toList = (l: (typeof lists)[number], memberCount: number): List => ({
    id: l.id, name: l.name, type: l.type, description: l.description, member_count: memberCount, created_at: l.created_at, updated_at: l.updated_at,
  });
  for (const l of lists) w.emit('list.created', toList(l, 0));
  w.emit('list.entries_added', { ...toList(suppressionList, entries.length), added: entries.map((e) => e.value) });
  contacts.forEach((c, i) => {
    const contact: Contact = {
      id: c.id, list_id: c.list_id, name: c.name, first_name: c.first_name, last_name: c.last_name, title: c.title, company: c.company,
      company_id: c.company_id, work_email: c.work_email, personal_email: c.personal_email, phone: c.phone, linkedin_url: c.linkedin_url,
      city: c.city, country: c.country, seniority: c.seniority, department: c.department, tags: data.contacts[i].tags,
      suppressed: data.contacts[i].suppressed, created_at: c.created_at, updated_at: c.updated_at,
    };
    w.emit('contact.created', contact);
  });
  for (const c of campaigns) w.emit('campaign.created', toCampaign({ ...c, status: 'draft', audience_count: 0, launched_at: null, updated_at: c.created_at }));
  for (const c of campaigns) {
    if (c.launched_at !== null) w.emit('campaign.launched', toCampaign(c), { status: 'draft', launched_at: null, audience_count: 0 });
  }

  return { lists: lists.length, contacts: contacts.length, companies: companies.length, campaigns: campaigns.length };
}

// Every table holding a tenant's data, children first. API keys and idempotency records are kept.
const DATA_TABLES = ['campaign_enrollments', 'campaigns', 'contacts', 'companies', 'list_entries', 'lists', 'usage_transactions'] as const;

/**
 * Replaces everything in the tenant's data set with a fresh sandbox data set and starting credits.
 * The event sequence keeps counting up, so a live stream simply sees `sandbox.reset` and the new data.
 */
export async function resetSandbox(w: WriteContext, startingCredits: number): Promise<SandboxReset> {
  const { orgId, mode } = w.scope;
  for (const table of DATA_TABLES) await w.tx.deleteFrom(table).where('org_id', '=', orgId).where('mode', '=', mode).execute();
  const events = await w.tx.deleteFrom('events').where('org_id', '=', orgId).where('mode', '=', mode).executeTakeFirst();
  await w.tx.deleteFrom('counters').where('org_id', '=', orgId).where('mode', '=', mode).where('name', 'not in', ['events', EVENTS_REMOVED]).execute();
  w.count(EVENTS_REMOVED, Number(events.numDeletedRows));
  const summary = sandboxSummary();
  w.emit('sandbox.reset', { id: orgId, reset: true, ...summary });
  await grantCredits(w, startingCredits, 'Starting credits');
  await seedSandbox(w);
  return { reset: true, ...summary };
}
