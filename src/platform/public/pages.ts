// Headers of the HTML pages of the public surface (a quote's page; next booking pages, forms): the
// page's own Content-Security-Policy, no content sniffing, no Referer (a link's token is in the URL
// and must not leave with it), never cached (a page shows a record as it is now), and no cookies: no
// page of the surface sets one.
export const pageHeaders = (contentSecurityPolicy: string): Record<string, string> => ({
  'content-security-policy': contentSecurityPolicy, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'cache-control': 'no-store',
});

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text made safe to put in a page's HTML (element content or a quoted attribute). */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
