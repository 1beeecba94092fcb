// The sandbox's deals: the default pipeline, and deals with sandbox companies in each stage (some
// won, one lost), each with a contact of its company. Made through the deal kernel, so their totals,
// stage history and events are exactly what the API would have recorded.
import { createRecord } from '../../platform/resource/store.ts';
import { tenantOf } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { deals } from '../deals/deals.resource.ts';
import { createDefaultPipeline } from '../deals/pipelines.store.ts';

interface Account { id: string; name: string }
interface Person { id: string; company_id: string | null }

// Stage position, product, amount in cents, own probability (null follows the stage), days to close.
const DEALS: Array<[number, string, number, number | null, number]> = [
  [0, 'Starter plan, 10 seats', 1_200_000, null, 60],
  [0, 'Pilot', 500_000, null, 75],
  [1, 'Team plan, 25 seats', 3_000_000, null, 45],
  [1, 'Data add-on', 900_000, 30, 40],
  [2, 'Business plan, 50 seats', 6_000_000, null, 30],
  [3, 'Enterprise plan, 200 seats', 24_000_000, 80, 14],
  [4, 'Renewal, 40 seats', 4_800_000, null, -10],
  [5, 'Platform migration', 9_000_000, null, -20],
];

/** How many deals the sandbox holds. */
export const SANDBOX_DEALS = DEALS.length;

const day = (w: WriteContext, days: number) => new Date((w.now + days * 86_400) * 1000).toISOString().slice(0, 10);

/** Seeds the deals; answers the first deal that has a contact (the sandbox quote is for it). */
export async function seedSandboxDeals(w: WriteContext, accounts: Account[], people: Person[]): Promise<{ id: string; contactId: string; name: string } | undefined> {
  const pipeline = await createDefaultPipeline(w);
  let quoted: { id: string; contactId: string; name: string } | undefined;
  for (const [i, [position, product, amount, probability, closeIn]] of DEALS.entries()) {
    const account = accounts[i % accounts.length];
    const deal = await createRecord(deals, w, {
      name: `${account.name} – ${product}`, amount, currency: 'USD', stage_id: pipeline.stages[position].id, probability,
      expected_close_date: day(w, closeIn), company_id: account.id, owner: i % 2 === 0 ? 'ada@example.com' : 'grace@example.com',
      source: i % 3 === 0 ? 'inbound' : 'outbound', tags: amount >= 6_000_000 ? ['enterprise'] : [],
    });
    const contact = people.find((p) => p.company_id === account.id);
    // The deal's insert is queued to the end of the write, so its contact is linked here directly.
    if (!contact) continue;
    await w.tx.insertInto('deal_contacts').values({ ...tenantOf(w.scope), deal_id: deal.id, contact_id: contact.id, role: 'Champion', created_at: w.now, updated_at: w.now }).execute();
    w.emit('deal.contact_added', { ...deal, contact_id: contact.id, role: 'Champion' });
    quoted ??= { id: deal.id, contactId: contact.id, name: String(deal.name) };
  }
  return quoted;
}
