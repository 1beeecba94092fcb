// Company domains are compared exactly, so every write and filter stores or looks up the same form:
// lower-case host name only, whatever URL-ish text the client had at hand.

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/** `https://www.Example.com/about` → `example.com`; null when the text is not a domain. */
export function normalizeDomain(text: string): string | null {
  let host = text.trim().toLowerCase().replace(SCHEME, '').replace(/^\/\//, '');
  host = host.split(/[/?#]/, 1)[0].replace(/:\d+$/, '').replace(/\.$/, '');
  if (host.startsWith('www.')) host = host.slice(4);
  return DOMAIN.test(host) ? host : null;
}
