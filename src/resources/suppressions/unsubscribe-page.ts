// The pages of an unsubscribe link (`/public/unsubscribe/{token}`): the confirmation a person opens
// from a message, whose button POSTs the same form a mail provider's one-click unsubscribe sends
// (`List-Unsubscribe=One-Click`, RFC 8058), and the page that says it is done. Plain HTML with its
// style inline: no script, no external asset, under a Content-Security-Policy that allows only that
// style and forms posted to this origin. Every value shown is escaped.
import { createHash } from 'node:crypto';
import { escapeHtml, pageHeaders } from '../../platform/public/pages.ts';

const STYLE = `
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1c2430;background:#f4f6f8}
main{max-width:32rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.08)}
h1{margin:0 0 .8rem;font-size:1.4rem}p{margin:.6rem 0}.address{font-weight:600;word-break:break-all}
button{margin-top:1rem;padding:.6rem 1.3rem;font:inherit;font-weight:600;border:0;border-radius:4px;color:#fff;background:#1d4ed8;cursor:pointer}
button:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The pages' headers: the public surface's, with a policy allowing this style and forms posted here. */
export const PAGE_HEADERS = pageHeaders([
  "default-src 'none'", `style-src ${hash(STYLE)}`, "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'",
].join('; '));

/** What a page says about the link: who sends, to which address, on which channel. */
export interface LinkView {
  sender: string;
  channel: string;
  address: string;
}

const WHAT: Record<string, string> = { email: 'e-mails', sms: 'text messages', phone: 'calls' };
const from = (v: LinkView) => (v.sender ? ` from ${escapeHtml(v.sender)}` : '');

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

/** The confirmation: opening it changes nothing (link scanners open every link); the button unsubscribes. */
export const confirmPage = (v: LinkView, action: string) => page('Unsubscribe', `<h1>Unsubscribe</h1>
<p>Stop ${WHAT[v.channel] ?? 'messages'}${from(v)} to <span class="address">${escapeHtml(v.address)}</span>?</p>
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button>
</form>`);

/** The answer of the button, and the page of a link whose address is unsubscribed already. */
export const donePage = (v: LinkView) => page('Unsubscribed', `<h1 role="status">You are unsubscribed</h1>
<p><span class="address">${escapeHtml(v.address)}</span> will receive no more ${WHAT[v.channel] ?? 'messages'}${from(v)}.</p>`);

/** The page of a token that names no link. */
export const missingPage = () => page('Link not found', `<h1>Link not found</h1>
<p>This unsubscribe link is not known: it may be mistyped or incomplete. Please open it again from the message.</p>`);
