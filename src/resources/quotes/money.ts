// Exact quote arithmetic. Quantities and percentages are decimals of at most 4 places, held as
// integer ten-thousandths (BigInt), prices and totals integer minor units; nothing passes through a
// binary fraction, and each amount is rounded once, half to even, from its exact value.

/** Decimal places a quantity or a percentage may have. */
export const DECIMALS = 4;
const SCALE = 10n ** BigInt(DECIMALS);
const HUNDRED_PERCENT = 100n * SCALE;

/** A JSON number as ten-thousandths, or null when it has more than 4 decimal places (or is negative). */
export function toScaled(value: number): bigint | null {
  // The shortest text that reads back as the same double: what the client wrote (0.1 → "0.1").
  const match = /^(\d+)(?:\.(\d+))?$/.exec(String(value));
  if (!match || (match[2] ?? '').length > DECIMALS) return null;
  return BigInt(match[1]) * SCALE + BigInt((match[2] ?? '').padEnd(DECIMALS, '0'));
}

/** n / d rounded to the nearest integer, halves to the even neighbour (n ≥ 0, d > 0). */
export function divideHalfEven(n: bigint, d: bigint): bigint {
  const q = n / d;
  const twice = 2n * (n % d);
  if (twice > d || (twice === d && q % 2n === 1n)) return q + 1n;
  return q;
}

export interface LineAmounts {
  /** quantity × unit_price, rounded. */
  subtotal: bigint;
  /** quantity × unit_price × (1 − discount/100), rounded. */
  total: bigint;
}

/** The amounts of one line: each rounded once from its exact value. */
export function lineAmounts(quantity: bigint, unitPrice: bigint, discount: bigint): LineAmounts {
  const gross = quantity * unitPrice;
  return {
    subtotal: divideHalfEven(gross, SCALE),
    total: divideHalfEven(gross * (HUNDRED_PERCENT - discount), SCALE * HUNDRED_PERCENT),
  };
}

/** Tax on the discounted sum of the lines, rounded once. */
export const taxOn = (taxable: bigint, taxPercent: bigint): bigint => divideHalfEven(taxable * taxPercent, HUNDRED_PERCENT);
