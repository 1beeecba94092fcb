// The expiry of a quote as scheduled work: one job per quote sent with a `valid_until`, due the
// second after it (a quote is expired once its date has passed), under the quote's key, so that an
// answer, a void or a revision cancels it and a new send schedules it again. The job records the
// expiry (status and `quote.expired`); reads show it from that second on whether the job has run
// or not (`stateAt`, quotes.store.ts), so a worker's delay never shows a lapsed quote as open.
import type { WriteContext } from '../../platform/write.ts';

export interface ExpiryPayload {
  quote_id: string;
}

/** The job kind by name: its handler (quotes.jobs.ts) takes the lifecycle that schedules it. */
export const EXPIRY = { name: 'quotes.expire' } as const;

const keyOf = (quoteId: string) => `quote.expiry:${quoteId}`;

/** Schedules the expiry of a quote (replacing any), or cancels it when the quote has no date. */
export function scheduleExpiry(w: WriteContext, quoteId: string, validUntil: unknown): void {
  if (validUntil === null || validUntil === undefined) return cancelExpiry(w, quoteId);
  w.schedule<ExpiryPayload>(keyOf(quoteId), EXPIRY, { quote_id: quoteId }, (Number(validUntil) + 1) * 1000);
}

export const cancelExpiry = (w: WriteContext, quoteId: string): void => w.cancel(keyOf(quoteId));
