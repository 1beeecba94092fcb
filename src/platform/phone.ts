// Phone numbers are stored and sent in E.164 (`+442079460000`), however people wrote them: one
// reading for contacts, suppressions, inbound texts and the senders. Parsing is libphonenumber-js's
// with its `min` metadata (about 80 kB): a number is valid when its country code, length and
// leading digits fit its country's plan. The digit patterns of the full metadata are left out on
// purpose: they age as carriers open new ranges, and a stale copy would refuse real numbers.
import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/min';

/** A number in E.164 form, or why the text is not one (a field error's `msg`). */
export type PhoneReading = { e164: string } | { problem: string };

/** True for a region code the parser knows (ISO 3166-1 alpha-2, upper-case: `GB`, `US`). */
export const isPhoneRegion = (code: string): boolean => /^[A-Z]{2}$/.test(code) && isSupportedCountry(code);

/** Whether reading `written` depends on a default region: it does not start with `+`. */
export const needsRegion = (written: string): boolean => !written.trim().startsWith('+');

/**
 * Reads a written number (`+44 20 7946 0000`, `+1 (415) 555-0100`, `0044 20 7946 0000`) as E.164.
 * With `region`, a national number (`020 7946 0000`) is read in that country, and so is its own
 * international prefix (`00` in GB, `011` in US); without one, only international numbers are, a
 * leading `00` (the prefix of most countries) standing for `+`.
 */
export function readPhone(written: string, region?: string | null): PhoneReading {
  let text = written.trim();
  if (!region && text.startsWith('00')) text = `+${text.slice(2)}`;
  if (!region && !text.startsWith('+')) {
    return { problem: 'value is not a phone number in international form: write it with its country code (+44 20 7946 0000), or set the organization\'s phone_region' };
  }
  // Strict: the text must be the number, not a sentence holding one.
  const parsed = parsePhoneNumberFromString(text, { defaultCountry: (region ?? undefined) as CountryCode | undefined, extract: false });
  if (!parsed) return { problem: 'value is not a phone number' };
  if (!parsed.isValid()) return { problem: 'value is not a valid phone number: its length or first digits fit no numbering plan of its country' };
  // E.164 has no room for one, and dropping it would lose what was written.
  if (parsed.ext) return { problem: 'value has an extension, which E.164 cannot hold' };
  return { e164: parsed.number };
}

/** The E.164 form of `written`, or undefined when it is none (no country code and no region, or invalid). */
export function e164Of(written: string, region?: string | null): string | undefined {
  const reading = readPhone(written, region);
  return 'e164' in reading ? reading.e164 : undefined;
}
