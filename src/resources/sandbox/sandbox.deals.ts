// The sandbox's deals: the default pipeline, and deals with sandbox companies in each stage (some
// won, one lost), each with a contact of its company. Made through the deal kernel, so their totals,
// stage history and events are exactly what the API would have recorded. A MEDDPICC methodology is
// linked from the Proposal stage, and two deals carry evidence, so checklists show met and missing
// elements.
import { writeChild } from '../../platform/resource/children.ts';
import { createRecord } from '../../platform/resource/store.ts';
import { selectIn, tenantOf } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { linkOf } from '../deals/deal-contacts.ts';
import { deals } from '../deals/deals.resource.ts';
import { fromTemplate } from '../checklists/checklists.store.ts';
import { dealEvidence } from '../deals/deal-evidence.children.ts';
import { createDefaultPipeline, updateStage } from '../deals/pipelines.store.ts';

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

export interface SandboxDeal {
  id: string;
  name: string;
  contact_id: string | null;
}

const day = (w: WriteContext, days: number) => new Date((w.now + days * 86_400) * 1000).toISOString().slice(0, 10);

/** Seeds the deals; answers each deal with its name and the contact put on it. */
export async function seedSandboxDeals(w: WriteContext, accounts: Account[], people: Person[]): Promise<SandboxDeal[]> {
  const pipeline = await createDefaultPipeline(w);
  const made: SandboxDeal[] = [];
  for (const [i, [position, product, amount, probability, closeIn]] of DEALS.entries()) {
    const account = accounts[i % accounts.length];
    const deal = await createRecord(deals, w, {
      name: `${account.name} – ${product}`, amount, currency: 'USD', stage_id: pipeline.stages[position].id, probability,
      expected_close_date: day(w, closeIn), company_id: account.id, owner: i % 2 === 0 ? 'ada@example.com' : 'grace@example.com',
      source: i % 3 === 0 ? 'inbound' : 'outbound', tags: amount >= 6_000_000 ? ['enterprise'] : [],
    });
    const contact = people.find((p) => p.company_id === account.id);
    made.push({ id: deal.id, name: String(deal.name), contact_id: contact?.id ?? null });
    // The deal's insert is queued to the end of the write, so its contact is linked here directly.
    if (!contact) continue;
    const link = { ...tenantOf(w.scope), deal_id: deal.id, contact_id: contact.id, role: 'Champion', created_at: w.now, updated_at: w.now };
    await w.tx.insertInto('deal_contacts').values(link).execute();
    w.emit('deal.contact_added', { ...deal, contact_link: linkOf(link) });
  }
  await seedMethodology(w, pipeline);
  return made;
}

/** The first deal of a stage of the sandbox pipeline. */
const dealAt = async (w: WriteContext, stageId: string) =>
  (await selectIn(w.tx, 'deals', w.scope).select('id').where('stage_id', '=', stageId).orderBy('id').executeTakeFirstOrThrow()).id;

async function seedMethodology(w: WriteContext, pipeline: { id: string; stages: Array<{ id: string }> }): Promise<void> {
  // The deals' inserts are queued to the end of the write: the evidence below needs them now. (A
  // flush runs them one statement each, as the queued totals of two deals of one stage must be.)
  await w.flush();
  const methodology = await fromTemplate(w, 'meddpicc', undefined);
  const buildTheCase = (methodology.stages as Array<{ id: string; name: string }>).find((s) => s.name === 'Build the case')!;
  // Linked after the deals were made: the Proposal deal was there before the gate.
  const proposal = pipeline.stages[2].id;
  await updateStage(w, pipeline.id, proposal, { checklist_stage_id: buildTheCase.id });
  const discoveryDeal = await dealAt(w, pipeline.stages[1].id);
  for (const [key, note] of [['pain_identified', 'Month-end close takes nine days'], ['champion_identified', 'The controller wants this fixed before the audit']]) {
    await writeChild(dealEvidence, w, discoveryDeal, key, { note, source: 'call' });
  }
  const proposalDeal = await dealAt(w, proposal);
  for (const key of ['pain_identified', 'metrics_quantified', 'champion_identified', 'decision_criteria_known']) {
    await writeChild(dealEvidence, w, proposalDeal, key, { note: null, source: 'meeting' });
  }
}
