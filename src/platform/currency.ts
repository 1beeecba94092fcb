// ISO 4217 currency codes of money fields: stored upper-case, anything else is 422.
import { validationError } from './errors.ts';

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** True for an ISO 4217 code (upper-case). */
export const isCurrency = (code: string): boolean => CURRENCIES.has(code);

/** Upper-cases `row.currency` when the write sets it; 422 on `body.currency` when it is not ISO 4217. */
export function normalizeCurrency(row: Record<string, unknown>): void {
  if (typeof row.currency !== 'string') return;
  row.currency = row.currency.toUpperCase();
  if (!isCurrency(row.currency as string)) throw validationError([{ loc: ['body', 'currency'], msg: 'value is not an ISO 4217 currency code', type: 'value_error.currency' }]);
}
