// Seeds and resets the sandbox data set of a test-mode tenant. Seeding writes each table with one
// multi-row insert (it runs inside every organization's creation), moves the maintained counters and
// records the events the same changes made through the API would have recorded.
import type { Insertable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { newId } from '../../platform/ids.ts';
import type { WriteContext } from '../../platform/write.ts';
import type { Row } from '../../platform/resource/define.ts';
import { present } from '../../platform/resource/store.ts';
import { deleteIn, type TenantTable } from '../../platform/resource/tenancy.ts';
import { campaigns as campaignResource } from '../campaigns/campaigns.resource.ts';
import { companies as companyResource } from '../companies/companies.resource.ts';
import { contacts as contactResource } from '../contacts/contacts.resource.ts';
import { EVENTS_REMOVED } from '../events/events.store.ts';
import { lists as listResource } from '../lists/lists.resource.ts';
import { grantCredits } from '../usage/usage.store.ts';
import { sandboxData, type ListKey } from './sandbox.data.ts';
import { SANDBOX_DEALS, seedSandboxDeals } from './sandbox.deals.ts';
import { seedSandboxDomain } from './sandbox.domains.ts';
import { seedSandboxMailbox } from './sandbox.mailboxes.ts';
import { attachSandboxMailbox } from './sandbox.campaigns.ts';
import { SANDBOX_MEMBERS, seedSandboxMembers } from './sandbox.members.ts';
import { SANDBOX_SEQUENCE_TASKS, SANDBOX_SEQUENCES, seedSandboxSequence } from './sandbox.sequences.ts';
import { SANDBOX_NOTES, SANDBOX_TASKS, seedSandboxTasksNotes } from './sandbox.tasks.ts';
import { SANDBOX_DIALER_SESSIONS, seedSandboxVoice } from './sandbox.voice.ts';
import { SANDBOX_PRODUCTS, SANDBOX_QUOTES, seedSandboxQuotes } from './sandbox.quotes.ts';
import type { SandboxReset } from './sandbox.schemas.ts';

export interface SandboxSummary {
  lists: number;
  contacts: number;
  companies: number;
  campaigns: number;
  deals: number;
  tasks: number;
  notes: number;
  products: number;
  quotes: number;
  members: number;
  sequences: number;
  dialer_sessions: number;
}

export function sandboxSummary(): SandboxSummary {
  const data = sandboxData();
  return { lists: data.lists.length, contacts: data.contacts.length, companies: data.companies.length, campaigns: data.campaigns.length, deals: SANDBOX_DEALS, tasks: SANDBOX_TASKS + SANDBOX_SEQUENCE_TASKS, notes: SANDBOX_NOTES, products: SANDBOX_PRODUCTS, quotes: SANDBOX_QUOTES, members: SANDBOX_MEMBERS, sequences: SANDBOX_SEQUENCES, dialer_sessions: SANDBOX_DIALER_SESSIONS };
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
    seniority: c.seniority, department: c.department, timezone: null, tags: JSON.stringify(c.tags), created_at: at(c.age), updated_at: at(c.age),
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
      steps: JSON.stringify(c.steps), schedule: JSON.stringify(c.schedule), mailbox_ids: JSON.stringify([]), audience_count: launchedAt === null ? 0 : enrollments.length,
      launched_at: launchedAt, sequence_id: null, created_at: at(c.age), updated_at: launchedAt ?? at(c.age),
    };
  });

  await w.tx.insertInto('companies').values(companies).execute();
  await w.tx.insertInto('lists').values(lists).execute();
  await w.tx.insertInto('list_entries').values(entries).execute();
  await w.tx.insertInto('contacts').values(contacts).execute();
  await w.tx.insertInto('campaigns').values(campaigns).execute();
  if (enrollments.length > 0) await w.tx.insertInto('campaign_enrollments').values(enrollments).execute();
  w.count('companies', companies.length);
  w.count('contacts', contacts.length);
  w.count('campaigns', campaigns.length);

  // The events, in the order the API would have recorded them: accounts, lists, the suppression
  // entries, the people (suppressed as they read now), the campaigns (created as drafts), the launch.
  // Each record as the API answered it when its event was recorded (computed fields given, so the
  // kernel's presentation runs no query).
  const as = <T extends object>(rows: T[], extra: (row: T, i: number) => object) => rows.map((row, i) => ({ ...row, ...extra(row, i) }) as unknown as Row);
  for (const company of await present(companyResource, w.tx, w.scope, as(companies, () => ({ contact_count: 0 })))) w.emit(companyResource.events.created, company);
  const presentedLists = await present(listResource, w.tx, w.scope, as(lists, () => ({ member_count: 0 })));
  for (const list of presentedLists) w.emit(listResource.events.created, list);
  const suppression = presentedLists.find((l) => l.id === suppressionList.id)!;
  w.emit('list.entries_added', { ...suppression, member_count: entries.length, added: entries.map((e) => e.value) });
  const people = await present(contactResource, w.tx, w.scope, as(contacts, (_c, i) => ({ suppressed: data.contacts[i].suppressed })));
  for (const contact of people) w.emit(contactResource.events.created, contact);
  const drafts = await present(campaignResource, w.tx, w.scope, as(campaigns, (c) => ({ status: 'draft', audience_count: 0, launched_at: null, updated_at: c.created_at })));
  for (const campaign of drafts) w.emit(campaignResource.events.created, campaign);
  for (const launched of await present(campaignResource, w.tx, w.scope, as(campaigns.filter((c) => c.launched_at !== null), () => ({})))) {
    w.emit(campaignResource.events.launch, launched, { status: 'draft', launched_at: null, audience_count: 0 });
  }
  const deals = await seedSandboxDeals(w, companies, contacts);
  // The deals' inserts are queued; tasks, notes and the quote check that their deals exist.
  await w.flush();
  await seedSandboxMembers(w);
  await seedSandboxTasksNotes(w, deals, contacts.map((c) => c.id));
  const quoted = deals.find((d) => d.contact_id !== null);
  if (quoted) await seedSandboxQuotes(w, { id: quoted.id, contactId: quoted.contact_id!, name: quoted.name });
  await seedSandboxDomain(w, 60 * 86_400);
  await seedSandboxMailbox(w);
  await attachSandboxMailbox(w);
  await seedSandboxSequence(w, contacts.filter((_c, i) => !data.contacts[i].suppressed).map((c) => c.id));
  await seedSandboxVoice(w, listId.get('inbound')!);
  return sandboxSummary();
}


/**
 * Replaces everything in the tenant's data set with a fresh sandbox data set and starting credits.
 * The event sequence keeps counting up, so a live stream simply sees `sandbox.reset` and the new data.
 */
export async function resetSandbox(w: WriteContext, startingCredits: number, dataTables: readonly TenantTable[]): Promise<SandboxReset> {
  const { orgId } = w.scope;
  // Every table of the registry's groups (it names them, see registry.ts); API keys and idempotency records are kept.
  for (const table of dataTables) await deleteIn(w.tx, table, w.scope).execute();
  // Custom field definitions and pipelines among them: later writes of the same transaction must not use them.
  w.changed();
  const events = await deleteIn(w.tx, 'events', w.scope).executeTakeFirst();
  await deleteIn(w.tx, 'counters', w.scope).where('name', 'not in', ['events', EVENTS_REMOVED]).execute();
  w.count(EVENTS_REMOVED, Number(events.numDeletedRows));
  const summary = sandboxSummary();
  w.emit('sandbox.reset', { id: orgId, reset: true, ...summary });
  await grantCredits(w, startingCredits, 'Starting credits');
  await seedSandbox(w);
  return { reset: true, ...summary };
}
