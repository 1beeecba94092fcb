// Contacts on a deal (the `deal_contacts` table): put, listed and removed through the kernel's children
// (deal-contacts.children.ts); here what is their own: the links a new deal is created with, a
// contact's deals. A deleted deal or contact takes its links with it (their stores delete them).
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { Row } from '../../platform/resource/define.ts';
import { present, presentOne } from '../../platform/resource/store.ts';
import { selectIn, tenantOf } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';
import { createReads } from './deals.create-reads.ts';
import { deals } from './deals.resource.ts';

type Link = DB['deal_contacts'];

/** A link as the `deal.contact_*` events carry it, for the links written without a put (a new deal's, the sandbox's). */
export const linkOf = (l: Link) => ({ deal_id: l.deal_id, contact_id: l.contact_id, role: l.role, created_at: Number(l.created_at), updated_at: Number(l.updated_at) });

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
