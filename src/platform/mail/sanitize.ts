// HTML of inbound mail, made safe to show (an API client's page, the dashboard): sanitize-html keeps
// the tags and attributes of formatted mail and drops scripts, styles, event handlers, forms and
// frames; links keep http(s) and mailto only and open apart (`noopener noreferrer`); images load
// only over https (a `cid:` or `data:` source is dropped). Markup nested deeper than any real mail
// is refused before parsing, whose cost grows with the square of the depth: its text stands instead.
import sanitize from 'sanitize-html';

const MAX_DEPTH = 400;
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
// Closed implicitly by their next sibling: an unclosed run of them does not nest.
const IMPLIED_END = new Set(['p', 'li', 'dt', 'dd', 'option', 'tr', 'td', 'th', 'thead', 'tbody', 'tfoot']);

/** Whether elements open deeper than `max` (opened minus closed at any point), in one pass. */
export function nestsDeeperThan(html: string, max: number): boolean {
  let depth = 0;
  for (const match of html.matchAll(/<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)[^>]*?(\/?)>/g)) {
    const name = match[2].toLowerCase();
    if (VOID.has(name) || IMPLIED_END.has(name) || match[3]) continue;
    depth = match[1] ? Math.max(0, depth - 1) : depth + 1;
    if (depth > max) return true;
  }
  return false;
}

const OPTIONS: sanitize.IOptions = {
  allowedTags: [...sanitize.defaults.allowedTags, 'img', 'font', 'center'],
  allowedAttributes: {
    a: ['href', 'title', 'rel', 'target'],
    img: ['src', 'alt', 'width', 'height'],
    td: ['colspan', 'rowspan', 'align', 'valign', 'width'],
    th: ['colspan', 'rowspan', 'align', 'valign', 'width'],
    table: ['width', 'border', 'cellpadding', 'cellspacing'],
    font: ['color', 'size'],
    '*': ['dir', 'lang'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['https'] },
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nestingLimit: MAX_DEPTH,
  transformTags: { a: sanitize.simpleTransform('a', { rel: 'noopener noreferrer', target: '_blank' }) },
};

/** The HTML with only what is safe to show; null when it nests too deeply to parse safely. */
export function sanitizeHtml(html: string): string | null {
  if (nestsDeeperThan(html, MAX_DEPTH)) return null;
  return sanitize(html, OPTIONS);
}
