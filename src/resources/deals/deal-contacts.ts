// Contacts on a deal (the `deal_contacts` table): put with an optional role, removed, paged from
// either side. A deleted deal or contact takes its links with it.
import { sql, type Kysely, type SqlBool } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { Row } from '../../platform/resource/define.ts';
import { getRow, present, presentOne } from '../../platform/resource/store.ts';
import { deleteIn, selectIn, tenantOf, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { contacts } from '../contacts/contacts.resource.ts';
import { createReads } from './deals.create-reads.ts';
import { deals } from './deals.resource.ts';

type Link = DB['deal_contacts'];

// A list's cascade deletes its contacts without their hooks: links are read only while the contact exists.
const contactExists = sql<SqlBool>`exists (select 1 from contacts c where c.org_id = deal_contacts.org_id and c.mode = deal_contacts.mode and c.id = deal_contacts.contact_id)`;

const contactRows = async (db: Kysely<DB>, scope: Scope, ids: string[]) =>
  (ids.length === 0 ? [] : await selectIn(db, 'contacts', scope).selectAll().where('id', 'in', ids).execute()) as unknown as Row[];

/**
 * A link as the `deal.contact_*` events carry it: which contact, in which role. Like the association
 * events of other CRMs it names the contact rather than copying it; the contact's own events say
 * how it changes.
 */
export const linkOf = (l: Link) => ({ deal_id: l.deal_id, contact_id: l.contact_id, role: l.role, created_at: Number(l.created_at), updated_at: Number(l.updated_at) });

/** The links with their contacts, as the link routes answer them (read unless the caller has their rows). */
async function presentLinks(db: Kysely<DB>, scope: Scope, links: Link[], known?: Row[]) {
  const rows = known ?? await contactRows(db, scope, links.map((l) => l.contact_id));
  const people = new Map((await present(contacts, db, scope, rows)).map((c) => [c.id, c]));
  return links.map((l) => ({ ...linkOf(l), contact: people.get(l.contact_id)! }));
}

/** Puts a contact on a deal, or changes its role there; answers the link and whether it is new. */
export async function putDealContact(w: WriteContext, dealId: string, contactId: string, role: string | null | undefined) {
  const deal = await getRow(deals, w.tx, w.dialect, w.scope, dealId);
  const person = await getRow(contacts, w.tx, w.dialect, w.scope, contactId);
  const existing = await selectIn(w.tx, 'deal_contacts', w.scope).selectAll().where('deal_id', '=', dealId).where('contact_id', '=', contactId).executeTakeFirst();
  // The contact is there with that role already: nothing is written, no event, `updated_at` stays.
  if (existing && (role === undefined || role === existing.role)) return { link: (await presentLinks(w.tx, w.scope, [existing], [person]))[0], created: false };
  let link: Link;
  if (existing) {
    link = { ...existing, role: role === undefined ? existing.role : role, updated_at: w.now };
    await updateIn(w.tx, 'deal_contacts', w.scope).set({ role: link.role, updated_at: w.now }).where('deal_id', '=', dealId).where('contact_id', '=', contactId).execute();
  } else {
    link = { ...tenantOf(w.scope), deal_id: dealId, contact_id: contactId, role: role ?? null, created_at: w.now, updated_at: w.now };
    await w.tx.insertInto('deal_contacts').values(link).execute();
  }
  const [answer] = await presentLinks(w.tx, w.scope, [link], [person]);
  const record = await presentOne(deals, w.tx, w.scope, deal);
  w.emit(existing ? 'deal.contact_updated' : 'deal.contact_added', { ...record, contact_link: linkOf(link) }, existing ? { role: existing.role } : null);
  return { link: answer, created: !existing };
}

export interface NewLink {
  contact_id: string;
  role?: string | null;
}

/**
 * Puts contacts on a deal being created, in its write: one read checks that they all exist, one
 * insert links them, and each records `deal.contact_added` like a put.
 */
export async function addDealContacts(w: WriteContext, deal: Row, links: NewLink[]): Promise<void> {
  if (links.length === 0) return;
  const ids = links.map((l) => l.contact_id);
  if (new Set(ids).size !== ids.length) throw badRequest('Each contact may be put on a deal once');
  if ((await w.readAhead(createReads, ids)).length !== ids.length) throw notFound('Contact not found');
  const rows: Link[] = links.map((l) => ({ ...tenantOf(w.scope), deal_id: deal.id, contact_id: l.contact_id, role: l.role ?? null, created_at: w.now, updated_at: w.now }));
  for (const row of rows) w.insertLater('deal_contacts', row as Record<keyof Link, unknown>);
  const record = await presentOne(deals, w.tx, w.scope, deal);
  for (const row of rows) w.emit('deal.contact_added', { ...record, contact_link: linkOf(row) });
}

export async function removeDealContact(w: WriteContext, dealId: string, contactId: string) {
  const deal = await getRow(deals, w.tx, w.dialect, w.scope, dealId);
  const removed = await deleteIn(w.tx, 'deal_contacts', w.scope).where('deal_id', '=', dealId).where('contact_id', '=', contactId).executeTakeFirst();
  if (Number(removed.numDeletedRows) === 0) throw notFound('Contact is not on this deal');
  w.emit('deal.contact_removed', { ...(await presentOne(deals, w.tx, w.scope, deal)), contact_id: contactId });
  return { id: contactId, deleted: true as const };
}

/** A contact being deleted leaves every deal it was on. */
export async function leaveDeals(w: WriteContext, contactId: string): Promise<void> {
  await deleteIn(w.tx, 'deal_contacts', w.scope).where('contact_id', '=', contactId).execute();
}

export function dealContactsPage(db: Kysely<DB>, scope: Scope, dealId: string) {
  return {
    count: async () => Number((await selectIn(db, 'deal_contacts', scope).select((eb) => eb.fn.countAll<number>().as('n')).where('deal_id', '=', dealId).where(contactExists).executeTakeFirstOrThrow()).n),
    fetch: async (page: PageRequest) => {
      let q = selectIn(db, 'deal_contacts', scope).selectAll().where('deal_id', '=', dealId).where(contactExists);
      if (page.after !== undefined) q = q.where('contact_id', '<', String(page.after));
      return q.orderBy('contact_id', 'desc').limit(page.take).offset(page.offset).execute();
    },
    map: (links: Link[]) => presentLinks(db, scope, links),
  };
}

export function contactDealsPage(db: Kysely<DB>, scope: Scope, contactId: string) {
  const linked = () => selectIn(db, 'deal_contacts', scope).where('contact_id', '=', contactId);
  return {
    count: async () => Number((await linked().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n),
    fetch: async (page: PageRequest) => {
      let q = linked().select('deal_id');
      if (page.after !== undefined) q = q.where('deal_id', '<', String(page.after));
      const ids = (await q.orderBy('deal_id', 'desc').limit(page.take).offset(page.offset).execute()).map((l) => l.deal_id);
      if (ids.length === 0) return [] as Row[];
      const rows = (await selectIn(db, 'deals', scope).selectAll().where('id', 'in', ids).execute()) as unknown as Row[];
      return rows.sort((a, b) => (a.id < b.id ? 1 : -1));
    },
    map: (rows: Row[]) => present(deals, db, scope, rows),
  };
}
