// The public page of a sent quote (`GET /q/{token}`): server-rendered HTML with its styles and one
// small script inline, no external asset. Every value from the quote is escaped. The answer forms
// post to the public JSON endpoints (the script sends them as JSON and reloads the page); the
// Content-Security-Policy allows exactly this style, this script and requests to this origin.
import { createHash } from 'node:crypto';
import { pageHeaders } from '../../platform/public/pages.ts';
import type { PublicQuote } from './public-view.ts';

const STYLE = `
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1c2430;background:#f4f6f8}
main{max-width:46rem;margin:2rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.08)}
h1{margin:.2rem 0 .5rem;font-size:1.6rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.seller,.meta{margin:0;color:#4a5563}
.status{display:inline-block;margin:.8rem 0;padding:.3rem .7rem;border-radius:4px;background:#e8eef6;font-weight:600}
.status-accepted{background:#dff3e4;color:#14532d}.status-declined,.status-void,.status-expired{background:#fbe4e4;color:#7f1d1d}
table{width:100%;border-collapse:collapse;margin-top:1rem}caption{text-align:left;font-weight:600;padding-bottom:.4rem}
th,td{padding:.45rem .4rem;border-bottom:1px solid #e3e7ec;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}td small{display:block;color:#4a5563}
tfoot th{font-weight:400}tfoot tr.total th,tfoot tr.total td{font-weight:700;font-size:1.1rem;border-bottom:none}
.terms{white-space:pre-wrap}
form{margin-top:1rem;padding:1rem;border:1px solid #e3e7ec;border-radius:6px}
label{display:block;font-weight:600;margin-bottom:.3rem}
input,textarea{box-sizing:border-box;width:100%;padding:.5rem;font:inherit;border:1px solid #9aa5b1;border-radius:4px}
button{margin-top:.7rem;padding:.55rem 1.2rem;font:inherit;font-weight:600;border:0;border-radius:4px;color:#fff;background:#1d4ed8;cursor:pointer}
button.secondary{background:#4a5563}button:disabled{opacity:.6}
button:focus-visible,input:focus-visible,textarea:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.error{color:#7f1d1d;font-weight:600}
`;

const SCRIPT = `
for (const form of document.querySelectorAll('form[data-answer]')) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = form.querySelector('button');
    const error = document.getElementById('answer-error');
    button.disabled = true;
    error.textContent = '';
    try {
      const res = await fetch(form.action, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(Object.fromEntries(new FormData(form))) });
      if (res.ok) return location.reload();
      const problem = await res.json().catch(() => ({}));
      error.textContent = typeof problem.detail === 'string' ? problem.detail : 'Please check the form and try again.';
    } catch {
      error.textContent = 'Your answer could not be sent. Please try again.';
    }
    button.disabled = false;
  });
}
`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** What the page may load and where it may send: its own inline style and script, this origin. */
export const PAGE_CSP = [
  "default-src 'none'", `style-src ${hash(STYLE)}`, `script-src ${hash(SCRIPT)}`, "connect-src 'self'",
  "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'",
].join('; ');

/** The headers of the page (and of its 404 page): the public surface's, with this policy. */
export const PAGE_HEADERS = pageHeaders(PAGE_CSP);

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** Integer minor units as money of `currency`, exactly (the digits are placed, never divided). */
export function formatMoney(amount: number, currency: string): string {
  const format = new Intl.NumberFormat('en', { style: 'currency', currency });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  const text = String(Math.abs(amount)).padStart(digits + 1, '0');
  const decimal = digits > 0 ? `${text.slice(0, -digits)}.${text.slice(-digits)}` : text;
  return format.format(`${amount < 0 ? '-' : ''}${decimal}` as unknown as number);
}

const when = (seconds: number) => `${new Intl.DateTimeFormat('en', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(seconds * 1000)} UTC`;

