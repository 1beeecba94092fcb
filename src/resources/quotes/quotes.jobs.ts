// The scheduled expiry of quotes: sent or viewed quotes past `valid_until` become `expired` with their
// `quote.expired` event, one write per tenant. (Reads show the expiry before this records it.)
import { nowSeconds } from '../../platform/ids.ts';
import { defineJobKind } from '../../platform/jobs/kinds.ts';
import type { Mode } from '../../db/schema.ts';
import { runWrite } from '../../platform/write.ts';
import { AWAITING } from './quotes.store.ts';
import { expireDue } from './transitions.ts';

export const expireQuotes = defineJobKind<Record<string, never>>({
  name: 'quotes.expire',
  async run(_payload, { database, log }) {
    // The one read across tenants: which tenants have quotes due (index quotes_expiry); each is then
    // expired in its own write, under its own lock, through the tenant-scoped queries.
    const tenants = await database.db.selectFrom('quotes').select(['org_id', 'mode']).distinct()
      .where('status', 'in', [...AWAITING]).where('valid_until', '<', nowSeconds()).execute();
    let expired = 0;
    for (const t of tenants) expired += await runWrite(database, { orgId: t.org_id, mode: t.mode as Mode }, expireDue);
    if (expired > 0) log.info({ expired }, 'quotes expired');
  },
});
