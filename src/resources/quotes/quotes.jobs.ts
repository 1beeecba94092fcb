// The scheduled expiry of one quote (expiry.ts): records it expired, with `quote.expired`, if it
// still waits for an answer once its date has passed.
import type { Mode } from '../../db/schema.ts';
import { defineJobKind } from '../../platform/jobs/kinds.ts';
import { performAction } from '../../platform/resource/lifecycle.ts';
import { findRow } from '../../platform/resource/store.ts';
import { runWrite, type WriteContext } from '../../platform/write.ts';
import { EXPIRY, scheduleExpiry, type ExpiryPayload } from './expiry.ts';
import { quotes } from './quotes.resource.ts';
import type { QuoteState } from './quotes.schemas.ts';
import { AWAITING } from './quotes.store.ts';

/** Records the expiry of the quote if it is due; a job run early (another process's clock) is due again at the date. */
export async function expireIfDue(w: WriteContext, id: string): Promise<boolean> {
  const row = await findRow(quotes, w.tx, w.dialect, w.scope, id);
  // Answered, voided, revised or deleted since: nothing to record (those cancel the job; a job runs at least once).
  if (!row || !AWAITING.includes(row.status as QuoteState) || row.valid_until === null) return false;
  if (Number(row.valid_until) >= w.now) {
    scheduleExpiry(w, id, row.valid_until);
    return false;
  }
  await performAction(quotes, w, row, 'expire');
  return true;
}

export const quoteExpiry = defineJobKind<ExpiryPayload>({
  ...EXPIRY,
  async run({ quote_id: id }, { database, job }) {
    if (!id) return; // a job of the every-minute sweep this replaced, queued before the upgrade
    await runWrite(database, { orgId: job.orgId, mode: job.mode as Mode }, (w) => expireIfDue(w, id));
  },
});