function statusLine(q: PublicQuote): string {
  switch (q.status) {
    case 'accepted': return `Accepted by ${q.signer_name ?? ''} on ${when(q.accepted_at ?? 0)}`;
    case 'declined': return `Declined on ${when(q.declined_at ?? 0)}`;
    case 'expired': return `This quote expired on ${when(q.valid_until ?? 0)}`;
    case 'void': return 'This quote was withdrawn by the seller';
    default: return 'Awaiting your answer';
  }
}

function lineRows(q: PublicQuote): string {
  const money = (n: number) => escapeHtml(formatMoney(n, q.currency));
  return q.line_items.map((l) => `<tr><td>${escapeHtml(l.name)}${l.description ? `<small>${escapeHtml(l.description)}</small>` : ''}</td>`
    + `<td>${l.quantity}</td><td>${money(l.unit_price)}</td><td>${l.discount_percent ? `${l.discount_percent}%` : '—'}</td><td>${money(l.total)}</td></tr>`).join('\n');
}

function totalRows(q: PublicQuote): string {
  const row = (label: string, amount: number, id: string, css = '') => `<tr${css}><th scope="row" colspan="4">${label}</th><td id="${id}">${escapeHtml(formatMoney(amount, q.currency))}</td></tr>`;
  return [
    row('Subtotal', q.subtotal, 'subtotal'),
    q.discount_total ? row('Discounts', -q.discount_total, 'discounts') : '',
    q.tax_percent ? row(`Tax (${q.tax_percent}%)`, q.tax_total, 'tax') : '',
    row('Total', q.total, 'total', ' class="total"'),
  ].join('\n');
}

function answerForms(q: PublicQuote, token: string): string {
  if (q.status !== 'sent' && q.status !== 'viewed') return '';
  const action = (what: string) => `/v1/public/quotes/${encodeURIComponent(token)}/${what}`;
  return `<section aria-labelledby="answer-title">
<h2 id="answer-title">Your answer</h2>
<form data-answer method="post" action="${action('accept')}">
<label for="signer">Your full name</label>
<input id="signer" name="name" required maxlength="200" autocomplete="name">
<button type="submit">Accept quote</button>
</form>
<form data-answer method="post" action="${action('decline')}">
<label for="reason">Reason for declining (optional)</label>
<textarea id="reason" name="reason" maxlength="2000" rows="2"></textarea>
<button type="submit" class="secondary">Decline quote</button>
</form>
<p id="answer-error" class="error" role="alert"></p>
<noscript><p>Answering needs JavaScript; please enable it or contact the seller.</p></noscript>
</section>
<script>${SCRIPT}</script>`;
}

const page = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;

export function quotePage(q: PublicQuote, token: string): string {
  const validity = q.valid_until === null ? '' : ` · valid until ${escapeHtml(when(q.valid_until))}`;
  return page(`Quote ${escapeHtml(q.number)} – ${escapeHtml(q.title)}`, `<header>
<p class="seller">${escapeHtml(q.seller)}</p>
<h1>${escapeHtml(q.title)}</h1>
<p class="meta">Quote ${escapeHtml(q.number)} · revision ${q.revision}${validity}</p>
<p id="status" class="status status-${q.status}" role="status">${escapeHtml(statusLine(q))}</p>
</header>
<table>
<caption>Line items</caption>
<thead><tr><th scope="col">Item</th><th scope="col">Quantity</th><th scope="col">Unit price</th><th scope="col">Discount</th><th scope="col">Amount</th></tr></thead>
<tbody>
${lineRows(q)}
</tbody>
<tfoot>
${totalRows(q)}
</tfoot>
</table>
${q.terms ? `<section aria-labelledby="terms-title"><h2 id="terms-title">Terms</h2><p class="terms">${escapeHtml(q.terms)}</p></section>` : ''}
${answerForms(q, token)}`);
}

/** The page of a link that names no quote (unknown, or of an earlier revision). */
export const missingPage = () => page('Quote not found', `<h1>Quote not found</h1>
<p>This link does not lead to a quote: it may be mistyped, or the seller has since revised the quote and sent a new link.</p>`);
