// What the service stores as a link a person may open (a LinkedIn URL, a custom `url` field): an
// absolute http(s) URL. The WHATWG parser alone is too lenient for that: it drops leading spaces,
// tabs and newlines anywhere (` javascript:…` and `java\nscript:…` parse as `javascript:`) and
// takes `http:host` without slashes. So the text itself must start with `http://` or `https://`
// (in any case) and hold no white space or control character, and then parse with a host.
const SHAPE = /^https?:\/\/[^\s\p{Cc}\p{Cf}]+$/iu;

/** The JSON Schema `format` of such a value (registered with the request validator, validation.ts). */
export const HTTP_URL = 'http-url';

/** Refusal of a value that is not an absolute http(s) URL, as the API words it. */
export const NOT_HTTP_URL = 'value is not an absolute http:// or https:// URL';

export function isHttpUrl(value: string): boolean {
  if (!SHAPE.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}
