// A sending domain's name as stored and compared: a host name of two labels or more, lower-cased,
// in its ASCII form (an internationalized name becomes punycode), without the trailing dot of a
// fully qualified name. Addresses and single labels are refused: none of the records the service
// asks for could be published under them.
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { validationError } from '../../platform/errors.ts';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const INVALID = 'domain is not a valid host name (labels of letters, digits and hyphens, 1-63 characters each)';

/** The stored form of `raw`, or why it cannot be a sending domain. */
export function parseDomain(raw: string): { domain: string } | { refusal: string } {
  const trimmed = raw.trim().replace(/\.$/, '');
  if (isIP(trimmed) !== 0 || isIP(trimmed.replace(/^\[|\]$/g, '')) !== 0) return { refusal: 'domain must be a domain name, not an IP address' };
  if (trimmed.includes('..') || /[\s/@:[\]\\]/.test(trimmed)) return { refusal: INVALID };
  // Lower-cases, maps Unicode to punycode (IDNA); '' for what it cannot map.
  const ascii = domainToASCII(trimmed);
  if (ascii === '') return { refusal: INVALID };
  if (/^[\d.]+$/.test(ascii)) return { refusal: 'domain must be a domain name, not an IP address' };
  if (ascii.length > 253) return { refusal: 'domain is longer than 253 characters' };
  const labels = ascii.split('.');
  if (labels.length < 2) return { refusal: 'domain must have at least two labels (example.com), not a single name' };
  if (!labels.every((l) => LABEL.test(l))) return { refusal: INVALID };
  if (/^\d+$/.test(labels[labels.length - 1])) return { refusal: 'domain must end in a top-level domain, not a number' };
  return { domain: ascii };
}

/** The stored form of the `domain` of a request body, or 422 saying what is wrong with it. */
export function checkedDomain(raw: string): string {
  const parsed = parseDomain(raw);
  if ('refusal' in parsed) throw validationError([{ loc: ['body', 'domain'], msg: parsed.refusal, type: 'value_error.domain' }]);
  return parsed.domain;
}

/** The domain of an e-mail address or a bare domain, in its stored form; undefined when it is none. */
export function domainOf(addressOrDomain: string): string | undefined {
  const parsed = parseDomain(addressOrDomain.slice(addressOrDomain.lastIndexOf('@') + 1));
  return 'domain' in parsed ? parsed.domain : undefined;
}
